"""Invitations: API and CLI, token only as a hash, expiry, revocation, e-mail, events and guess throttling."""

from __future__ import annotations

import hashlib
import json
import threading
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from app.disclosure import invitations
from app.models import AuditEntry
from app.models.disclosure import Invitation, InvitationEvent
from tests.disclosure import samples
from tests.live_server import free_port
from tests.web.conftest import provider_data

# Storage matters in only some tests; the others run on SQLite alone (PostgreSQL adds seconds per test).
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


def _events(session: Session, invitation_id: int) -> list[str]:
    session.expire_all()
    return [event.kind for event in invitations.events(session, invitation_id=invitation_id)]


@SQLITE_ONLY
def test_api_invites_an_existing_provider_and_stores_only_the_tokens_hash(app, session, token_for):
    from app.registry.providers import create_provider

    provider = create_provider(session, data=provider_data())
    response = app.test_client().post(
        "/api/v1/invitations", json={"provider_id": provider.id}, headers=token_for("analyst")
    )
    assert response.status_code == 201, response.json
    body = response.json
    token = body["url"].rsplit("/d/", 1)[1]
    assert len(token) >= 43 and body["url"].startswith("http://localhost/d/")
    invitation = session.get(Invitation, body["id"])
    assert invitation.provider_id == provider.id and invitation.legal_name == provider.legal_name
    assert invitation.token_hash == hashlib.sha256(token.encode()).hexdigest()
    row = session.connection().execute(sa.text("SELECT * FROM invitation")).mappings().one()
    assert token not in json.dumps({key: str(value) for key, value in row.items()})
    expires = datetime.fromisoformat(body["expires_at"])
    assert timedelta(days=13, hours=23) < expires - datetime.now(UTC) <= timedelta(days=14)
    created = session.exec(select(AuditEntry).where(AuditEntry.entity == "invitation")).one()
    assert created.action == "create" and created.actor_name == "api-analyst"
    assert "token_hash" not in created.changes


@SQLITE_ONLY
def test_api_invites_a_new_provider_by_name_with_its_own_lifetime(app, session, token_for):
    response = app.test_client().post(
        "/api/v1/invitations",
        json={"legal_name": "新邀请算力有限公司", "expires_in_days": 3},
        headers=token_for("analyst"),
    )
    assert response.status_code == 201
    invitation = session.get(Invitation, response.json["id"])
    assert invitation.provider_id is None and invitation.legal_name == "新邀请算力有限公司"
    assert timedelta(days=2, hours=23) < invitation.expires_at.replace(tzinfo=UTC) - datetime.now(UTC)


BAD_BODIES = [
    ({}, 422, ""),
    ({"provider_id": 1, "legal_name": "两者都给有限公司"}, 422, ""),
    ({"provider_id": 999}, 404, "provider_id"),
    ({"legal_name": "某公司", "expires_in_days": 0}, 422, "expires_in_days"),
    ({"legal_name": "某公司", "expires_in_days": True}, 422, "expires_in_days"),
    ({"legal_name": "某公司", "email": "not-an-address"}, 422, "email"),
    ({"legal_name": "某公司", "token": "chosen"}, 422, "token"),
]


@SQLITE_ONLY
def test_api_bad_input_names_the_field(app, token_for):
    headers = token_for("analyst")
    for body, status, field in BAD_BODIES:
        response = app.test_client().post("/api/v1/invitations", json=body, headers=headers)
        assert response.status_code == status, (body, response.json)
        assert field in [error["field"] for error in response.json["errors"]], (body, response.json)


@SQLITE_ONLY
def test_api_needs_an_analyst(app, token_for):
    response = app.test_client().post(
        "/api/v1/invitations", json={"legal_name": "某某公司"}, headers=token_for("viewer")
    )
    assert response.status_code == 403


@SQLITE_ONLY
def test_cli_prints_the_json_and_is_audited(app, session):
    from app.registry.providers import create_provider

    provider = create_provider(session, data=provider_data())
    result = app.test_cli_runner().invoke(args=["invite", str(provider.id), "--expires-days", "5"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert "GPUVET_PUBLIC_URL" in result.stderr
    assert set(body) >= {"id", "url", "expires_at"} and "/d/" in body["url"]
    entry = session.exec(select(AuditEntry).where(AuditEntry.entity == "invitation")).one()
    assert (entry.actor_name, entry.provider_id, entry.entity_id) == ("cli", provider.id, body["id"])
    missing = app.test_cli_runner().invoke(args=["invite", "999"])
    assert missing.exit_code == 1 and "provider_id" in missing.output


@SQLITE_ONLY
def test_the_link_is_e_mailed_when_smtp_is_configured(app, session):
    from aiosmtpd.controller import Controller

    received: list[str] = []

    class Handler:
        async def handle_DATA(self, server, smtp_session, envelope):
            received.append(envelope.content.decode("utf-8", "replace"))
            return "250 OK"

    port = free_port()
    controller = Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        settings = app.config["GPUVET_SETTINGS"].model_copy(
            update={
                "smtp_host": "127.0.0.1",
                "smtp_port": port,
                "smtp_starttls": False,
                "public_url": "https://gpuvet.example.cn",
            }
        )
        app.config["GPUVET_SETTINGS"] = settings
        with app.app_context():
            created = invitations.create(
                session, data={"legal_name": "邮件邀请有限公司", "email": "ops@example.com"}
            )
    finally:
        controller.stop()
    assert created.mailed and created.url == f"https://gpuvet.example.cn/d/{created.token}"
    assert len(received) == 1 and "ops@example.com" in received[0]
    assert "created" in _events(session, created.invitation.id)


@SQLITE_ONLY
def test_views_saves_and_submission_are_logged(app, session):
    invitation, token = samples.invite(session)
    client = app.test_client()
    assert client.get(f"/d/{token}").status_code == 200
    client.post(f"/d/{token}", data={"identity.legal_name": "示例披露算力科技有限公司", "action": "save"})
    client.post(
        f"/d/{token}",
        data={
            "identity.legal_name": "示例披露算力科技有限公司",
            "identity.uscc": samples.VALID_USCC,
            "action": "submit",
            "confirm_submit": "yes",
        },
    )
    assert _events(session, invitation.id) == ["created", "viewed", "draft_saved", "submitted"]
    session.refresh(invitation)
    assert invitation.status == "submitted" and invitation.opened_at and invitation.submitted_at


def _gone_page(client, token: str) -> str:
    response = client.get(f"/d/{token}")
    assert response.status_code == 404
    assert response.headers["Cache-Control"] == "private, no-store"
    return response.get_data(as_text=True)


@SQLITE_ONLY
def test_expired_revoked_and_wrong_tokens_get_the_same_plain_page(app, session):
    client = app.test_client()
    wrong = _gone_page(client, "x" * 43)
    expired, expired_token = samples.invite(session, legal_name="过期邀请有限公司")
    expired.expires_at = datetime.now(UTC) - timedelta(seconds=1)
    session.commit()
    revoked, revoked_token = samples.invite(session, legal_name="撤销邀请有限公司")
    invitations.revoke(session, invitation_id=revoked.id, actor_name="tester")
    assert _gone_page(client, expired_token) == wrong
    assert _gone_page(client, revoked_token) == wrong
    assert "过期邀请" not in wrong and "撤销邀请" not in wrong
    assert client.post(f"/d/{revoked_token}", data={"action": "submit"}).status_code == 404
    assert _events(session, revoked.id) == ["created", "revoked", "refused", "refused"]
    assert invitations.state(expired) == "expired"


def test_wrong_tokens_are_rate_limited_per_client_address(app, session):
    app.config["GPUVET_SETTINGS"] = app.config["GPUVET_SETTINGS"].model_copy(
        update={"disclosure_token_guesses": 3}
    )
    _invitation, token = samples.invite(session)
    guesser = app.test_client()
    for attempt in range(3):
        assert (
            guesser.get(f"/d/guess{attempt}", environ_base={"REMOTE_ADDR": "203.0.113.9"}).status_code == 404
        )
    blocked = guesser.get(f"/d/{token}", environ_base={"REMOTE_ADDR": "203.0.113.9"})
    assert blocked.status_code == 429 and int(blocked.headers["Retry-After"]) > 0
    # another address is not affected, and the real token still works there
    assert guesser.get(f"/d/{token}", environ_base={"REMOTE_ADDR": "198.51.100.7"}).status_code == 200


def test_concurrent_guesses_are_all_counted(app, session):
    app.config["GPUVET_SETTINGS"] = app.config["GPUVET_SETTINGS"].model_copy(
        update={"disclosure_token_guesses": 4}
    )
    statuses: list[int] = []

    def guess(number: int) -> None:
        response = app.test_client().get(f"/d/guess{number}", environ_base={"REMOTE_ADDR": "203.0.113.50"})
        statuses.append(response.status_code)

    threads = [threading.Thread(target=guess, args=(number,)) for number in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [404] * 4
    assert app.test_client().get("/d/again", environ_base={"REMOTE_ADDR": "203.0.113.50"}).status_code == 429


@SQLITE_ONLY
def test_revoking_keeps_what_was_saved(app, session):
    invitation, token = samples.invite(session)
    app.test_client().post(
        f"/d/{token}", data={"identity.legal_name": "保存后撤销有限公司", "action": "save"}
    )
    invitations.revoke(session, invitation_id=invitation.id)
    session.refresh(invitation)
    assert invitation.status == "revoked" and invitation.revoked_at is not None
    assert invitation.draft["values"]["identity.legal_name"] == "保存后撤销有限公司"
    events = session.exec(select(InvitationEvent).where(InvitationEvent.kind == "revoked")).all()
    assert len(events) == 1
