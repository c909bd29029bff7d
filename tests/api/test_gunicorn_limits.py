"""The served configuration: a real gunicorn with gunicorn.conf.py lets the app answer long URLs and big
headers (414 / 431) in its own error shape, instead of gunicorn's plain-text pages."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.config import PROJECT_ROOT

START_TIMEOUT_S = 30


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_until_listening(process: subprocess.Popen, port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"gunicorn exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    pytest.fail(f"gunicorn did not listen on {port} within {START_TIMEOUT_S} s")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """gunicorn as scripts/run.sh starts it (same config file), on a free loopback port and a temp SQLite."""
    instance = tmp_path_factory.mktemp("gunicorn")
    env = {
        **os.environ,
        "GPUVET_INSTANCE_PATH": str(instance),
        "DATABASE_URL": f"sqlite:///{instance / 'gpuvet.sqlite3'}",
    }
    port = _free_port()
    gunicorn = Path(sys.executable).with_name("gunicorn")
    command = [str(gunicorn), "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}", "--workers", "1"]
    command.append("--no-control-socket")  # the default socket path is shared with any other gunicorn
    process = subprocess.Popen(
        [*command, "wsgi:app"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_until_listening(process, port)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type", ""), response.read().decode()
    finally:
        connection.close()


def _errors(content_type: str, body: str) -> list[dict[str, str]]:
    assert content_type.startswith("application/json"), (content_type, body[:300])
    return json.loads(body)["errors"]


def test_url_past_gunicorns_default_limit_reaches_the_app(server):
    status, content_type, body = _get(server, "/api/v1/providers?q=" + "x" * 6000)
    assert status == 401 and _errors(content_type, body)


def test_long_url_is_414_in_the_error_shape(server):
    status, content_type, body = _get(server, "/api/v1/providers?q=" + "x" * 20_000)
    assert status == 414
    assert "URI too long" in _errors(content_type, body)[0]["message"]
    status, content_type, body = _get(server, "/providers?q=" + "x" * 20_000)
    assert status == 414 and content_type.startswith("text/html") and "网址过长" in body


def test_big_header_is_431_in_the_error_shape(server):
    status, content_type, body = _get(server, "/api/v1/providers", {"X-Big": "y" * 12_000})
    assert status == 431
    assert "header" in _errors(content_type, body)[0]["message"]
    many = {f"X-Header-{i}": "1" for i in range(150)}
    status, content_type, body = _get(server, "/api/v1/providers", many)
    assert status == 431 and _errors(content_type, body)
