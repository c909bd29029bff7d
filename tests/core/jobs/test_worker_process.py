"""The job queue for real: a Huey consumer in its own process on a temporary SQLite queue file.

Each test starts `tests/core/jobs/worker_main.py` (the app's run_worker plus the test job kinds) against the
test database, enqueues through the app, and waits (bounded) for the rows to change. One test kills the
worker with SIGKILL in the middle of two jobs and starts another: the job that was running is marked
interrupted, the idempotent one is run again, and the job still waiting in the queue runs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlmodel import Session

import tests.core.jobs.kinds  # noqa: F401 - registers the test job kinds in this process too
from app.core import jobs
from app.models.jobs import Job, JobState
from app.registry.providers import create_provider

ROOT = Path(__file__).resolve().parents[3]
WORKER = ROOT / "tests" / "core" / "jobs" / "worker_main.py"
DEADLINE_S = 60


@contextmanager
def worker(
    app,
    database_url: str,
    log: Path,
    threads: int = 2,
    redis_url: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> Iterator[subprocess.Popen]:
    """A worker process for the app's database and queue; killed at the end whatever happens.

    Its schedules are off (they would start a daily re-check) unless `extra_env` turns them on.
    """
    settings = app.config["GPUVET_SETTINGS"]
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "GPUVET_INSTANCE_PATH": str(settings.instance_path),
        "GPUVET_JOBS_HEARTBEAT_S": "0.5",
        "GPUVET_SCHEDULES": "0",
        "PYTHONPATH": str(ROOT),
        **(extra_env or {}),
    }
    env.pop("REDIS_URL", None)
    env.pop("GPUVET_JOBS_IMMEDIATE", None)
    if redis_url:
        env["REDIS_URL"] = redis_url
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, str(WORKER), str(threads)],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=15)


def wait_for(app, job_id: int, states: set[str], log: Path) -> Job:
    """The job once it is in one of `states` (fails after DEADLINE_S with the worker's log)."""
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        with Session(app.extensions["gpuvet.engine"]) as session:
            job = session.get(Job, job_id)
            if job.state in states:
                return job
        time.sleep(0.1)
    pytest.fail(
        f"job {job_id} still {job.state} after {DEADLINE_S} s; worker log:\n{log.read_text()[-4000:]}"
    )


def test_worker_runs_a_check_and_stores_a_failure(app, session, database_url, tmp_path):
    log = tmp_path / "worker.log"
    provider = create_provider(
        session, data={"legal_name": "示例队列科技有限公司", "website": "https://q.example"}
    )
    with app.app_context():
        check = jobs.enqueue(
            session, kind="vetting.check", params={"provider_id": provider.id}, provider_id=provider.id
        )
        failing = jobs.enqueue(session, kind="test.fail", params={"code": 42})
    assert check.state == failing.state == JobState.queued  # nothing runs until a worker does
    with worker(app, database_url, log) as process:
        done = wait_for(app, check.id, {JobState.succeeded, JobState.failed}, log)
        assert done.state == JobState.succeeded, done.error
        assert done.result["verdict"] == "needs_review" and done.worker.endswith(f":{process.pid}")
        failed = wait_for(app, failing.id, {JobState.failed}, log)
        assert failed.error == "ValueError: boom 42" and failed.finished_at is not None
        process.send_signal(signal.SIGINT)  # graceful stop
        assert process.wait(timeout=20) == 0


def test_killing_the_worker_mid_job_loses_nothing(app, session, database_url, tmp_path):
    log = tmp_path / "worker.log"
    provider = create_provider(session, data={"legal_name": "示例重启科技有限公司"})
    with app.app_context():
        slow = jobs.enqueue(session, kind="test.sleep", params={"seconds": 120})
        again = jobs.enqueue(session, kind="test.sleep_idempotent", params={"seconds": 2})
    with worker(app, database_url, log) as first:
        wait_for(app, slow.id, {JobState.running}, log)
        wait_for(app, again.id, {JobState.running}, log)
        with app.app_context():  # both worker threads are busy: this one waits in the queue
            waiting = jobs.enqueue(session, kind="vetting.check", params={"provider_id": provider.id})
        time.sleep(0.3)
        first.kill()
        first.wait(timeout=15)
    with Session(app.extensions["gpuvet.engine"]) as check:
        assert check.get(Job, slow.id).state == JobState.running  # nobody knows yet
        assert check.get(Job, waiting.id).state == JobState.queued
    with worker(app, database_url, log) as second:
        interrupted = wait_for(app, slow.id, {JobState.interrupted}, log)
        assert str(first.pid) in interrupted.error and interrupted.finished_at is not None
        rerun = wait_for(app, again.id, {JobState.succeeded}, log)
        assert rerun.attempts == 2 and rerun.worker.endswith(f":{second.pid}")
        assert (
            wait_for(app, waiting.id, {JobState.succeeded, JobState.failed}, log).state == JobState.succeeded
        )
