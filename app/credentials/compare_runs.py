"""Compare over time: two check runs (or two exported reports) of a provider side by side, and the change
events a provider report lists since the previous export of that provider's report.

Findings are matched as the change events match them (app.credentials.watch): by rule and subject.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Any

from flask_babel import gettext as _
from sqlalchemy.orm import load_only
from sqlmodel import Session, col, func, select

from app.core import clock as localtime
from app.core.errors import InvalidInput, NotFound
from app.core.limits import MAX_ID
from app.models.checks import CheckRun, StoredFinding
from app.models.latest_runs import latest_run_ids
from app.models.reports import ExportRecord, ReportKind
from app.models.watch import ChangeEvent

REF = re.compile(r"^(run|export):(\d{1,10})$")
SEVERITY_RANK = {"blocker": 0, "warning": 1, "info": 2}
STATUSES = ("added", "cleared", "severity_changed", "unchanged")
MAX_CHOICES = 100
MAX_REPORT_EVENTS = 200


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a check run, or the check run a report export printed."""

    ref: str  # "run:12" or "export:3"
    kind: str  # run / export
    id: int
    created_at: datetime
    verdict: str  # pass / needs_review / fail / unchecked
    findings: tuple[dict[str, Any], ...] = ()
    number: str | None = None  # the export's report number
    check_run_id: int | None = None  # the run itself, or the run the export printed


@dataclass(frozen=True)
class Row:
    """One finding (rule and subject) on either side."""

    rule_id: str
    subject: str
    status: str  # added / cleared / severity_changed / unchanged
    before: dict[str, Any] | None
    after: dict[str, Any] | None

    @property
    def current(self) -> dict[str, Any]:
        """The finding as it stands on the later side (or as it was, when cleared)."""
        return self.after or self.before or {}


@dataclass
class Comparison:
    """Two sides and what changed from `before` to `after`."""

    before: Side
    after: Side
    rows: list[Row] = field(default_factory=list)

    @property
    def verdict_changed(self) -> bool:
        """Whether the verdict differs."""
        return self.before.verdict != self.after.verdict

    def count(self, status: str) -> int:
        """How many rows have `status`."""
        return sum(1 for row in self.rows if row.status == status)

    @property
    def changed(self) -> bool:
        """Whether anything differs at all."""
        return self.verdict_changed or any(row.status != "unchanged" for row in self.rows)


def parse_ref(value: Any, name: str) -> tuple[str, int]:
    """("run" | "export", id) from "run:12" / "export:3"; anything else names the field and the format."""
    match = REF.match(str(value or "").strip())
    if not match or not 1 <= int(match.group(2)) <= MAX_ID:
        raise InvalidInput(_("须为 run:<编号> 或 export:<编号>，如 run:12"), field=name)
    return match.group(1), int(match.group(2))


def _finding_dict(stored: StoredFinding) -> dict[str, Any]:
    from app.credentials.checks import finding_dict

    return finding_dict(stored)


def run_side(session: Session, provider_id: int, run_id: int, name: str = "run") -> Side:
    """A check run of this provider as a comparison side (NotFound when it is another provider's)."""
    run = session.get(CheckRun, run_id)
    if run is None or run.provider_id != provider_id:
        raise NotFound(_("该供应商没有第 %(id)s 次核查", id=run_id), field=name)
    findings = session.exec(
        select(StoredFinding)
        .where(StoredFinding.check_run_id == run.id)
        .order_by(col(StoredFinding.position))
    ).all()
    return Side(
        ref=f"run:{run.id}",
        kind="run",
        id=run.id,
        created_at=run.created_at,
        verdict=run.verdict,
        findings=tuple(_finding_dict(stored) for stored in findings),
        check_run_id=run.id,
    )


def export_side(session: Session, provider_id: int, export_id: int, name: str = "export") -> Side:
    """An exported provider report as a comparison side: the check it printed, read from its snapshot."""
    record = session.get(ExportRecord, export_id)
    if record is None or record.kind != ReportKind.provider.value or record.provider_id != provider_id:
        raise NotFound(_("该供应商没有编号为 %(id)s 的报告导出", id=export_id), field=name)
    checks = ((record.inputs_json.get("inputs") or {}).get("sources") or {}).get("checks") or {}
    data = (checks.get("data") or {}) if checks.get("status") == "ok" else {}
    return Side(
        ref=f"export:{record.id}",
        kind="export",
        id=record.id,
        created_at=record.created_at,
        verdict=data.get("verdict") or "unchecked",
        findings=tuple(data.get("findings") or ()),
        number=record.number,
        check_run_id=data.get("id"),
    )


def load_side(session: Session, provider_id: int, ref: Any, name: str) -> Side:
    """The side a reference names (parse_ref), of this provider."""
    kind, record_id = parse_ref(ref, name)
    if kind == "run":
        return run_side(session, provider_id, record_id, name)
    return export_side(session, provider_id, record_id, name)


def _key(finding: dict[str, Any]) -> tuple[str, str]:
    return str(finding.get("rule_id") or ""), str(finding.get("subject") or "")


def compare(before: Side, after: Side) -> Comparison:
    """Every finding of either side with what became of it, the most severe and changed first."""
    old = {_key(finding): finding for finding in before.findings}
    new = {_key(finding): finding for finding in after.findings}
    rows = []
    for key in old.keys() | new.keys():
        was, now = old.get(key), new.get(key)
        if was is None:
            status = "added"
        elif now is None:
            status = "cleared"
        elif was.get("severity") != now.get("severity"):
            status = "severity_changed"
        else:
            status = "unchanged"
        rows.append(Row(key[0], key[1], status, was, now))
    rows.sort(
        key=lambda row: (
            STATUSES.index(row.status) if row.status != "unchanged" else len(STATUSES),
            SEVERITY_RANK.get(str(row.current.get("severity")), 9),
            row.rule_id,
            row.subject,
        )
    )
    return Comparison(before=before, after=after, rows=rows)


@dataclass(frozen=True)
class Choice:
    """A run or export offered in the page's pickers."""

    ref: str
    kind: str
    id: int
    created_at: datetime
    verdict: str | None
    number: str | None = None


def choices(session: Session, provider_id: int) -> list[Choice]:
    """The provider's latest check runs and report exports, newest first (two statements)."""
    runs = session.exec(
        select(CheckRun.id, CheckRun.created_at, CheckRun.verdict)
        .where(CheckRun.provider_id == provider_id)
        .order_by(col(CheckRun.id).desc())
        .limit(MAX_CHOICES)
    ).all()
    exports = session.exec(
        select(ExportRecord.id, ExportRecord.created_at, ExportRecord.verdict, ExportRecord.number)
        .where(ExportRecord.kind == ReportKind.provider.value, ExportRecord.provider_id == provider_id)
        .order_by(col(ExportRecord.id).desc())
        .limit(MAX_CHOICES)
    ).all()
    found = [Choice(f"run:{i}", "run", i, when, verdict) for i, when, verdict in runs]
    found += [
        Choice(f"export:{i}", "export", i, when, verdict, number) for i, when, verdict, number in exports
    ]
    return found


def previous_ref(session: Session, provider_id: int, ref: str) -> str | None:
    """The run (or export) of the same provider just before `ref`, to compare it with by default."""
    kind, record_id = parse_ref(ref, "b")
    if kind == "run":
        previous = session.exec(
            select(func.max(CheckRun.id)).where(
                CheckRun.provider_id == provider_id, col(CheckRun.id) < record_id
            )
        ).one()
    else:
        previous = session.exec(
            select(func.max(ExportRecord.id)).where(
                ExportRecord.kind == ReportKind.provider.value,
                ExportRecord.provider_id == provider_id,
                col(ExportRecord.id) < record_id,
            )
        ).one()
    return f"{kind}:{previous}" if previous else None


def latest_run_ref(session: Session, provider_id: int) -> str | None:
    """The provider's latest check run as a reference, or None when never checked."""
    latest = session.execute(latest_run_ids([provider_id])).scalar()
    return f"run:{latest}" if latest else None


# ---------------------------------------------------------------- the provider report's change section
def start_of_local_day(day: date) -> datetime:
    """Midnight of `day` in the display zone, in UTC."""
    midnight = datetime.combine(day, time(0), localtime.to_local(localtime.now()).tzinfo)
    return midnight.astimezone(UTC)


def previous_export(session: Session, provider_id: int, *, before: datetime) -> ExportRecord | None:
    """The provider's latest exported report from before `before`."""
    return session.exec(
        select(ExportRecord)
        .options(load_only(ExportRecord.id, ExportRecord.number, ExportRecord.created_at))  # type: ignore[arg-type]
        .where(
            ExportRecord.kind == ReportKind.provider.value,
            ExportRecord.provider_id == provider_id,
            col(ExportRecord.created_at) < before,
        )
        .order_by(col(ExportRecord.id).desc())
        .limit(1)
    ).first()


def _iso(value: datetime) -> str:
    return localtime.aware(value).isoformat()


def changes_since_previous_export(session: Session, provider_id: int, *, today: date) -> dict[str, Any]:
    """The change events recorded since the provider's previous export from before `today` (every event
    when there is none), oldest first, JSON-plain for the report snapshot. Exports of the same day (the
    Chinese and the English copy, a re-export after a correction) share one baseline, so copies of the same
    data carry the same change list and the same inputs hash."""
    previous = previous_export(session, provider_id, before=start_of_local_day(today))
    statement = select(ChangeEvent).where(ChangeEvent.provider_id == provider_id)
    if previous is not None:
        statement = statement.where(col(ChangeEvent.created_at) > previous.created_at)
    total = session.exec(select(func.count()).select_from(statement.subquery())).one()
    events = session.exec(
        statement.order_by(col(ChangeEvent.created_at).desc(), col(ChangeEvent.id).desc()).limit(
            MAX_REPORT_EVENTS
        )
    ).all()
    return {
        "previous_export": (
            {"number": previous.number, "created_at": _iso(previous.created_at)} if previous else None
        ),
        "total": total,
        "events": [
            {
                "id": event.id,
                "kind": event.kind,
                "severity": event.severity,
                "occurred_on": event.occurred_on.isoformat(),
                "created_at": _iso(event.created_at),
                "message_zh": event.message_zh,
                "message_en": event.message_en,
                "check_run_id": event.check_run_id,
            }
            for event in reversed(events)
        ],
    }
