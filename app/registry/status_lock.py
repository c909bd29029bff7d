"""The provider status an approved procurement decision set: not editable by hand while the decision is in
its term (app.cases.decisions sets it on approval)."""

from __future__ import annotations

from datetime import date

from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.core import clock
from app.core.errors import InvalidInput
from app.models.decisions import Decision, DecisionState


def approved_decision(session: Session, provider_id: int, today: date | None = None) -> Decision | None:
    """The latest approved decision in its term that chose the provider, if any."""
    today = today or clock.business_today()
    statement = (
        select(Decision)
        .where(Decision.state == DecisionState.approved, col(Decision.valid_until) >= today)
        .order_by(col(Decision.id).desc())
    )
    return next((found for found in session.exec(statement) if provider_id in found.provider_ids), None)


def check_status_change(session: Session, provider_id: int, old: str, new: str) -> None:
    """Refuse a hand change of the status of a provider an approved, in-term decision chose."""
    if str(old) == str(new):
        return
    decision = approved_decision(session, provider_id)
    if decision is not None:
        raise InvalidInput(
            _(
                "该供应商的状态由采购决定 #%(id)s 批准（有效期至 %(until)s），不能手动修改",
                id=decision.id,
                until=decision.valid_until.isoformat() if decision.valid_until else "",
            ),
            field="status",
        )
