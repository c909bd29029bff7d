"""The served configuration: a real gunicorn with gunicorn.conf.py lets the app answer long URLs and big
headers (414 / 431) in its own error shape, instead of gunicorn's plain-text pages."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest

from tests.live_server import gunicorn_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """gunicorn as scripts/run.sh starts it (same config file), on a free loopback port and a temp SQLite."""
    instance = tmp_path_factory.mktemp("gunicorn")
    database_url = f"sqlite:///{instance / 'gpuvet.sqlite3'}"
    with gunicorn_server(database_url=database_url, instance_path=instance / "instance", workers=1) as base:
        yield int(base.rsplit(":", 1)[1])


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
    status, content_type, body = _get(
        server, "/api/v1/providers?q=" + "x" * 20_000, {"Accept-Language": "en"}
    )
    assert status == 414
    assert "URL too long" in _errors(content_type, body)[0]["message"]
    status, content_type, body = _get(server, "/providers?q=" + "x" * 20_000)
    assert status == 414 and content_type.startswith("text/html") and "网址过长" in body


def test_big_header_is_431_in_the_error_shape(server):
    status, content_type, body = _get(server, "/api/v1/providers", {"X-Big": "y" * 12_000})
    assert status == 431
    assert "请求头过大" in _errors(content_type, body)[0]["message"]
    many = {f"X-Header-{i}": "1" for i in range(150)}
    status, content_type, body = _get(server, "/api/v1/providers", many)
    assert status == 431 and _errors(content_type, body)
