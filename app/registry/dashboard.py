"""The home page's figures: what needs attention, each read with an aggregate query (constant statements).

Five statements whatever the number of providers or check runs: providers by the verdict and age of their
latest run, credentials by expiry stage, the plain counts (lookups, jobs, benchmark runs, invitations),
recent change events, recent report exports, and the pending invitations (one more).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import aliased, load_only
from sqlmodel import Session, col, func, literal, select, union_all

from app.core import clock as localtime
from app.core import vocabulary
from app.models import Certification, Licence, Provider
from app.models.checks import CheckRun
from app.models.disclosure import Invitation, InvitationPurpose, InvitationStatus
from app.models.evidence import Lookup, LookupState
from app.models.jobs import Job, JobState
from app.models.latest_runs import POINTER
from app.models.reports import ExportRecord
from app.models.trials import BenchRun, RunState
from app.models.watch import ChangeEvent

VERDICT_LEVELS = vocabulary.order("verdict_level")
EXPIRY_STAGES = ("expired", "7", "30", "90")  # exclusive: expired, 0-7 days, 8-30, 31-90
EXPIRY_DAYS = {"7": (0, 7), "30": (8, 30), "90": (31, 90)}
DEFAULT_STALE_DAYS = 30
RECENT_FAILURE_DAYS = 7  # failed jobs and benchmark runs counted on the dashboard
ACTIVE_JOB_STATES = (JobState.queued.value, JobState.running.value)
ACTIVE_RUN_STATES = (RunState.queued.value, RunState.running.value)
PENDING_INVITATION_STATES = (
    InvitationStatus.sent.value,
    InvitationStatus.opened.value,
    InvitationStatus.draft.value,
    InvitationStatus.submitted.value,
)
RECENT_ROWS = 8


@dataclass
class Dashboard:
    """Every figure and short list the home page shows."""

    today: date
    stale_days: int
    providers: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    never_checked: int = 0
    stale: int = 0
    expiry: dict[str, int] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    events: list[tuple[ChangeEvent, str]] = field(default_factory=list)
    exports: list[ExportRecord] = field(default_factory=list)
    invitations: list[Invitation] = field(default_factory=list)


# ---------------------------------------------------------------- conditions shared with the lists
def _latest(column: Any) -> Any:
    """Scalar subquery: a column of the provider's latest check run, found by its pointer (one key seek;
    provider.latest_check_run_id is kept by app.models.latest_runs)."""
    return select(column).where(CheckRun.id == POINTER).correlate(Provider).scalar_subquery()


def verdict_condition(level: str) -> Any:
    """Providers whose latest check run has verdict `level` ("unchecked": never checked)."""
    if level == "unchecked":
        return POINTER.is_(None)
    return _latest(CheckRun.verdict) == level


def checked_condition(checked: str, stale_days: int, now: datetime | None = None) -> Any:
    """Providers never checked ("never") or whose latest run is older than `stale_days` ("stale")."""
    if checked == "never":
        return verdict_condition("unchecked")
    return _latest(CheckRun.created_at) < stale_cutoff(stale_days, now)


def stale_cutoff(stale_days: int, now: datetime | None = None) -> datetime:
    """The moment before which a latest check run counts as old."""
    return (now or localtime.now()) - timedelta(days=stale_days)


def expiry_range(stage: str, today: date) -> tuple[date | None, date]:
    """(first, last) expiry dates of a stage; `first` is None for "expired" (everything before today)."""
    if stage == "expired":
        return None, today - timedelta(days=1)
    low, high = EXPIRY_DAYS[stage]
    return today + timedelta(days=low), today + timedelta(days=high)


def _expiry_stage(column: Any, today: date) -> Any:
    return sa.case(
        (column < today, literal("expired")),
        (column <= today + timedelta(days=7), literal("7")),
        (column <= today + timedelta(days=30), literal("30")),
        else_=literal("90"),
    )


# ---------------------------------------------------------------- the figures
def _provider_figures(session: Session, board: Dashboard, cutoff: datetime) -> None:
    latest = aliased(CheckRun, name="latest_run")
    stale = sa.case((col(latest.created_at) < cutoff, 1), else_=0)
    rows = session.exec(
        select(latest.verdict, stale.label("stale"), func.count())
        .select_from(Provider)
        .outerjoin(latest, col(latest.id) == POINTER)
        .group_by(latest.verdict, stale)
    ).all()
    board.verdicts = dict.fromkeys(VERDICT_LEVELS, 0)
    for verdict, is_stale, count in rows:
        level = verdict or "unchecked"
        board.verdicts[level] = board.verdicts.get(level, 0) + count
        board.providers += count
        if verdict is not None and is_stale:
            board.stale += count
    board.never_checked = board.verdicts["unchecked"]


def _expiry_figures(session: Session, board: Dashboard) -> None:
    horizon = board.today + timedelta(days=90)
    parts = [
        select(_expiry_stage(col(model.expires_on), board.today).label("stage")).where(
            col(model.expires_on).is_not(None), col(model.expires_on) <= horizon
        )
        for model in (Licence, Certification)
    ]
    both = union_all(*parts).subquery("expiring")
    rows = session.exec(select(both.c.stage, func.count()).group_by(both.c.stage)).all()
    board.expiry = dict.fromkeys(EXPIRY_STAGES, 0) | {stage: count for stage, count in rows}


def _count(model: Any, *conditions: Any) -> Any:
    return select(func.count()).select_from(model).where(*conditions).scalar_subquery()


def _plain_counts(session: Session, board: Dashboard, now: datetime) -> None:
    since = now - timedelta(days=RECENT_FAILURE_DAYS)
    counts = {
        "lookups_awaiting": _count(Lookup, Lookup.state == LookupState.awaiting_answer.value),
        "jobs_active": _count(Job, col(Job.state).in_(ACTIVE_JOB_STATES)),
        "jobs_failed": _count(Job, Job.state == JobState.failed.value, col(Job.created_at) >= since),
        "runs_active": _count(BenchRun, col(BenchRun.state).in_(ACTIVE_RUN_STATES)),
        "runs_failed": _count(
            BenchRun, BenchRun.state == RunState.failed.value, col(BenchRun.created_at) >= since
        ),
        "invitations_pending": _count(Invitation, *pending_invitation_conditions(now)),
    }
    row = session.exec(select(*(value.label(name) for name, value in counts.items()))).one()
    board.counts = dict(zip(counts, row, strict=True))


def pending_invitation_conditions(now: datetime | None = None) -> list[Any]:
    """Invitations waiting on the provider (sent, opened, draft; link not expired) or on the analyst
    (submitted, whatever the link's expiry): the invitation list's "pending" filter, so the two agree."""
    waiting_on_provider = col(Invitation.status).in_(PENDING_INVITATION_STATES[:3]) & (
        col(Invitation.expires_at) > (now or localtime.now())
    )
    return [
        sa.or_(waiting_on_provider, Invitation.status == InvitationStatus.submitted.value),
        Invitation.purpose == InvitationPurpose.disclosure.value,  # quote requests wait on their case
    ]


def recent_events(session: Session, limit: int = RECENT_ROWS) -> list[tuple[ChangeEvent, str]]:
    """The newest change events with their provider's name."""
    return list(
        session.exec(
            select(ChangeEvent, Provider.legal_name)
            .join(Provider, col(Provider.id) == ChangeEvent.provider_id)
            .order_by(col(ChangeEvent.created_at).desc(), col(ChangeEvent.id).desc())
            .limit(limit)
        ).all()
    )


EXPORT_COLUMNS = (
    ExportRecord.id,
    ExportRecord.number,
    ExportRecord.kind,
    ExportRecord.subject_id,
    ExportRecord.subject_name,
    ExportRecord.provider_id,
    ExportRecord.language,
    ExportRecord.created_by,
    ExportRecord.created_at,
    ExportRecord.verdict,
)


def recent_exports(session: Session, limit: int = RECENT_ROWS, offset: int = 0) -> list[ExportRecord]:
    """The newest report exports, without their PDF or snapshot."""
    return list(
        session.exec(
            select(ExportRecord)
            .options(load_only(*EXPORT_COLUMNS))  # type: ignore[arg-type]
            .order_by(col(ExportRecord.id).desc())
            .offset(offset)
            .limit(limit)
        ).all()
    )


def pending_invitations(session: Session, limit: int = 5, now: datetime | None = None) -> list[Invitation]:
    """The hook for the disclosure invitations card: pending, unexpired invitations, newest first."""
    return list(
        session.exec(
            select(Invitation)
            .where(*pending_invitation_conditions(now))
            .order_by(col(Invitation.created_at).desc(), col(Invitation.id).desc())
            .limit(limit)
        ).all()
    )


def dashboard(
    session: Session, *, stale_days: int = DEFAULT_STALE_DAYS, now: datetime | None = None
) -> Dashboard:
    """Every figure of the home page (six SQL statements whatever the amount of data)."""
    now = now or localtime.now()
    board = Dashboard(today=localtime.business_today(now), stale_days=stale_days)
    _provider_figures(session, board, stale_cutoff(stale_days, now))
    _expiry_figures(session, board)
    _plain_counts(session, board, now)
    board.events = recent_events(session)
    board.exports = recent_exports(session)
    board.invitations = pending_invitations(session, now=now)
    return board
