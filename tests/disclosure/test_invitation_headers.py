"""Inviting by e-mail never answers 500: a line break in a name or address (header injection) is refused
before the mail code, naming the field, and the mail code itself turns such a header into a MailError."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlmodel import select

from app.core.config import Settings
from app.models import Provider
from app.models.disclosure import Invitation
from app.notify.mailer import MailError, build_message
from tests.live_server import free_port
from tests.web.conftest import provider_data

# Storage matters in only some tests; the others run on SQLite alone (PostgreSQL adds seconds per test).
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

INJECTED = "示例算力有限公司\r\nBcc: victim@example.com"


@pytest.fixture
def mailbox(app) -> Iterator[list[str]]:
    """Messages received by an SMTP server on loopback that the app is configured to send through."""
    from aiosmtpd.controller import Controller

    received: list[str] = []

    class Handler:
        async def handle_DATA(self, server, smtp_session, envelope):
            received.append(envelope.content.decode("utf-8", "replace"))
            return "250 OK"

    port = free_port()
    controller = Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    settings = app.config["GPUVET_SETTINGS"]
    app.config["GPUVET_SETTINGS"] = settings.model_copy(
        update={"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_starttls": False}
    )
    try:
        yield received
    finally:
        controller.stop()


def invite(app, headers, **body):
    return app.test_client().post("/api/v1/invitations", json=body, headers=headers)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"legal_name": INJECTED, "email": "ops@example.com"}, "legal_name"),
        ({"legal_name": "示例算力有限公司", "email": "ops@example.com\r\nBcc: victim@example.com"}, "email"),
        ({"legal_name": "示例算力\u2028有限公司", "email": "ops@example.com"}, "legal_name"),
    ],
)
def test_a_line_break_in_the_name_or_address_is_refused_naming_the_field(
    app, session, token_for, mailbox, body, field
):
    response = invite(app, token_for("analyst"), **body)
    assert response.status_code == 422, response.get_data(as_text=True)[:300]
    assert [error["field"] for error in response.json["errors"]] == [field]
    assert mailbox == [] and session.exec(select(Invitation)).first() is None


@SQLITE_ONLY
def test_a_provider_stored_with_a_line_break_in_its_name_is_not_mailed(app, session, token_for, mailbox):
    provider = Provider(**provider_data(legal_name=INJECTED))  # as stored before names were checked
    session.add(provider)
    session.commit()
    response = invite(app, token_for("analyst"), provider_id=provider.id, email="ops@example.com")
    assert response.status_code == 422
    assert [error["field"] for error in response.json["errors"]] == ["provider_id"]
    assert "名称含换行符" in response.json["errors"][0]["message"]
    assert mailbox == [] and session.exec(select(Invitation)).first() is None


def test_the_mail_code_refuses_a_header_with_a_line_break():
    settings = Settings(GPUVET_SMTP_HOST="127.0.0.1")
    with pytest.raises(MailError):
        build_message(settings, "ops@example.com", INJECTED, "text", None)
    with pytest.raises(MailError):
        build_message(settings, "ops@example.com\r\nBcc: victim@example.com", "subject", "text", None)
