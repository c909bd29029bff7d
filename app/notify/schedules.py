"""Schedules on the job queue: the daily credential re-check with the expiry watch, the weekly footer scrape.

A Huey periodic task calls `tick` every minute. Each schedule's latest due period (in the configured zone,
Asia/Shanghai by default) is claimed by inserting a ScheduleRun row, unique per (schedule, period): the
worker that inserts it enqueues the job, so a restart, a second worker or a repeated tick starts nothing
twice, and a period missed while no worker ran is started when one runs again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from urllib.parse import urlsplit

from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.core import clock as localtime
from app.core import runtime_settings
from app.core.config import clock_time
from app.core.db import insert_new_rows
from app.core.events import DayStarted, publish
from app.core.jobs import background, enqueue, job_result_outcome, on_queue, report_progress
from app.models.jobs import Job
from app.models.provider import Provider
from app.models.watch import ScheduleRun


@dataclass(frozen=True)
class Schedule:
    """A job kind run once a day (weekday None) or once a week, at a local time."""

    name: str
    kind: str
    at: time
    weekday: int | None = None  # 0 = Monday

    def latest_due(self, local_now: datetime) -> date:
        """The date of the latest occurrence at or before `local_now` (its period)."""
        day = local_now.date()
        if self.weekday is not None:
            day -= timedelta(days=(day.weekday() - self.weekday) % 7)
        if datetime.combine(day, self.at, local_now.tzinfo) > local_now:
            day -= timedelta(days=7 if self.weekday is not None else 1)
        return day


TASK_NAME = "gpuvet.schedules_tick"  # every minute: start the schedules that are due

# The default times; the ones in force come from the settings (schedule_daily_at, schedule_weekly_at),
# which an admin may change on the settings page.
SCHEDULES = (
    Schedule("daily_checks", "watch.daily", time(3, 0)),
    Schedule("weekly_footers", "watch.footers", time(4, 0), weekday=0),
    Schedule("notify_prune", "notify.prune", time(2, 30)),
)
SETTING_OF = {"daily_checks": "schedule_daily_at", "weekly_footers": "schedule_weekly_at"}


def schedules(settings: Any = None) -> tuple[Schedule, ...]:
    """The schedules at the times now in force (the settings, as edited on the settings page)."""
    current = runtime_settings.effective(settings)
    timed = []
    for schedule in SCHEDULES:
        setting = SETTING_OF.get(schedule.name)
        value = getattr(current, setting, None) if setting else None
        timed.append(dataclasses.replace(schedule, at=clock_time(value)) if value else schedule)
    return tuple(timed)


def next_due(schedule: Schedule, local_now: datetime) -> datetime:
    """The first occurrence of the schedule after `local_now` (local time)."""
    latest = datetime.combine(schedule.latest_due(local_now), schedule.at, local_now.tzinfo)
    return latest + timedelta(days=7 if schedule.weekday is not None else 1)


def last_runs(session: Session) -> dict[str, tuple[ScheduleRun, Job | None]]:
    """The latest started period of each schedule, with its job."""
    latest: dict[str, tuple[ScheduleRun, Job | None]] = {}
    for run in session.exec(select(ScheduleRun).order_by(col(ScheduleRun.id).desc())).all():
        if run.schedule not in latest:
            latest[run.schedule] = (run, session.get(Job, run.job_id) if run.job_id else None)
    return latest


def _claim(session: Session, schedule: Schedule, period: str) -> ScheduleRun | None:
    """Insert the (schedule, period) row; None when it exists already (someone else started it)."""
    row = {"schedule": schedule.name, "period": period, "created_at": localtime.now()}
    inserted = insert_new_rows(session, ScheduleRun.__table__, [row], unique=["schedule", "period"])
    session.commit()
    return session.get(ScheduleRun, inserted[0]) if inserted else None


def tick(session: Session, now: datetime | None = None) -> list[Job]:
    """Start every schedule whose latest due period has not been started; returns the jobs queued."""
    from app.trials import campaigns

    now = now or localtime.now()
    local_now = localtime.to_local(now)
    started = []
    for schedule in schedules():
        period = schedule.latest_due(local_now)
        claimed = _claim(session, schedule, period.isoformat())
        if claimed is None:
            continue
        job = enqueue(session, kind=schedule.kind, params={"period": period.isoformat()})
        claimed.job_id = job.id
        session.add(claimed)
        session.commit()
        started.append(job)
    started += campaigns.tick(session, now)  # peak-hour campaign windows that are due
    return started


@on_queue
def register_tick(huey: Any, app: Any, engine: Any) -> None:
    """Register the minutely tick on the app's Huey (skipped while GPUVET_SCHEDULES_ENABLED is off)."""
    from huey import crontab

    settings = app.config["GPUVET_SETTINGS"]

    @huey.periodic_task(crontab(minute="*"), name=TASK_NAME)
    def schedules_tick() -> None:
        if not settings.schedules_enabled:
            return
        with app.app_context(), Session(engine) as session:
            tick(session)


def schedule_runs(session: Session, limit: int = 20) -> list[ScheduleRun]:
    """The newest started periods."""
    statement = select(ScheduleRun).order_by(col(ScheduleRun.id).desc()).limit(limit)
    return list(session.exec(statement).all())


def _each_provider(session: Session, job: Any, work: Callable[[int], None], *, where: Any = None) -> int:
    """Call `work` for every provider id (optionally filtered), with the job's progress; returns the count."""
    statement = select(Provider.id).order_by(col(Provider.id))
    if where is not None:
        statement = statement.where(where)
    ids = list(session.exec(statement).all())
    for done, provider_id in enumerate(ids):
        report_progress(session, job, done=done, total=len(ids), current=str(provider_id))
        work(provider_id)
    report_progress(session, job, done=len(ids), total=len(ids), current="")
    return len(ids)


@background(
    "watch.daily", title_zh="每日复核与到期提醒", title_en="Daily re-check and expiry watch", idempotent=True
)
def daily_job(session: Session, job: Any, *, period: str) -> dict[str, Any]:
    """Re-run the credential rules for every provider (changes recorded) and watch credential expiry."""
    from app.credentials import checks, watch

    before = watch.count_events(session)
    checked = checks.check_all_job(session, job, today=period)["checked"]
    changes = watch.count_events(session) - before  # each stored run records its changes
    expiring = watch.watch_expiry(session, today=date.fromisoformat(period))
    due = sum(publish(session, DayStarted(date.fromisoformat(period))))  # e.g. decisions' due dates
    result = {"checked": checked, "changes": changes, "expiry_events": expiring, "due_events": due}
    return result | job_result_outcome("ok")


@background(
    "watch.footers", title_zh="每周官网页脚复查", title_en="Weekly website footer scrape", idempotent=True
)
def footers_job(session: Session, job: Any, *, period: str) -> dict[str, Any]:
    """Queue a footer scrape for every provider with a website (each one keeps its evidence as usual)."""
    queued: list[int] = []
    websites = dict(
        session.exec(select(Provider.id, Provider.website).where(col(Provider.website).is_not(None))).all()
    )

    def scrape(provider_id: int) -> None:
        if not reserved_domain(websites.get(provider_id)):
            queued.append(enqueue(session, kind="scrape.footer", params={"provider_id": provider_id}).id)

    _each_provider(session, job, scrape, where=col(Provider.website).is_not(None))
    message = _("已为 %(count)s 家供应商排队抓取页脚", count=len(queued))
    return {"queued_jobs": queued, "providers": len(queued), "message": message}


RESERVED_SUFFIXES = (".example", ".test", ".invalid", ".localhost")  # RFC 2606 / 6761: never on the internet


def reserved_domain(url: str | None) -> bool:
    """Whether a website is on a reserved documentation domain (the demo's), which a scrape cannot reach."""
    host = (urlsplit(url or "").hostname or "").lower().rstrip(".")
    examples = ("example.com", "example.net", "example.org")
    return host.endswith(RESERVED_SUFFIXES) or any(
        host == name or host.endswith(f".{name}") for name in examples
    )
