"""The approved decision keeps watching: its due dates, and what happens to the providers it chose.

Conditions and risk acceptances with a date become due items (on the dashboard, and as change events at 30
and 7 days before and on the day they lapse); a decision past its term is due for re-approval. A bad change
of an approved provider (a new failing finding, a measurement below its claim, an expiring licence) is
repeated as a change event naming the decision, so its watchers hear "approved provider now ...".
Every event has a dedupe key, so the daily watch and repeated changes record each stage once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlmodel import Session, col, select

from app.cases import decisions
from app.core import clock
from app.core.events import ChangesRecorded, DayStarted, subscribe
from app.credentials.watch import EventDraft, store_events, threshold_stage
from app.models.decisions import Decision, DecisionCondition, DecisionState, RiskAcceptance
from app.models.watch import ChangeEvent

DUE_THRESHOLDS = (30, 7)  # days before a date: each crossed once, then "expired" on the day after
WATCHED_KIND = "approved_provider"  # the change events this module writes (never watched again)
BAD_KINDS = {"finding_added", "severity_changed", "verdict_changed", "expiring", "expired"}
BAD_SEVERITIES = {"blocker", "warning"}

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class DueItem:
    """One dated duty of an approved decision: a condition, a risk acceptance, or the decision's own term."""

    decision_id: int
    case_id: int
    provider_ids: tuple[int, ...]
    kind: str  # "condition", "acceptance" or "term"
    record_id: int
    text: str
    due_on: date
    days_left: int

    @property
    def lapsed(self) -> bool:
        """Past its date: a lapsed acceptance or term means the decision needs re-approval."""
        return self.days_left < 0


def approved_decisions(session: Session) -> list[Decision]:
    """Every approved decision, newest first (few: one per procurement)."""
    statement = select(Decision).where(Decision.state == DecisionState.approved)
    return list(session.exec(statement.order_by(col(Decision.id).desc())).all())


def in_term(decision: Decision, today: date) -> bool:
    """Approved and not past its term."""
    return decision.state == DecisionState.approved and (
        decision.valid_until is None or decision.valid_until >= today
    )


def due_items(session: Session, *, today: date | None = None, horizon_days: int = 30) -> list[DueItem]:
    """Open conditions, risk acceptances and terms of approved decisions due within the horizon or lapsed."""
    today = today or clock.business_today()
    decisions = {d.id: d for d in approved_decisions(session)}
    if not decisions:
        return []
    items = [
        _item(decisions[c.decision_id], "condition", c.id, c.text, c.due_on, today)
        for c in session.exec(
            select(DecisionCondition).where(
                col(DecisionCondition.decision_id).in_(decisions),
                col(DecisionCondition.due_on).is_not(None),
                col(DecisionCondition.met_at).is_(None),
            )
        ).all()
    ]
    items += [
        _item(decisions[a.decision_id], "acceptance", a.id, a.message_zh or a.rule_id, a.until, today)
        for a in session.exec(
            select(RiskAcceptance).where(col(RiskAcceptance.decision_id).in_(decisions))
        ).all()
    ]
    items += [
        _item(d, "term", d.id, d.scope, d.valid_until, today) for d in decisions.values() if d.valid_until
    ]
    return sorted(
        (item for item in items if item.days_left <= horizon_days), key=lambda i: (i.due_on, i.decision_id)
    )


def _item(decision: Decision, kind: str, record_id: Any, text: str, due_on: Any, today: date) -> DueItem:
    return DueItem(
        decision_id=int(decision.id or 0),
        case_id=decision.case_id,
        provider_ids=tuple(decision.provider_ids),
        kind=kind,
        record_id=int(record_id or 0),
        text=text,
        due_on=due_on,
        days_left=(due_on - today).days,
    )


def needs_reapproval(session: Session, decision: Decision, *, today: date | None = None) -> bool:
    """Approved, but past its term or with a lapsed risk acceptance: never silently valid."""
    acceptances = decisions.acceptances_of(session, decision.id) if decision.id else []
    return decisions.effective_state(decision, today, acceptances) == decisions.NEEDS_REAPPROVAL


KIND_NAMES = {
    "condition": ("条件", "condition"),
    "acceptance": ("风险接受", "risk acceptance"),
    "term": ("采购决定有效期", "decision term"),
}


def _due_draft(item: DueItem, stage: str) -> EventDraft:
    zh, en = KIND_NAMES[item.kind]
    number, due_on, days = item.decision_id, item.due_on, item.days_left
    if stage != "expired":
        kind, severity = "decision_due", "warning" if int(stage) <= 7 else "info"
        message_zh = f"采购决定 #{number} 的{zh}将于 {due_on} 到期（还剩 {days} 天）：{item.text}"
        message_en = f"Decision #{number}: the {en} is due on {due_on} ({days} days left): {item.text}"
    elif item.kind == "condition":  # overdue: the decision itself still holds
        kind, severity = "decision_lapsed", "warning"
        message_zh = f"采购决定 #{number} 的条件已于 {due_on} 到期，尚未完成：{item.text}"
        message_en = f"Decision #{number}: the condition was due on {due_on} and is not met: {item.text}"
    else:
        kind, severity = "decision_lapsed", "blocker"
        message_zh = f"采购决定 #{number} 的{zh}已于 {due_on} 到期，需重新审批：{item.text}"
        message_en = f"Decision #{number}: the {en} lapsed on {due_on}; re-approval needed: {item.text}"
    subject = f"decision:{number}:{item.kind}:{item.record_id}"
    details = {"decision_id": number, "due_on": due_on.isoformat(), "days_left": days}
    return EventDraft(kind, subject, stage, severity, message_zh, message_en, details)


def watch_due(session: Session, *, today: date) -> int:
    """Change events for due items that reached a threshold or lapsed; each stage once."""
    rows = []
    for item in due_items(session, today=today, horizon_days=max(DUE_THRESHOLDS)):
        stage = threshold_stage(item.days_left, DUE_THRESHOLDS)
        if stage is None:
            continue
        draft = _due_draft(item, stage)
        for provider_id in item.provider_ids:
            rows.append((provider_id, draft, f"{draft.subject}:{item.due_on.isoformat()}:{stage}"))
    return store_events(session, rows, occurred_on=today)


@subscribe(DayStarted)
def watch_due_daily(session: Session, event: DayStarted) -> int:
    """The daily watch: due items of approved decisions."""
    return watch_due(session, today=event.today)


def _bad(event: ChangeEvent) -> bool:
    return event.kind in BAD_KINDS and event.severity in BAD_SEVERITIES


def approved_changes(session: Session, event_ids: Iterable[int], *, today: date | None = None) -> int:
    """Repeat bad changes of providers with an approved, in-term decision as events naming the decision."""
    ids = list(event_ids)
    if not ids:
        return 0
    today = today or clock.business_today()
    events = [
        e
        for e in session.exec(select(ChangeEvent).where(col(ChangeEvent.id).in_(ids))).all()
        if e.kind != WATCHED_KIND and _bad(e)
    ]
    if not events:
        return 0
    chosen: dict[int, list[Decision]] = {}
    for decision in approved_decisions(session):
        if in_term(decision, today):
            for provider_id in decision.provider_ids:
                chosen.setdefault(provider_id, []).append(decision)
    rows = [
        (event.provider_id, _approved_draft(event, decision), f"approved:{decision.id}:event:{event.id}")
        for event in events
        for decision in chosen.get(event.provider_id, [])
    ]
    return store_events(session, rows, occurred_on=today) if rows else 0


def _approved_draft(event: ChangeEvent, decision: Decision) -> EventDraft:
    return EventDraft(
        WATCHED_KIND,
        f"decision:{decision.id}",
        f"event:{event.id}",
        event.severity,
        f"已批准的供应商现在：{event.message_zh}（采购决定 #{decision.id}）",
        f"Approved provider now: {event.message_en} (decision #{decision.id})",
        {"decision_id": decision.id, "case_id": decision.case_id, "event_id": event.id},
    )


@subscribe(ChangesRecorded)
def watch_approved_providers(session: Session, event: ChangesRecorded) -> int:
    """Changes were recorded: those of approved providers are repeated naming their decision."""
    try:
        return approved_changes(session, event.event_ids)
    except Exception:  # the watch must never break the change it heard of
        session.rollback()
        logger.exception("the approved-provider watch of change events %s failed", list(event.event_ids)[:20])
        return 0
