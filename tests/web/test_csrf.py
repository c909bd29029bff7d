"""CSRF protection on every form: a post without the token is refused, with it accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import create_app
from app.core.config import Settings
from tests.conftest import PASSWORD, csrf_token_from

CSRF_MESSAGE = "表单已过期或缺少 CSRF 令牌"


@pytest.fixture
def csrf_app(app, database_url: str, tmp_path: Path):
    """Same database as `app` (already emptied), CSRF checks switched on."""
    settings = Settings(GPUVET_INSTANCE_PATH=tmp_path / "csrf-instance", DATABASE_URL=database_url)
    flask_app = create_app(settings, TESTING=True, WTF_CSRF_ENABLED=True)
    yield flask_app
    flask_app.extensions["gpuvet.engine"].dispose()


def _login(client) -> None:
    token = csrf_token_from(client.get("/login").get_data(as_text=True))
    response = client.post("/login", data={"username": "carol", "password": PASSWORD, "csrf_token": token})
    assert response.status_code == 302


def test_login_without_token_is_refused(csrf_app, make_user):
    make_user("carol", "analyst")
    response = csrf_app.test_client().post("/login", data={"username": "carol", "password": PASSWORD})
    assert response.status_code == 400
    assert CSRF_MESSAGE in response.get_data(as_text=True)


def test_form_post_needs_the_token(csrf_app, make_user):
    make_user("carol", "analyst")
    client = csrf_app.test_client()
    _login(client)

    refused = client.post("/providers/new", data={"legal_name": "无令牌科技有限公司", "status": "candidate"})
    assert refused.status_code == 400
    assert CSRF_MESSAGE in refused.get_data(as_text=True)
    assert "无令牌科技有限公司" not in client.get("/providers").get_data(as_text=True)

    bad = client.post(
        "/providers/new",
        data={"legal_name": "假令牌科技有限公司", "status": "candidate", "csrf_token": "forged"},
    )
    assert bad.status_code == 400

    token = csrf_token_from(client.get("/providers/new").get_data(as_text=True))
    accepted = client.post(
        "/providers/new",
        data={"legal_name": "有令牌科技有限公司", "status": "candidate", "csrf_token": token},
    )
    assert accepted.status_code == 302
    assert "有令牌科技有限公司" in client.get("/providers").get_data(as_text=True)


def test_logout_needs_the_token(csrf_app, make_user):
    make_user("carol", "viewer")
    client = csrf_app.test_client()
    _login(client)
    assert client.post("/logout").status_code == 400
    assert client.get("/providers").status_code == 200
    token = csrf_token_from(client.get("/providers").get_data(as_text=True))
    assert client.post("/logout", data={"csrf_token": token}).status_code == 302
    assert client.get("/providers").status_code == 302
