"""Background jobs on a real task queue (Huey), each tracked by a Job row that pages can show.

A job kind is a function `fn(session, job, **params)` registered with @background("kind"). `enqueue`
stores a Job row (state queued), commits, and hands the job id to Huey: SQLite-backed under the
instance folder by default, Redis-backed when REDIS_URL is set (several workers on several machines),
or run inline when Settings.jobs_immediate / app.config["JOBS_IMMEDIATE"] is set (tests).

A worker (`flask --app wsgi worker`) runs the Huey consumer. The Huey task opens its own session on the
app's engine, claims the job (queued -> running, so a task delivered twice runs once), calls fn, and
stores its JSON result or its error. A job whose function returned is succeeded; when its work did not
succeed, its result dict says so with "outcome": "failed" | "problems" (else "ok") and the reason in
"outcome_message_zh" / "outcome_message_en" (see job_result_outcome), which the job pages show.
While a job runs, a heartbeat thread touches the row; a job still
'running' whose worker is gone (dead process on this host, or no heartbeat for a while) is marked
interrupted, or queued again when its kind is idempotent. Jobs queued in the database but missing from
the queue's storage are handed to the queue again when a worker starts, so a restart loses no job.

This module imports Flask only inside the functions that need the app, so services may register kinds. It
imports no domain package: the domain modules register their job kinds (@background) and their own Huey
tasks and periodic tasks (@on_queue), and load_kinds() imports them all.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from flask import has_app_context, has_request_context
from flask_babel import force_locale
from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.core import clock, job_errors
from app.core.clock import aware
from app.core.errors import Conflict, InvalidInput, ServiceError
from app.core.i18n import current_language
from app.core.plugins import register_once
from app.core.records import get_or_404
from app.models.jobs import FINAL_STATES, Job, JobState

if TYPE_CHECKING:
    from huey import Huey

logger = logging.getLogger(__name__)

TASK_NAME = "gpuvet.run_job"
LOCALE_PARAM = "_locale"  # the language of whoever queued the job; taken out before the job function runs
QUEUE_FILE = "jobs.sqlite3"
ERROR_LIMIT = 4000
# A queued row younger than this may still be on its way into the queue: recovery leaves it alone.
REQUEUE_GRACE = timedelta(seconds=30)


# ---------------------------------------------------------------- registry
@dataclass(frozen=True)
class JobKind:
    """A registered job kind: the function that runs it and how it is shown and recovered."""

    kind: str
    fn: Callable[..., Any]
    title_zh: str
    title_en: str
    idempotent: bool = False

    def title(self, locale: str) -> str:
        """Title in the UI language."""
        return self.title_en if locale == "en" else self.title_zh


KINDS: dict[str, JobKind] = {}


def background(
    kind: str, *, title_zh: str = "", title_en: str = "", idempotent: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register `fn(session, job, **params)` as job kind `kind`; a duplicate kind raises.

    Idempotent kinds are queued again after a worker died while running them; others are marked
    interrupted and wait for a person to start them again.
    """

    def decorator(fn: Callable[..., Any]) -> Callable[..., Any]:
        register_once(
            KINDS, kind, JobKind(kind, fn, title_zh or kind, title_en or kind, idempotent), "job kind"
        )
        return fn

    return decorator


QueueSetup = Callable[["Huey", Any, sa.Engine], None]
QUEUE_SETUPS: dict[str, QueueSetup] = {}


def on_queue(setup: QueueSetup) -> QueueSetup:
    """Register `setup(huey, app, engine)`, called when an app's Huey is built: a domain module's own tasks
    and periodic tasks (deliveries, the schedules' tick). Registering it again replaces it."""
    QUEUE_SETUPS[f"{setup.__module__}.{setup.__qualname__}"] = setup
    return setup


def load_kinds() -> dict[str, JobKind]:
    """Import the modules that register job kinds (every service module) and return the registry."""
    from app.core.plugins import import_domains

    import_domains()
    return KINDS


def kind_title(kind: str, locale: str) -> str:
    """A job kind's title in the UI language (the kind itself when it is not registered)."""
    # a web process imports only the services its pages use: load the rest once, when a kind is missing
    entry = KINDS.get(kind) or load_kinds().get(kind)
    return entry.title(locale) if entry else kind


# ---------------------------------------------------------------- helpers
def job_result_outcome(outcome: str, message_zh: str = "", message_en: str = "") -> dict[str, str]:
    """The outcome fields a job function adds to its result dict ("ok", "failed" or "problems")."""
    assert outcome in ("ok", "failed", "problems")
    return {"outcome": outcome, "outcome_message_zh": message_zh, "outcome_message_en": message_en}


@contextmanager
def _speaking(locale: str | None) -> Iterator[None]:
    """Messages built inside are in `locale` (the starter's language); outside an app, as they come."""
    if locale and has_app_context():
        with force_locale(locale):
            yield
    else:
        yield


def worker_id() -> str:
    """This process as 'host:pid', recorded on the jobs it runs."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _process_alive(worker: str | None) -> bool | None:
    """True/False for a worker on this host, None when it lives elsewhere (or is unknown)."""
    if not worker or ":" not in worker:
        return None
    host, _colon, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _json_ready(value: Any, field: str) -> Any:
    """The value as plain JSON, or InvalidInput naming the field."""
    try:
        return json.loads(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError) as exc:
        raise InvalidInput(_("须为 JSON 可表示的值：%(detail)s", detail=exc), field=field) from None


def _error_text(exc: BaseException) -> str:
    """A readable one-paragraph error: service errors keep their field messages."""
    if isinstance(exc, ServiceError):
        text = "; ".join(f"{e.field}: {e.message}" if e.field else e.message for e in exc.errors)
    else:
        text = f"{type(exc).__name__}: {exc}"
    return text[:ERROR_LIMIT]


def _with_error(progress: Any, parts: list[dict[str, Any]] | None) -> Any:
    """The job's progress with its error's message ids and values (app.core.job_errors), when known."""
    return {**(progress or {}), "error": parts} if parts else progress


def error_text(job: Job) -> str | None:
    """The job's error in the reader's language where its message ids were kept, else as it was stored."""
    parts = job.progress.get("error") if isinstance(job.progress, dict) else None
    if not job.error or not parts:
        return job.error
    return job_errors.render(parts)[:ERROR_LIMIT]


def _actor(user: Any, session: Session) -> tuple[int | None, str]:
    if user is not None:
        return user.id, user.username
    return session.info.get("actor", (None, "system"))


# ---------------------------------------------------------------- the queue (per Flask app)
def make_huey(app: Any) -> Huey:
    """Build the app's Huey: inline when immediate, Redis when REDIS_URL is set, else SQLite (0600)."""
    from huey import MemoryHuey, RedisHuey, SqliteHuey  # imports redis and psycopg: only where used

    from app.core.config import private_dir
    from app.core.db import get_engine, private_sqlite_file

    settings = app.config["GPUVET_SETTINGS"]
    immediate = bool(app.config.get("JOBS_IMMEDIATE", settings.jobs_immediate))
    if immediate:
        huey: Huey = MemoryHuey("gpuvet", immediate=True, results=False)
    elif settings.redis_url:
        huey = RedisHuey("gpuvet", url=settings.redis_url, results=False)
    else:
        filename = str(private_dir(settings.instance_path) / QUEUE_FILE)
        private_sqlite_file(f"sqlite:///{filename}")
        huey = SqliteHuey("gpuvet", filename=filename, results=False, timeout=30)
    engine = get_engine(app)
    heartbeat = settings.jobs_heartbeat_s

    @huey.task(name=TASK_NAME)
    def run_job_task(job_id: int) -> None:
        with app.app_context():
            execute_job(engine, job_id, heartbeat_s=heartbeat)

    load_kinds()  # the domain modules register their own tasks and periodic tasks (on_queue)
    for setup in QUEUE_SETUPS.values():
        setup(huey, app, engine)
    app.extensions["gpuvet.huey_task"] = run_job_task
    return huey


def get_huey(app: Any = None) -> Huey:
    """The Huey instance of `app` (default: the current app), built on first use."""
    if app is None:
        from flask import current_app

        app = current_app._get_current_object()  # type: ignore[attr-defined]
    huey = app.extensions.get("gpuvet.huey")
    if huey is None:
        huey = app.extensions["gpuvet.huey"] = make_huey(app)
    return huey


def _push(app: Any, session: Session, job: Job) -> None:
    """Hand the job id to the queue and remember the queue's task id."""
    huey = get_huey(app)
    task = app.extensions["gpuvet.huey_task"].s(job.id)
    job.queue_id = task.id
    session.add(job)
    session.commit()
    huey.enqueue(task)


# ---------------------------------------------------------------- public API
def enqueue(
    session: Session,
    *,
    kind: str,
    params: dict[str, Any] | None = None,
    user: Any = None,
    provider_id: int | None = None,
) -> Job:
    """Store a Job row for `kind`, commit it, and hand it to the queue; returns the (refreshed) job."""
    from flask import current_app

    kinds = load_kinds()
    if kind not in kinds:
        raise InvalidInput(
            _("未知任务类型 %(kind)s；可选：%(known)s", kind=kind, known=", ".join(sorted(kinds))),
            field="kind",
        )
    params = _json_ready(params or {}, "params")
    if not isinstance(params, dict):
        raise InvalidInput(_("任务参数须为对象"), field="params")
    if has_request_context():  # the job speaks the language of the person who started it
        params = {**params, LOCALE_PARAM: current_language()}
    actor_id, actor_name = _actor(user, session)
    job = Job(
        kind=kind,
        params=params,
        provider_id=provider_id,
        created_by_id=actor_id,
        created_by_name=actor_name,
    )
    session.add(job)
    session.commit()
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    try:
        _push(app, session, job)
    except Exception as exc:  # the row stays queued; a starting worker queues it again
        logger.exception("could not hand job %s to the queue", job.id)
        session.rollback()
        job.error = _("队列暂不可用，worker 启动时会重新排队：%(detail)s", detail=exc)
        job.progress = _with_error(job.progress, job_errors.text_parts(job.error, current_language()))
        session.add(job)
        session.commit()
    session.refresh(job)
    return job


def get_job(session: Session, *, job_id: int) -> Job:
    """One job, or NotFound."""
    return get_or_404(session, Job, job_id, _("任务 %(id)s 不存在", id=job_id), field="job_id")


def recent_jobs(
    session: Session,
    *,
    provider_id: int | None = None,
    kind: str | None = None,
    states: tuple[str, ...] = (),
    since: datetime | None = None,
    limit: int = 50,
    offset: int = 0,
) -> list[Job]:
    """Jobs newest first, optionally for one provider / kind / set of states / created since a moment."""
    stmt = select(Job)
    if since is not None:
        stmt = stmt.where(col(Job.created_at) >= since)
    if provider_id is not None:
        stmt = stmt.where(Job.provider_id == provider_id)
    if kind is not None:
        stmt = stmt.where(Job.kind == kind)
    if states:
        stmt = stmt.where(col(Job.state).in_(states))
    return list(session.exec(stmt.order_by(col(Job.id).desc()).offset(offset).limit(limit)).all())


def report_progress(session: Session, job: Job, *, done: int, total: int, current: str = "") -> None:
    """Record progress {done, total, current} and commit the job's session (call between units of work)."""
    job.progress = {"done": int(done), "total": int(total), "current": str(current)[:300]}
    job.heartbeat_at = clock.now()
    session.add(job)
    session.commit()


class JobCancelled(Exception):
    """Raised by a job function that stops early because it was asked to (see job_cancelled)."""


def _cancel_requested(engine: sa.Engine, job_id: int) -> bool:
    table = Job.__table__
    with engine.connect() as connection:
        flag = connection.execute(sa.select(table.c.cancel_requested).where(table.c.id == job_id)).scalar()
    return bool(flag)


def job_cancelled(session: Session, job: Job) -> bool:
    """True when someone asked to cancel this running job (read fresh, outside the job's transaction)."""
    return _cancel_requested(session.get_bind(), job.id)


def cancel(session: Session, job_id: int) -> Job:
    """Cancel a queued job at once, or ask a running one to stop; a finished job is a Conflict."""
    job = get_job(session, job_id=job_id)
    if job.state == JobState.queued:
        job.state = JobState.cancelled
        job.finished_at = clock.now()
        job.cancel_requested = True
    elif job.state == JobState.running:
        job.cancel_requested = True
    else:
        raise Conflict(
            f"任务已结束（{job.state}），无法取消 (job already finished: {job.state})", field="job_id"
        )
    session.add(job)
    session.commit()
    return job


# ---------------------------------------------------------------- running a job (worker side)
class _Heartbeat(threading.Thread):
    """Touches the running job's row every few seconds, so others can tell the worker is alive."""

    def __init__(self, engine: sa.Engine, job_id: int, interval: float) -> None:
        super().__init__(name=f"job-{job_id}-heartbeat", daemon=True)
        self.engine, self.job_id, self.interval = engine, job_id, interval
        self.stopped = threading.Event()

    def run(self) -> None:
        table = Job.__table__
        while not self.stopped.wait(self.interval):
            try:
                with self.engine.begin() as connection:
                    connection.execute(
                        sa.update(table)
                        .where(table.c.id == self.job_id, table.c.state == JobState.running)
                        .values(heartbeat_at=clock.now())
                    )
            except Exception:  # a missed beat is not fatal; the next one may succeed
                logger.warning("heartbeat of job %s failed", self.job_id, exc_info=True)


def _claim(engine: sa.Engine, job_id: int, worker: str) -> bool:
    """queued -> running in one statement, so a job delivered twice runs once."""
    table = Job.__table__
    now = clock.now()
    with engine.begin() as connection:
        claimed = connection.execute(
            sa.update(table)
            .where(table.c.id == job_id, table.c.state == JobState.queued)
            .values(
                state=JobState.running,
                started_at=now,
                heartbeat_at=now,
                worker=worker,
                attempts=table.c.attempts + 1,
            )
        ).rowcount
    return claimed == 1


def _finish(engine: sa.Engine, job_id: int, **values: Any) -> None:
    table = Job.__table__
    with engine.begin() as connection:
        connection.execute(
            sa.update(table)
            .where(table.c.id == job_id, table.c.state == JobState.running)
            .values(finished_at=clock.now(), **values)
        )


def execute_job(engine: sa.Engine, job_id: int, *, heartbeat_s: float = 10.0) -> None:
    """Run one job by id: claim it, call its kind's function, store the result or the error."""
    if not _claim(engine, job_id, worker_id()):
        logger.info("job %s is not queued any more (cancelled, or taken by another worker); skipped", job_id)
        return
    heartbeat = _Heartbeat(engine, job_id, heartbeat_s)
    heartbeat.start()
    try:
        with Session(engine, expire_on_commit=False) as session:
            job = session.get(Job, job_id)
            assert job is not None  # just claimed
            session.info["actor"] = (job.created_by_id, job.created_by_name)
            entry = load_kinds().get(job.kind)
            params = dict(job.params)
            locale = params.pop(LOCALE_PARAM, None)
            try:
                with _speaking(locale):
                    if entry is None:
                        raise InvalidInput(_("未知任务类型 %(kind)s", kind=job.kind), field="kind")
                    result = entry.fn(session, job, **params)
                session.commit()
                result = _json_ready(result, "result")
            except JobCancelled as exc:
                session.rollback()
                _finish(engine, job_id, state=JobState.cancelled, error=str(exc) or None)
                return
            except Exception as exc:  # every failure is stored on the job, never lost
                session.rollback()
                logger.exception("job %s (%s) failed", job_id, job.kind)
                with _speaking(locale):
                    error = _error_text(exc)
                parts = job_errors.error_parts(exc, locale or "zh")  # to word it in each reader's language
                said = {"progress": _with_error(job.progress, parts)} if parts else {}
                _finish(engine, job_id, state=JobState.failed, error=error, **said)
                return
        state = JobState.cancelled if _cancel_requested(engine, job_id) else JobState.succeeded
        _finish(engine, job_id, state=state, result=result)
    finally:
        heartbeat.stopped.set()


# ---------------------------------------------------------------- recovery (worker start and sweep)
def recover_jobs(engine: sa.Engine, *, app: Any, stale_after: timedelta) -> dict[str, list[int]]:
    """Mark running jobs whose worker is gone interrupted (idempotent kinds: queued again) and hand
    queued jobs missing from the queue's storage back to it. Returns the ids touched."""
    kinds = load_kinds()
    now = clock.now()
    touched: dict[str, list[int]] = {"interrupted": [], "requeued": []}
    with Session(engine, expire_on_commit=False) as session:
        for job in session.exec(select(Job).where(Job.state == JobState.running)).all():
            alive = _process_alive(job.worker)
            beat = aware(job.heartbeat_at) or aware(job.started_at) or now
            if alive is True or (alive is None and now - beat < stale_after):
                continue
            entry = kinds.get(job.kind)
            reason = _("运行任务的 worker（%(worker)s）已停止", worker=job.worker)
            if entry is not None and entry.idempotent and not job.cancel_requested:
                job.state, job.error, job.worker = (
                    JobState.queued,
                    _("%(reason)s；已重新排队", reason=reason),
                    None,
                )
                touched["requeued"].append(job.id)
            else:
                job.state, job.error, job.finished_at = JobState.interrupted, reason, now
                touched["interrupted"].append(job.id)
            job.progress = _with_error(job.progress, job_errors.text_parts(job.error, current_language()))
            session.add(job)
        session.commit()
        huey = get_huey(app)
        pending = {task.id for task in huey.pending()}
        queued = session.exec(select(Job).where(Job.state == JobState.queued)).all()
        for job in queued:
            fresh = now - (aware(job.created_at) or now) < REQUEUE_GRACE
            if job.queue_id in pending or (fresh and job.id not in touched["requeued"]):
                continue
            _push(app, session, job)
            if job.id not in touched["requeued"]:
                touched["requeued"].append(job.id)
    for key, ids in touched.items():
        if ids:
            logger.warning("jobs %s: %s", key, ids)
    return touched


def is_final(state: str) -> bool:
    """True for succeeded, failed, cancelled and interrupted."""
    return state in FINAL_STATES
