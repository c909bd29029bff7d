"""The lists behind the dashboard's figures that had no page of their own: change events, lookups across
providers, benchmark runs, report exports and credentials by expiry stage. Each filter is validated and a
bad value is an InvalidInput naming the parameter and what it accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.core import clock
from app.core.errors import FieldError, InvalidInput, not_one_of
from app.core.limits import MAX_ID
from app.models import Certification, Licence, Provider
from app.models.evidence import Lookup, LookupState
from app.models.trials import BenchRun, RunState
from app.models.watch import ChangeEvent
from app.registry.dashboard import ACTIVE_RUN_STATES, EXPIRY_STAGES, expiry_range

PER_PAGE = 30
MAX_DAYS = 3650
EVENT_KINDS = (
    "verdict_changed",
    "finding_added",
    "finding_cleared",
    "severity_changed",
    "expiring",
    "expired",
    "approved_provider",
    "decision_due",
    "decision_lapsed",
)


@dataclass
class ListPage:
    """One page of rows, and whether another follows."""

    rows: list[Any]
    page: int
    has_next: bool


def choice(params: dict[str, Any], name: str, allowed: tuple[str, ...]) -> str | None:
    """The parameter when it is one of `allowed` (empty: None); anything else names the accepted values."""
    value = (params.get(name) or "").strip()
    if not value:
        return None
    if value not in allowed:
        raise InvalidInput([not_one_of(name, allowed)])
    return value


def whole_number(params: dict[str, Any], name: str, *, low: int = 1, high: int = MAX_ID) -> int | None:
    """The parameter as a whole number from `low` to `high` (empty: None)."""
    value = (params.get(name) or "").strip()
    if not value:
        return None
    if not value.isdigit() or not low <= int(value) <= high:
        raise InvalidInput(_("须为 %(low)s-%(high)s 的整数", low=low, high=high), field=name)
    return int(value)


def parse_filters(params: dict[str, Any], parsers: dict[str, Any]) -> tuple[dict[str, Any], list[FieldError]]:
    """Run each parser on the parameters; invalid ones are left out and reported."""
    values: dict[str, Any] = {}
    errors: list[FieldError] = []
    for name, parse in parsers.items():
        try:
            values[name] = parse(params, name)
        except InvalidInput as exc:
            values[name] = None
            errors.extend(exc.errors)
    return values, errors


def _page(session: Session, statement: Any, page: int, per_page: int = PER_PAGE) -> ListPage:
    rows = list(session.exec(statement.offset((page - 1) * per_page).limit(per_page + 1)).all())
    return ListPage(rows=rows[:per_page], page=page, has_next=len(rows) > per_page)


def change_events(
    session: Session, *, kind: str | None = None, provider_id: int | None = None, page: int = 1
) -> ListPage:
    """Change events newest first, with their provider's name."""
    statement = select(ChangeEvent, Provider.legal_name).join(
        Provider, col(Provider.id) == ChangeEvent.provider_id
    )
    if kind:
        statement = statement.where(ChangeEvent.kind == kind)
    if provider_id:
        statement = statement.where(ChangeEvent.provider_id == provider_id)
    order = (col(ChangeEvent.created_at).desc(), col(ChangeEvent.id).desc())
    return _page(session, statement.order_by(*order), page)


def lookups(session: Session, *, state: str | None = None, page: int = 1) -> ListPage:
    """Official lookups of every provider, newest first."""
    statement = select(Lookup, Provider.legal_name).join(Provider, col(Provider.id) == Lookup.provider_id)
    if state:
        statement = statement.where(Lookup.state == state)
    return _page(session, statement.order_by(col(Lookup.id).desc()), page)


LOOKUP_STATES = tuple(state.value for state in LookupState)
RUN_STATES = ("active", *(state.value for state in RunState))


def bench_runs(
    session: Session, *, state: str | None = None, days: int | None = None, page: int = 1
) -> ListPage:
    """Benchmark runs newest first ("active": queued or running), optionally from the last `days` days."""
    statement = select(BenchRun, Provider.legal_name).join(Provider, col(Provider.id) == BenchRun.provider_id)
    if state == "active":
        statement = statement.where(col(BenchRun.state).in_(ACTIVE_RUN_STATES))
    elif state:
        statement = statement.where(BenchRun.state == state)
    if days:
        statement = statement.where(col(BenchRun.created_at) >= clock.now() - timedelta(days=days))
    return _page(session, statement.order_by(col(BenchRun.id).desc()), page)


@dataclass(frozen=True)
class ExpiringCredential:
    """A licence or certification with its expiry date, for the expiry list."""

    kind: str  # licence / certification
    record_id: int
    provider_id: int
    provider_name: str
    title: str  # the licence number, or the certification's own name ("" when only its kind names it)
    expires_on: date
    cert_kind: str | None = None
    level: int | None = None

    def days_left(self, today: date) -> int:
        """Days from `today` to the expiry date (negative once expired)."""
        return (self.expires_on - today).days


def expiring(session: Session, *, stage: str | None, today: date) -> list[ExpiringCredential]:
    """Licences and certifications in an expiry stage (None: every stage up to 90 days), soonest first."""
    if stage is None:
        first, last = None, today + timedelta(days=90)
    else:
        first, last = expiry_range(stage, today)
    found: list[ExpiringCredential] = []
    for model, kind in ((Licence, "licence"), (Certification, "certification")):
        conditions = [col(model.expires_on).is_not(None), col(model.expires_on) <= last]
        if first is not None:
            conditions.append(col(model.expires_on) >= first)
        rows = session.exec(
            select(model, Provider.legal_name)
            .join(Provider, col(Provider.id) == model.provider_id)
            .where(*conditions)
        ).all()
        for record, provider_name in rows:
            found.append(
                ExpiringCredential(
                    kind=kind,
                    record_id=record.id,
                    provider_id=record.provider_id,
                    provider_name=provider_name,
                    title=(record.number or record.number_raw) if kind == "licence" else (record.name or ""),
                    expires_on=record.expires_on,
                    cert_kind=_kind_value(record) if kind == "certification" else None,
                    level=getattr(record, "level", None),
                )
            )
    return sorted(found, key=lambda item: (item.expires_on, item.provider_name, item.record_id))


def _kind_value(record: Any) -> str:
    return str(getattr(record.kind, "value", record.kind))


STAGES = EXPIRY_STAGES
