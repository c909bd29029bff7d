"""REDIS_URL set: two worker processes share one real Redis queue (redis-server on loopback)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
import redis
from sqlmodel import Session

import tests.core.jobs.kinds  # noqa: F401 - registers the test job kinds
from app import create_app
from app.core import jobs
from app.core.config import Settings
from app.models.jobs import JobState
from tests.conftest import missing_tool
from tests.core.jobs.test_worker_process import wait_for, worker

REDIS_SERVER = shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def redis_url(tmp_path) -> Iterator[str]:
    """A throw-away redis-server on a free loopback port, no persistence, stopped afterwards."""
    if REDIS_SERVER is None:  # scripts/install.sh installs redis-server
        missing_tool("redis-server is not installed")
    port = _free_port()
    process = subprocess.Popen(
        [
            REDIS_SERVER,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or process.poll() is not None:
                    pytest.fail("redis-server did not start")
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_two_workers_share_one_redis_queue(app, database_url, redis_url, tmp_path):
    settings = Settings(
        GPUVET_INSTANCE_PATH=tmp_path / "redis-instance", DATABASE_URL=database_url, REDIS_URL=redis_url
    )
    redis_app = create_app(settings)
    assert type(jobs.get_huey(redis_app)).__name__ == "RedisHuey"
    with (
        Session(redis_app.extensions["gpuvet.engine"], expire_on_commit=False) as session,
        redis_app.app_context(),
    ):
        queued = [jobs.enqueue(session, kind="test.sleep", params={"seconds": 0.6}) for _ in range(6)]
    log = tmp_path / "workers.log"
    with ExitStack() as stack:
        pids = {
            stack.enter_context(worker(redis_app, database_url, log, threads=1, redis_url=redis_url)).pid
            for _ in range(2)
        }
        done = [wait_for(redis_app, job.id, {JobState.succeeded, JobState.failed}, log) for job in queued]
    assert all(job.state == JobState.succeeded for job in done), [job.error for job in done]
    used = {int(job.worker.rsplit(":", 1)[1]) for job in done}
    assert used == pids  # both workers took jobs from the shared queue
    redis_app.extensions["gpuvet.engine"].dispose()
