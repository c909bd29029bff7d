"""Continuous vetting: change events from consecutive check runs, and the credential expiry watch.

Every event carries a unique dedupe key (the check run, or the credential, its expiry date and the threshold
crossed), so recording the same changes twice, or running the daily watch twice on one day, adds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from sqlmodel import Session, col, func, select

from app.core.db import insert_new_rows
from app.core.events import ChangesRecorded, publish
from app.models.checks import CheckRun, StoredFinding
from app.models.provider import Certification, Licence
from app.models.watch import ChangeEvent

EXPIRY_THRESHOLDS = (90, 30, 7)  # days before expiry; each crossed once, then "expired"
VERDICT_NAMES = {
    "pass": ("通过", "pass"),
    "needs_review": ("需复核", "needs review"),
    "fail": ("不通过", "fail"),
}
SEVERITY_NAMES = {"blocker": ("阻断", "blocker"), "warning": ("警告", "warning"), "info": ("提示", "info")}


@dataclass(frozen=True)
class EventDraft:
    """A change before it is stored: `key` makes it unique within its source (run or credential)."""

    kind: str
    subject: str
    key: str
    severity: str
    message_zh: str
    message_en: str
    details: dict[str, Any] = field(default_factory=dict)


def _names(table: dict[str, tuple[str, str]], value: str) -> tuple[str, str]:
    return table.get(value, (value, value))


def finding_changes(
    previous: Sequence[StoredFinding], current: Sequence[StoredFinding], before: str, after: str
) -> list[EventDraft]:
    """Findings added, cleared or changed in severity between two runs, and a changed verdict."""
    old = {(f.rule_id, f.subject): f for f in previous}
    new = {(f.rule_id, f.subject): f for f in current}
    drafts = []
    if before != after:
        (old_zh, old_en), (new_zh, new_en) = _names(VERDICT_NAMES, before), _names(VERDICT_NAMES, after)
        drafts.append(
            EventDraft(
                "verdict_changed",
                "",
                "verdict",
                "warning" if after != "pass" else "info",
                f"核查结论由“{old_zh}”变为“{new_zh}”",
                f"verdict changed from {old_en} to {new_en}",
                {"before": before, "after": after},
            )
        )
    for key in sorted(new.keys() - old.keys()):
        finding = new[key]
        drafts.append(
            EventDraft(
                "finding_added",
                _subject(key),
                f"added:{_subject(key)}",
                finding.severity,
                f"新发现：{finding.message_zh}",
                f"new finding: {finding.message_en}",
                {"rule_id": key[0]},
            )
        )
    for key in sorted(old.keys() - new.keys()):
        finding = old[key]
        drafts.append(
            EventDraft(
                "finding_cleared",
                _subject(key),
                f"cleared:{_subject(key)}",
                "info",
                f"已消除：{finding.message_zh}",
                f"cleared: {finding.message_en}",
                {"rule_id": key[0]},
            )
        )
    for key in sorted(old.keys() & new.keys()):
        was, now = old[key].severity, new[key].severity
        if was != now:
            (was_zh, was_en), (now_zh, now_en) = _names(SEVERITY_NAMES, was), _names(SEVERITY_NAMES, now)
            drafts.append(
                EventDraft(
                    "severity_changed",
                    _subject(key),
                    f"severity:{_subject(key)}",
                    now,
                    f"严重程度由{was_zh}变为{now_zh}：{new[key].message_zh}",
                    f"severity changed from {was_en} to {now_en}: {new[key].message_en}",
                    {"rule_id": key[0], "before": was, "after": now},
                )
            )
    return drafts


def _subject(key: tuple[str, str]) -> str:
    rule_id, subject = key
    return f"{rule_id}:{subject}"[:120]


def _findings(session: Session, run_id: int) -> list[StoredFinding]:
    return list(session.exec(select(StoredFinding).where(StoredFinding.check_run_id == run_id)).all())


def record_check_changes(session: Session, run: CheckRun) -> int:
    """Store what changed since the provider's previous check run; returns how many events are new."""
    previous = session.exec(
        select(CheckRun)
        .where(CheckRun.provider_id == run.provider_id, col(CheckRun.id) < run.id)
        .order_by(col(CheckRun.id).desc())
        .limit(1)
    ).first()
    if previous is None:
        return 0  # a first run is a snapshot, not a change
    drafts = finding_changes(
        _findings(session, previous.id), _findings(session, run.id), previous.verdict, run.verdict
    )
    return store_events(
        session,
        [(run.provider_id, draft, f"run:{run.id}:{draft.key}") for draft in drafts],
        occurred_on=run.checked_on,
        check_run_id=run.id,
    )


def threshold_stage(days_left: int, thresholds: Sequence[int]) -> str | None:
    """'expired', the smallest threshold already reached ('7', '30' ...), or None when none is."""
    if days_left < 0:
        return "expired"
    reached = [threshold for threshold in sorted(thresholds) if days_left <= threshold]
    return str(reached[0]) if reached else None


def _expiry_draft(kind: str, label: tuple[str, str], expires_on: date, today: date, stage: str) -> EventDraft:
    days = (expires_on - today).days
    zh, en = label
    if stage == "expired":
        return EventDraft(
            "expired",
            kind,
            stage,
            "blocker",
            f"{zh} 已于 {expires_on} 过期",
            f"{en} expired on {expires_on}",
            {"expires_on": expires_on.isoformat(), "days_left": days},
        )
    return EventDraft(
        "expiring",
        kind,
        stage,
        "warning" if int(stage) <= 7 else "info",
        f"{zh} 将于 {expires_on} 到期（还剩 {days} 天）",
        f"{en} expires on {expires_on} ({days} days left)",
        {"expires_on": expires_on.isoformat(), "days_left": days, "threshold_days": int(stage)},
    )


def _expiring(
    session: Session, today: date, horizon: int
) -> Iterable[tuple[str, int, int, tuple[str, str], date]]:
    """(kind, record id, provider id, (zh, en) label, expiry date) of credentials inside the horizon."""
    limit = today + timedelta(days=horizon)
    licences = session.exec(
        select(Licence.id, Licence.provider_id, Licence.number_raw, Licence.expires_on).where(
            col(Licence.expires_on).is_not(None), col(Licence.expires_on) <= limit
        )
    ).all()
    for record_id, provider_id, number, expires_on in licences:
        yield (
            "licence",
            record_id,
            provider_id,
            (f"增值电信业务经营许可证 {number}", f"telecom licence {number}"),
            expires_on,
        )
    certifications = session.exec(
        select(
            Certification.id,
            Certification.provider_id,
            Certification.kind,
            Certification.name,
            Certification.expires_on,
        ).where(col(Certification.expires_on).is_not(None), col(Certification.expires_on) <= limit)
    ).all()
    for record_id, provider_id, kind, name, expires_on in certifications:
        title = name or str(getattr(kind, "value", kind))
        yield "certification", record_id, provider_id, (f"认证 {title}", f"certification {title}"), expires_on


def watch_expiry(session: Session, *, today: date, thresholds: Sequence[int] = EXPIRY_THRESHOLDS) -> int:
    """Events for credentials that reached an expiry threshold or expired; each threshold once per date."""
    rows = []
    for kind, record_id, provider_id, label, expires_on in _expiring(session, today, max(thresholds)):
        stage = threshold_stage((expires_on - today).days, thresholds)
        if stage is None:
            continue
        draft = _expiry_draft(f"{kind}:{record_id}", label, expires_on, today, stage)
        rows.append((provider_id, draft, f"expiry:{kind}:{record_id}:{expires_on.isoformat()}:{stage}"))
    return store_events(session, rows, occurred_on=today)


def store_events(
    session: Session,
    rows: Sequence[tuple[int, EventDraft, str] | tuple[int, EventDraft, str, int | None, date]],
    *,
    occurred_on: date | None = None,
    check_run_id: int | None = None,
) -> int:
    """Insert (provider id, draft, dedupe key) rows, skipping stored keys; returns how many were new.

    A row may carry its own check run id and day (provider id, draft, key, run id, day): a batch of runs.
    """
    if not rows:
        return 0
    values = [
        {
            "provider_id": provider_id,
            "kind": draft.kind,
            "subject": draft.subject,
            "dedupe_key": key[:200],
            "severity": draft.severity,
            "message_zh": draft.message_zh,
            "message_en": draft.message_en,
            "details": draft.details,
            "check_run_id": own[0] if own else check_run_id,
            "occurred_on": own[1] if own else occurred_on,
        }
        for provider_id, draft, key, *own in rows
    ]
    inserted = insert_new_rows(session, ChangeEvent.__table__, values, unique=["dedupe_key"])
    session.commit()
    publish(session, ChangesRecorded(tuple(inserted)))  # after the commit; the watchers hear of them
    return len(inserted)


def recent_events(session: Session, *, provider_id: int | None = None, limit: int = 50) -> list[ChangeEvent]:
    """The newest events, of one provider or of all."""
    statement = select(ChangeEvent).order_by(col(ChangeEvent.created_at).desc(), col(ChangeEvent.id).desc())
    if provider_id is not None:
        statement = statement.where(ChangeEvent.provider_id == provider_id)
    return list(session.exec(statement.limit(limit)).all())


def count_events(session: Session) -> int:
    """How many change events are stored."""
    return session.exec(select(func.count()).select_from(ChangeEvent)).one()
