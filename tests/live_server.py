"""Serve the real app with gunicorn (several worker processes) on a free loopback port, for tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

from app.core.config import PROJECT_ROOT

START_TIMEOUT_S = 60.0


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_until_serving(base_url: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            requests.get(f"{base_url}/login", timeout=10)
            return
        except requests.RequestException:
            time.sleep(0.2)
    raise RuntimeError(f"gunicorn did not answer within {START_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")


@contextmanager
def gunicorn_server(
    *,
    database_url: str,
    instance_path: Path,
    workers: int = 4,
    extra_env: dict[str, str] | None = None,
    control_socket: bool = False,
) -> Iterator[str]:
    """Run `gunicorn wsgi:app` with `workers` sync workers; yields the base URL, always stops it.

    With `control_socket`, gunicorn opens the one gunicorn.conf.py names (in the instance folder).
    """
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "GPUVET_INSTANCE_PATH": str(instance_path),
        **(extra_env or {}),
    }
    log = instance_path.parent / f"gunicorn-{port}.log"
    # As scripts/run.sh serves it (gunicorn.conf.py), without a control socket unless asked for.
    command = [
        sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py",
        *(() if control_socket else ("--no-control-socket",)),
        "--workers", str(workers), "--bind", f"127.0.0.1:{port}", "--timeout", "120", "wsgi:app",
    ]  # fmt: skip
    with log.open("wb") as output:
        process = subprocess.Popen(
            command, cwd=PROJECT_ROOT, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    base_url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(base_url, process, log)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
