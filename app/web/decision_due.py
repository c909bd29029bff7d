"""The duties of approved decisions falling due: conditions, risk acceptances and terms (dashboard list)."""

from __future__ import annotations

from typing import Any

from flask import render_template
from flask_babel import lazy_gettext as _l
from sqlmodel import col, select

from app.accounts.auth import role_required
from app.cases import decision_watch
from app.core import clock
from app.core.db import get_session
from app.models.enums import Role
from app.models.provider import Provider
from app.web import bp

HORIZON_DAYS = 30
DUE_SHOWN = 5  # on the dashboard; the list shows all
DUE_KIND_LABELS = {
    "condition": _l("条件"),
    "acceptance": _l("风险接受"),
    "term": _l("决定有效期"),
}


def due_rows(session: Any, *, horizon_days: int = HORIZON_DAYS) -> list[dict[str, Any]]:
    """The due items with their providers' names, lapsed first."""
    items = decision_watch.due_items(session, today=clock.business_today(), horizon_days=horizon_days)
    ids = {provider_id for item in items for provider_id in item.provider_ids}
    names = dict(
        session.exec(select(Provider.id, Provider.legal_name).where(col(Provider.id).in_(ids))).all()
    )
    return [
        {"item": item, "providers": [(pid, names.get(pid, f"#{pid}")) for pid in item.provider_ids]}
        for item in items
    ]


@bp.get("/decisions/due")
@role_required(Role.viewer)
def decisions_due() -> Any:
    """Conditions, risk acceptances and decision terms due within 30 days or lapsed."""
    return render_template(
        "dashboard/decisions_due.html",
        rows=due_rows(get_session()),
        kinds=DUE_KIND_LABELS,
        horizon_days=HORIZON_DAYS,
    )
