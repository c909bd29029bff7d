"""The job API in one process: inline (immediate) runs, failures, cancel, progress and recovery."""

from __future__ import annotations

import os
import socket
from datetime import UTC, datetime, timedelta

import flask
import pytest
from sqlmodel import Session

import tests.core.jobs.kinds
from app.accounts.users import create_user
from app.core import jobs
from app.core.errors import Conflict, InvalidInput, NotFound
from app.models.jobs import Job, JobState


def _fresh(app, job_id: int) -> Job:
    with Session(app.extensions["gpuvet.engine"]) as session:
        return session.get(Job, job_id)


def test_immediate_job_runs_inside_enqueue_and_keeps_who_queued_it(app, session, immediate_jobs):
    user = create_user(session, username="ana", password="correct horse battery", role="analyst")
    with app.app_context():
        job = jobs.enqueue(session, kind="test.echo", params={"x": [1, "二"]}, user=user)
    assert job.state == JobState.succeeded and job.created_by_name == "ana"
    assert job.result == {"params": {"x": [1, "二"]}, "actor": [user.id, "ana"]}
    assert job.started_at and job.finished_at and job.attempts == 1 and job.worker
    assert job.queue_id


def test_failing_job_stores_its_error(app, session, immediate_jobs):
    with app.app_context():
        job = jobs.enqueue(session, kind="test.fail", params={"code": 7})
    assert job.state == JobState.failed and job.error == "ValueError: boom 7" and job.result is None


def test_enqueue_refuses_unknown_kinds_and_non_json_params(app, session, immediate_jobs):
    with app.app_context():
        with pytest.raises(InvalidInput) as unknown:
            jobs.enqueue(session, kind="nope")
        assert unknown.value.errors[0].field == "kind" and "vetting.check" in unknown.value.errors[0].message
        with pytest.raises(InvalidInput) as bad:
            jobs.enqueue(session, kind="test.echo", params={"when": datetime.now()})
        assert bad.value.errors[0].field == "params"


def test_duplicate_kind_raises(monkeypatch):
    monkeypatch.setattr(jobs, "KINDS", {})
    jobs.background("x")(lambda session, job: None)
    with pytest.raises(ValueError, match="registered twice"):
        jobs.background("x")(lambda session, job: None)


def test_check_job_runs_a_check_and_names_the_stored_run(app, session, immediate_jobs):
    from app.credentials.checks import latest_check
    from app.registry.providers import create_provider

    provider = create_provider(session, data={"legal_name": "示例任务科技有限公司"})
    with app.app_context():
        job = jobs.enqueue(
            session, kind="vetting.check", params={"provider_id": provider.id}, provider_id=provider.id
        )
    assert job.state == JobState.succeeded, job.error
    run = latest_check(session, provider_id=provider.id)
    assert job.result["check_run_id"] == run.id and run.job_id == job.id
    assert job.progress == {"done": 1, "total": 1, "current": "stored"}


def test_check_job_of_a_missing_provider_fails_with_the_reason(app, session, immediate_jobs):
    with app.app_context():
        job = jobs.enqueue(session, kind="vetting.check", params={"provider_id": 987654})
    assert job.state == JobState.failed and "供应商 987654 不存在" in job.error


def _queued(session, kind="test.sleep", **params) -> Job:
    job = Job(kind=kind, params=params or {"seconds": 0.3})
    session.add(job)
    session.commit()
    return job


def test_execute_job_runs_once_even_when_delivered_twice(app, session):
    job = _queued(session, kind="test.echo", params={"n": 1})
    engine = app.extensions["gpuvet.engine"]
    jobs.execute_job(engine, job.id)
    first = _fresh(app, job.id)
    jobs.execute_job(engine, job.id)
    assert _fresh(app, job.id).attempts == first.attempts == 1 and first.state == JobState.succeeded


def test_cancel_a_queued_job_and_refuse_to_cancel_a_finished_one(app, session):
    job = _queued(session)
    assert jobs.cancel(session, job.id).state == JobState.cancelled
    jobs.execute_job(app.extensions["gpuvet.engine"], job.id)  # the queue delivers it anyway: skipped
    assert _fresh(app, job.id).state == JobState.cancelled and _fresh(app, job.id).started_at is None
    with pytest.raises(Conflict):
        jobs.cancel(session, job.id)
    with pytest.raises(NotFound):
        jobs.cancel(session, 999999)


def test_a_running_job_stops_cooperatively_when_cancelled(app, session, monkeypatch):
    job = _queued(session, seconds=5, step=0.05)
    engine = app.extensions["gpuvet.engine"]
    original = jobs.report_progress

    def progress_then_cancel(job_session, running, **values):
        original(job_session, running, **values)
        if values["done"] == 3:
            with Session(engine) as other:
                jobs.cancel(other, running.id)

    monkeypatch.setattr(tests.core.jobs.kinds, "report_progress", progress_then_cancel)
    jobs.execute_job(engine, job.id)
    done = _fresh(app, job.id)
    assert done.state == JobState.cancelled and done.cancel_requested and "step 4" in done.error
    assert done.progress["done"] == 3


def _running(session, kind: str, worker: str, beat_age: float) -> Job:
    beat = datetime.now(UTC) - timedelta(seconds=beat_age)
    job = Job(
        kind=kind,
        params={"seconds": 0.1},
        state=JobState.running,
        worker=worker,
        heartbeat_at=beat,
        started_at=beat,
    )
    session.add(job)
    session.commit()
    return job


def test_recovery_interrupts_dead_workers_jobs_and_requeues_idempotent_ones(app, session, immediate_jobs):
    host = socket.gethostname()
    dead_pid = 2**22 + 12345  # above the default pid_max: no such process
    alive = _running(session, "test.sleep", f"{host}:{os.getpid()}", beat_age=3600)
    dead = _running(session, "test.sleep", f"{host}:{dead_pid}", beat_age=0)
    dead_idempotent = _running(session, "test.sleep_idempotent", f"{host}:{dead_pid}", beat_age=0)
    remote_fresh = _running(session, "test.sleep", "elsewhere:1", beat_age=1)
    remote_stale = _running(session, "test.sleep", "elsewhere:2", beat_age=600)
    with app.app_context():
        touched = jobs.recover_jobs(
            app.extensions["gpuvet.engine"], app=app, stale_after=timedelta(seconds=60)
        )
    assert sorted(touched["interrupted"]) == sorted([dead.id, remote_stale.id])
    assert touched["requeued"] == [dead_idempotent.id]
    assert _fresh(app, alive.id).state == _fresh(app, remote_fresh.id).state == JobState.running
    interrupted = _fresh(app, dead.id)
    assert interrupted.state == JobState.interrupted and str(dead_pid) in interrupted.error
    rerun = _fresh(app, dead_idempotent.id)  # immediate mode: queued again and run at once
    assert rerun.state == JobState.succeeded and rerun.attempts == 1 and "已重新排队" in rerun.error


def test_recovery_hands_queued_jobs_missing_from_the_queue_back_to_it(app, session, immediate_jobs):
    lost = _queued(session, kind="test.echo", params={"lost": True})
    lost.created_at = datetime.now(UTC) - timedelta(minutes=5)
    fresh = _queued(session, kind="test.echo", params={"fresh": True})
    session.add(lost)
    session.commit()
    with app.app_context():
        touched = jobs.recover_jobs(
            app.extensions["gpuvet.engine"], app=app, stale_after=timedelta(seconds=60)
        )
    assert touched["requeued"] == [lost.id]
    assert _fresh(app, lost.id).state == JobState.succeeded
    assert _fresh(app, fresh.id).state == JobState.queued  # may still be on its way into the queue


def test_sqlite_queue_is_the_default_and_redis_when_configured(app, tmp_path):
    from huey import RedisHuey, SqliteHuey

    from app import create_app
    from app.core.config import Settings

    huey = jobs.get_huey(app)
    assert isinstance(huey, SqliteHuey) and huey.storage.filename.endswith("jobs.sqlite3")
    settings = Settings(
        GPUVET_INSTANCE_PATH=tmp_path / "r",
        DATABASE_URL=f"sqlite:///{tmp_path}/r.db",
        REDIS_URL="redis://127.0.0.1:1/0",
    )
    assert isinstance(jobs.get_huey(create_app(settings)), RedisHuey)


@pytest.mark.parametrize(
    ("language", "expected"), [("zh", "供应商 999999 不存在"), ("en", "provider 999999 does")]
)
def test_a_job_speaks_the_language_of_whoever_started_it(app, session, immediate_jobs, language, expected):
    with app.test_request_context("/"):
        flask.session["lang"] = language
        job = jobs.enqueue(session, kind="vetting.check", params={"provider_id": 999999})
    assert job.state == JobState.failed and expected in job.error
    assert job.params == {"provider_id": 999999, "_locale": language}
    with app.app_context():  # started without a request (schedules, CLI): no language stored, Chinese
        quiet = jobs.enqueue(session, kind="vetting.check", params={"provider_id": 999999})
    assert quiet.params == {"provider_id": 999999} and "供应商 999999 不存在" in quiet.error
