"""API tokens: listing, revoking, expiry, last use noted at most once a minute and never blocking a read."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import select

from app.accounts import users
from app.models import ApiToken
from tests.api.conftest import assert_error_shape


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _issue(session, make_user, name: str, role: str = "viewer", **kwargs) -> str:
    """A new user `name` with one token."""
    make_user(name, role)
    return users.issue_token(session, username=name, **kwargs)


def _row(session, token_id: int) -> ApiToken:
    session.expire_all()
    return session.get(ApiToken, token_id)


def test_a_user_lists_their_own_tokens_without_secrets(api, session, make_user):
    mine = _issue(session, make_user, "ana")
    users.issue_token(session, username="ana", expires_days=30)
    make_user("ben", "viewer")
    users.issue_token(session, username="ben")
    response = api.get("/api/v1/tokens", headers=_bearer(mine))
    assert response.status_code == 200
    items = response.get_json()["items"]
    assert {item["username"] for item in items} == {"ana"} and len(items) == 2
    assert all(item["state"] == "active" for item in items)
    assert items[0]["expires_at"] is not None and items[1]["expires_at"] is None
    assert items[1]["last_used_at"] is not None  # the call itself was noted
    assert mine not in response.get_data(as_text=True)
    assert "token_hash" not in items[0]


def test_an_admin_lists_everyones_tokens(api, session, make_user):
    admin = _issue(session, make_user, "root", "admin")
    make_user("ben", "viewer")
    users.issue_token(session, username="ben")
    items = api.get("/api/v1/tokens", headers=_bearer(admin)).get_json()["items"]
    names = {item["username"] for item in items}
    assert names == {"root", "ben"}


def test_a_revoked_token_gets_the_401_shape(api, session, make_user):
    token = _issue(session, make_user, "ana")
    spare = users.issue_token(session, username="ana")
    token_id = max(t.id for t, _ in users.list_tokens(session))
    assert api.delete(f"/api/v1/tokens/{token_id}", headers=_bearer(token)).status_code == 204
    response = api.get("/api/v1/providers", headers=_bearer(spare))
    assert assert_error_shape(response, 401)[0]["field"] == "Authorization"
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]
    assert api.get("/api/v1/providers", headers=_bearer(token)).status_code == 200
    assert _row(session, token_id).revoked_at is not None


def test_another_users_token_cannot_be_revoked_by_a_non_admin(api, session, make_user):
    token = _issue(session, make_user, "ana")
    make_user("ben", "viewer")
    users.issue_token(session, username="ben")
    (ben_token, _), *_ = users.list_tokens(session)
    response = api.delete(f"/api/v1/tokens/{ben_token.id}", headers=_bearer(token))
    assert assert_error_shape(response, 404)[0]["field"] == "id"
    assert _row(session, ben_token.id).revoked_at is None


def test_an_admin_revokes_anyones_token(api, session, make_user):
    admin = _issue(session, make_user, "root", "admin")
    make_user("ben", "viewer")
    ben = users.issue_token(session, username="ben")
    (ben_token, _), *_ = users.list_tokens(session)
    assert api.delete(f"/api/v1/tokens/{ben_token.id}", headers=_bearer(admin)).status_code == 204
    assert api.get("/api/v1/providers", headers=_bearer(ben)).status_code == 401


def test_an_expired_token_gets_the_401_shape(api, session, make_user):
    token = _issue(session, make_user, "ana", expires_days=1)
    assert api.get("/api/v1/providers", headers=_bearer(token)).status_code == 200
    row = session.exec(select(ApiToken)).one()
    row.expires_at = datetime.now(UTC) - timedelta(seconds=1)
    session.commit()
    response = api.get("/api/v1/providers", headers=_bearer(token))
    assert assert_error_shape(response, 401)[0]["field"] == "Authorization"
    assert users.token_state(_row(session, row.id)) == "expired"


@pytest.mark.parametrize("days", [0, -1, users.MAX_TOKEN_DAYS + 1])
def test_expiry_days_are_bounded(session, make_user, days: int):
    make_user("ana", "viewer")
    with pytest.raises(users.InvalidInput, match="expires_days"):
        users.issue_token(session, username="ana", expires_days=days)


def test_the_token_operations_are_in_the_openapi_document(api):
    document = api.get("/api/v1/openapi.json").get_json()
    paths = document["paths"]
    assert "get" in paths["/tokens"] and "delete" in paths["/tokens/{token_id}"]
    assert paths["/tokens"]["get"]["tags"] == ["tokens"]
    assert "401" in paths["/tokens/{token_id}"]["delete"]["responses"]
    assert "TokenList" in document["components"]["schemas"]


# ---------------------------------------------------------------- reads do not write


def test_last_use_is_written_at_most_once_a_minute(api, session, make_user):
    token = _issue(session, make_user, "ana")
    row_id = session.exec(select(ApiToken)).one().id
    api.get("/api/v1/providers", headers=_bearer(token))
    first = _row(session, row_id).last_used_at
    assert first is not None
    api.get("/api/v1/providers", headers=_bearer(token))
    assert _row(session, row_id).last_used_at == first
    row = _row(session, row_id)
    row.last_used_at = first - timedelta(minutes=2)
    session.commit()
    api.get("/api/v1/providers", headers=_bearer(token))
    assert _row(session, row_id).last_used_at > first - timedelta(minutes=1)


@contextmanager
def _write_lock_held(engine: sa.Engine) -> Iterator[None]:
    """Another connection holds a write transaction: SQLite BEGIN IMMEDIATE, PostgreSQL apitoken row locks."""
    if engine.dialect.name == "sqlite":
        holder = sqlite3.connect(engine.url.database, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        return
    with engine.connect() as holder:
        holder.execute(sa.text("SELECT id FROM apitoken FOR UPDATE"))
        try:
            yield
        finally:
            holder.rollback()


def test_an_api_read_succeeds_while_another_connection_holds_a_write_lock(app, api, session, make_user):
    token = _issue(session, make_user, "ana")
    session.close()
    answers: list = []

    def call() -> None:
        started = time.monotonic()
        response = api.get("/api/v1/providers", headers=_bearer(token))
        answers.append((response.status_code, time.monotonic() - started))

    with _write_lock_held(app.extensions["gpuvet.engine"]):
        reader = threading.Thread(target=call, daemon=True)
        reader.start()
        reader.join(10)  # the old code waited 30 s for the lock, then answered 500
        assert answers, "the API read was still waiting for the write lock after 10 s"
    reader.join(60)
    status, seconds = answers[0]
    assert status == 200 and seconds < 5
    # the use was not recorded (the database was locked), so the next free call records it
    api.get("/api/v1/providers", headers=_bearer(token))
    assert session.exec(select(ApiToken)).one().last_used_at is not None
