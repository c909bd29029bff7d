"""Reminders carry a link: a fresh token is issued (the old link stops working), e-mailed and shown once."""

from __future__ import annotations

import re
from email import message_from_bytes, policy

from sqlmodel import col, select

from app.disclosure import invitations
from app.disclosure import uploads as disclosure_uploads
from app.models import AuditEntry
from app.models.disclosure import InvitationEvent
from tests.disclosure import samples
from tests.disclosure.test_review import smtp, submitted  # noqa: F401 - smtp is a fixture

LINK = re.compile(r'id="invitation-link" readonly value="([^"]+)"')


def remind(analyst, invitation_id: int, **form: str) -> tuple[object, str | None]:
    """Send a reminder through the list's button; the response and the link it shows (None: none shown)."""
    response = analyst.post(f"/invitations/{invitation_id}/remind", data=form)
    found = LINK.search(response.get_data(as_text=True))
    return response, found.group(1) if found else None


def test_a_reminder_issues_a_new_link_mails_it_and_keeps_the_draft(app, session, login, smtp):  # noqa: F811
    analyst = login("analyst")
    invitation, old_token = samples.invite(session, email="ops@decl.example")
    upload = disclosure_uploads.store(
        session,
        invitation,
        field="topology.diagram_upload_id",
        filename="拓扑图.png",
        checked=disclosure_uploads.check(samples.png(), field="topology.diagram_upload_id", max_bytes=10**6),
    )
    invitation.status = "draft"
    values = {"identity.legal_name": "草稿里的名称", "topology.diagram_upload_id": str(upload.id)}
    invitation.draft = {"values": values, "rows": {}}
    session.add(invitation)
    session.commit()

    response, url = remind(analyst, invitation.id)
    assert response.status_code == 200 and url is not None and "/d/" in url
    assert response.headers["Cache-Control"] == "private, no-store"
    new_token = url.rsplit("/", 1)[1]
    assert new_token != old_token
    assert invitations.find(session, old_token) is None  # the old link stops working
    assert invitations.find(session, new_token).id == invitation.id

    assert len(smtp) == 1 and smtp[0].rcpt_tos == ["ops@decl.example"]
    mail = message_from_bytes(smtp[0].content, policy=policy.default).get_content()
    assert url in mail and old_token not in mail

    provider = app.test_client()
    assert provider.get(f"/d/{old_token}").status_code == 404
    form = provider.get(f"/d/{new_token}").get_data(as_text=True)
    assert "草稿里的名称" in form and "拓扑图.png" in form  # the draft and the upload stay
    assert provider.get(f"/d/{new_token}/files/{upload.id}").status_code == 200

    session.expire_all()
    event = session.exec(select(InvitationEvent).where(InvitationEvent.kind == "reminded")).one()
    assert event.details["new_link"] is True and event.details["emailed"] is True
    assert new_token not in str(event.details)
    audit = session.exec(
        select(AuditEntry)
        .where(AuditEntry.entity == "invitation", AuditEntry.entity_id == invitation.id)
        .order_by(col(AuditEntry.id).desc())
    ).first()
    assert audit.actor_name == "analyst" and audit.changes["reminders"] == [0, 1]
    assert "token_hash" not in audit.changes


def test_without_mail_the_new_link_is_shown_once_and_each_reminder_renews_it(app, session, login):
    analyst = login("analyst")
    invitation, old_token = samples.invite(session)
    response, first = remind(analyst, invitation.id)
    assert first is not None and "未登记邮箱" in response.get_data(as_text=True)
    assert invitations.find(session, old_token) is None
    _again, second = remind(analyst, invitation.id)
    assert second is not None and second != first
    assert invitations.find(session, first.rsplit("/", 1)[1]) is None
    assert invitations.find(session, second.rsplit("/", 1)[1]).id == invitation.id
    listing = analyst.get("/invitations").get_data(as_text=True)
    assert LINK.search(listing) is None and second not in listing  # shown only on the reminder's page


def test_a_refused_reminder_keeps_the_link_and_goes_back_only_to_this_site(app, session, login):
    analyst = login("analyst")
    done = submitted(session)
    before = done.token_hash
    response, url = remind(analyst, done.id, next="https://elsewhere.example/")
    assert response.status_code == 302 and response.location.endswith("/invitations") and url is None
    session.refresh(done)
    assert done.token_hash == before and done.reminders == 0
