"""The analyst's side of a disclosure: invitation list and status, reminders (real SMTP), revoke, review."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from typing import Any

import pytest
from sqlmodel import Session, select

from app.disclosure import comparison, invitations
from app.disclosure import review as disclosure_review
from app.models import Provider
from app.models.disclosure import Invitation, InvitationEvent
from app.registry.providers import create_provider
from tests.live_server import free_port

NAME = "示例申报算力科技有限公司"
USCC = "91110000802100433B"
# A complete questionnaire: every registry section and every red-flag-13 question answered.
ANSWERS: dict[str, Any] = {
    "identity": {
        "legal_name": NAME,
        "uscc": USCC,
        "registered_province": "北京",
        "website": "https://decl.example",
        "contact_email": "ops@decl.example",
    },
    "licences": [
        {"number_raw": "京B2-20202418", "business_items": ["B11", "B14"], "coverage": ["北京", "上海"]}
    ],
    "filings": [{"number_raw": "京ICP备10046444号-9"}],
    "certifications": [{"kind": "dengbao", "level": 3, "number": "DB-2025-001"}],
    "datacenters": [{"name": "亦庄机房", "province": "北京", "city": "北京", "tier": "tier3"}],
    "offers": [
        {
            "gpu_model": "H800",
            "gpus_per_node": 8,
            "datacenter_name": "亦庄机房",
            "intranet_gbps": 200,
            "storage_type": "local_nvme",
        }
    ],
    "topology": {
        "diagram_upload_id": 1,
        "oversubscription_ratio": "1:1",
        "uplink_gbps": 400,
        "shared_with": "无，专用链路",
    },
    "storage": {"location": "local_nvme", "raid": "raid10", "backup": "每日快照，保留 7 天"},
    "trial": {"will_lend": True, "how": "免费试用 3 天"},
}


def answers(**sections: Any) -> dict[str, Any]:
    """The complete answers with some sections replaced."""
    data = copy.deepcopy(ANSWERS)
    data.update(sections)
    return data


def invite(session: Session, *, provider_id: int | None = None, email: str = "", **fields: Any) -> Invitation:
    """An invitation made through the invitation service, then moved to the state the test needs."""
    data: dict[str, Any] = {"provider_id": provider_id} if provider_id else {"legal_name": NAME}
    if email:
        data["email"] = email
    invitation = invitations.create(session, data=data).invitation
    for name, value in fields.items():
        setattr(invitation, name, value)
    session.add(invitation)
    session.commit()
    return invitation


def submitted(session: Session, *, provider_id: int | None = None, data: dict | None = None) -> Invitation:
    """An invitation whose questionnaire the provider has submitted (stored as the form stores it)."""
    from app.disclosure.schema import Disclosure

    dumped = Disclosure.model_validate(data or ANSWERS).model_dump(mode="json")
    return invite(
        session,
        provider_id=provider_id,
        status="submitted",
        answers=dumped,
        submitted_at=datetime.now(UTC) - timedelta(hours=1),
    )


def registry_provider(session: Session) -> Provider:
    """A registered provider the declaration partly repeats and partly changes."""
    return create_provider(
        session,
        data={
            "legal_name": NAME,
            "uscc": USCC,
            "registered_province": "北京",
            "licences": [{"number_raw": "京B2-20202418", "business_items": "B11", "coverage": "北京"}],
            "datacenters": [{"name": "旧机房", "province": "河北"}],
        },
    )


def decide_all(client, invitation_id: int, decision: str = "accept", **overrides: str) -> Any:
    """Post a decision for every item shown on the review page (overrides: key -> decision)."""
    page = client.get(f"/invitations/{invitation_id}/review").get_data(as_text=True)
    keys = sorted(set(re.findall(r'name="decision-([^"]+)"', page)))
    form = {f"decision-{key}": overrides.get(key, decision) for key in keys}
    form.update({f"comment-{key}": f"意见 {key}" for key in overrides})
    return client.post(f"/invitations/{invitation_id}/review", data=form)


def item(items: list, key: str) -> Any:
    return next(entry for entry in items if entry.key == key)


# ---------------------------------------------------------------- list, status, filters
def test_list_shows_each_status_and_filters_by_it(app, session, login):
    analyst = login("analyst")
    now = datetime.now(UTC)
    sent = invite(session)
    expired = invite(session, expires_at=now - timedelta(days=1))
    revoked = invite(session, status="revoked", revoked_at=now)
    done = submitted(session)
    shown = analyst.get("/invitations").get_data(as_text=True)
    states = dict(re.findall(r'data-invitation="(\d+)" data-status="([a-z]+)"', shown))
    assert states == {
        str(sent.id): "sent",
        str(expired.id): "expired",
        str(revoked.id): "revoked",
        str(done.id): "submitted",
    }
    only_expired = analyst.get("/invitations?status=expired").get_data(as_text=True)
    assert re.findall(r'data-invitation="(\d+)"', only_expired) == [str(expired.id)]
    pending = analyst.get("/invitations?status=pending").get_data(as_text=True)
    assert sorted(re.findall(r'data-invitation="(\d+)"', pending)) == sorted([str(sent.id), str(done.id)])
    bad = analyst.get("/invitations?status=lost")
    assert bad.status_code == 422 and "status" in bad.get_data(as_text=True)
    assert disclosure_review.status_counts(session)["expired"] == 1


def test_viewers_cannot_see_invitations(app, login):
    assert login("viewer").get("/invitations").status_code == 403


# ---------------------------------------------------------------- reminders and revoke
@pytest.fixture
def smtp(app):
    """A real SMTP server on loopback (aiosmtpd) the app's settings point at; yields the received mail."""
    from aiosmtpd.controller import Controller

    received: list[Any] = []

    class Handler:
        async def handle_DATA(self, server, session, envelope):
            received.append(envelope)
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
        app.config["GPUVET_SETTINGS"] = settings
        controller.stop()


def test_reminder_is_recorded_and_emailed(app, session, login, smtp):
    analyst = login("analyst")
    invitation = invite(session, email="ops@decl.example")
    response = analyst.post(f"/invitations/{invitation.id}/remind", follow_redirects=True)
    assert "ops@decl.example" in response.get_data(as_text=True)
    session.refresh(invitation)
    assert invitation.reminders == 1 and invitation.last_reminder_at is not None
    event = session.exec(select(InvitationEvent).where(InvitationEvent.kind == "reminded")).one()
    assert event.details["emailed"] is True and event.details["by"] == "analyst"
    assert len(smtp) == 1 and smtp[0].rcpt_tos == ["ops@decl.example"]
    mail = message_from_bytes(smtp[0].content, policy=policy.default)
    assert NAME in mail["Subject"] and "尽调问卷" in mail.get_content()


def test_reminder_without_address_is_recorded_only(app, session, login):
    analyst = login("analyst")
    invitation = invite(session)
    response = analyst.post(f"/invitations/{invitation.id}/remind", follow_redirects=True)
    assert "未登记邮箱" in response.get_data(as_text=True)
    session.refresh(invitation)
    assert invitation.reminders == 1
    again = analyst.post(f"/invitations/{invitation.id}/remind")
    assert again.status_code == 200 and 'id="invitation-link"' in again.get_data(as_text=True)
    session.refresh(invitation)
    assert invitation.reminders == 2


def test_no_reminder_once_submitted_or_expired(app, session, login):
    analyst = login("analyst")
    done = submitted(session)
    old = invite(session, expires_at=datetime.now(UTC) - timedelta(minutes=1))
    for invitation in (done, old):
        page = analyst.post(f"/invitations/{invitation.id}/remind", follow_redirects=True).get_data(
            as_text=True
        )
        assert "不能再发提醒" in page
        session.refresh(invitation)
        assert invitation.reminders == 0


def test_revoke_ends_the_link(app, session, login):
    analyst = login("analyst")
    created = invitations.create(session, data={"legal_name": NAME})
    analyst.post(f"/invitations/{created.invitation.id}/revoke")
    session.refresh(created.invitation)
    assert created.invitation.status == "revoked" and created.invitation.revoked_at is not None
    assert disclosure_review.effective_status(created.invitation) == "revoked"


# ---------------------------------------------------------------- the comparison
def test_items_compare_the_submission_with_the_registry(app, session):
    provider = registry_provider(session)
    invitation = submitted(session, provider_id=provider.id)
    items = comparison.review_items(session, invitation)
    assert item(items, "identity.uscc").state == "unchanged"
    assert item(items, "identity.website").state == "added"
    licence = item(items, "licences.0")
    assert licence.state == "changed" and licence.record_id == provider.licences[0].id
    changed = {f.name: f.state for f in licence.fields}
    assert changed["business_items"] == "changed" and changed["coverage"] == "changed"
    datacenter = item(items, "datacenters.0")
    assert datacenter.state == "added" and datacenter.record_id is None
    tier = next(f for f in datacenter.fields if f.name == "tier")
    assert tier.state == "declared_only" and not tier.registry_field
    assert item(items, "topology").state == "answered"
    assert not item(items, "identity.uscc").needs_decision


def test_a_new_provider_has_every_item_added(app, session):
    invitation = submitted(session)
    items = comparison.review_items(session, invitation)
    assert {entry.state for entry in items if entry.section not in comparison.TOPICS} == {"added"}


# ---------------------------------------------------------------- decisions
def test_accept_and_reject_with_comments_until_reviewed(app, session, login):
    analyst = login("analyst")
    invitation = submitted(session)
    page = analyst.get(f"/invitations/{invitation.id}/review")
    assert page.status_code == 200 and "亦庄机房" in page.get_data(as_text=True)
    partly = analyst.post(
        f"/invitations/{invitation.id}/review",
        data={"decision-licences.0": "accept", "decision-certifications.0": "reject",
              "comment-certifications.0": "证书编号查无此证"},
    )  # fmt: skip
    assert partly.status_code == 302
    session.refresh(invitation)
    assert invitation.status == "submitted" and invitation.reviewed_at is None
    decisions = invitation.review["items"]
    assert decisions["certifications.0"]["decision"] == "reject"
    assert decisions["certifications.0"]["comment"] == "证书编号查无此证"
    assert decisions["licences.0"]["by"] == "analyst"
    assert decide_all(analyst, invitation.id, **{"certifications.0": "reject"}).status_code == 302
    session.refresh(invitation)
    assert invitation.status == "reviewed" and invitation.reviewed_at is not None
    assert invitation.review["items"]["certifications.0"]["decision"] == "reject"
    shown = analyst.get(f"/invitations/{invitation.id}/review").get_data(as_text=True)
    assert 'id="merge-form"' in shown


def test_bad_decisions_name_the_item(app, session, login):
    analyst = login("analyst")
    invitation = submitted(session)
    bad = analyst.post(f"/invitations/{invitation.id}/review", data={"decision-licences.0": "maybe"})
    assert bad.status_code == 422 and "decision-licences.0" in bad.get_data(as_text=True)
    unknown = analyst.post(f"/invitations/{invitation.id}/review", data={"decision-licences.9": "accept"})
    assert unknown.status_code == 422 and "问卷中没有这一项" in unknown.get_data(as_text=True)
    session.refresh(invitation)
    assert invitation.review == {}


def test_an_unsubmitted_invitation_has_no_review_page(app, session, login):
    analyst = login("analyst")
    invitation = invite(session)
    assert analyst.get(f"/invitations/{invitation.id}/review").status_code == 404
    refused = analyst.post(f"/invitations/{invitation.id}/review", data={"decision-licences.0": "accept"})
    assert refused.status_code == 302 and refused.location.endswith("/invitations")
    assert "只有已提交的问卷可以审核" in analyst.get("/invitations").get_data(as_text=True)


def test_review_page_links_an_uploaded_diagram_as_evidence(app, session, login):
    from app.disclosure import uploads as disclosure_uploads
    from tests.fakes.png import png

    analyst = login("analyst")
    invitation = submitted(session)
    checked = disclosure_uploads.check(png(40, 30), field="topology.diagram", max_bytes=1_000_000)
    upload = disclosure_uploads.store(
        session, invitation, field="topology.diagram", filename="拓扑图.png", checked=checked
    )
    invitation.answers = {
        **invitation.answers,
        "topology": {**invitation.answers["topology"], "diagram_upload_id": upload.id},
    }
    session.add(invitation)
    session.commit()
    page = analyst.get(f"/invitations/{invitation.id}/review").get_data(as_text=True)
    assert f'href="/evidence/{upload.evidence_id}"' in page and "拓扑图.png" in page
    assert f'src="/evidence/{upload.evidence_id}/image"' in page


def test_bad_input_is_named_never_a_server_error(app, session, login):
    analyst = login("analyst")
    listing = analyst.get("/invitations?page=abc&provider_id=x")
    assert listing.status_code == 422
    shown = listing.get_data(as_text=True)
    assert "page" in shown and "provider_id" in shown
    assert analyst.get("/invitations/999/review").status_code == 404
    assert analyst.post("/invitations/999/remind").status_code == 404
    provider_invite = submitted(session, provider_id=registry_provider(session).id)
    decide_all(analyst, provider_invite.id)
    stale = analyst.post(f"/invitations/{provider_invite.id}/merge", data={"version": "abc"})
    assert stale.status_code == 422 and "version" in stale.get_data(as_text=True)


def test_an_analyst_creates_an_invitation_and_sees_the_link_once(app, session, login):
    analyst = login("analyst")
    provider = registry_provider(session)
    form = analyst.get(f"/invitations/new?provider_id={provider.id}").get_data(as_text=True)
    assert f'value="{provider.id}"' in form
    created = analyst.post("/invitations/new", data={"provider_id": str(provider.id), "expires_in_days": "7"})
    page = created.get_data(as_text=True)
    link = re.search(r'id="invitation-link" readonly value="([^"]+)"', page)
    assert created.status_code == 200 and link and "/d/" in link.group(1)
    invitation = session.exec(select(Invitation).where(Invitation.provider_id == provider.id)).one()
    assert invitations.find(session, link.group(1).rsplit("/", 1)[1]).id == invitation.id
    refused = analyst.post("/invitations/new", data={"email": "not-an-address"})
    assert refused.status_code in (400, 422)
    assert "邮箱: 邮箱格式不正确" in refused.get_data(as_text=True)


def test_a_changed_uscc_is_a_blocker_naming_another_legal_entity(app, session, login):
    provider = registry_provider(session)
    other = "91440300708461136T"  # another valid code: another company
    invitation = submitted(
        session, provider_id=provider.id, data=answers(identity={**ANSWERS["identity"], "uscc": other})
    )
    items = comparison.review_items(session, invitation)
    uscc = item(items, "identity.uscc")
    assert uscc.state == "changed" and other in uscc.blocker and USCC in uscc.blocker
    assert [found.key for found in comparison.blockers(items)] == ["identity.uscc"]
    assert not item(items, "identity.website").blocker
    page = login("analyst").get(f"/invitations/{invitation.id}/review").get_data(as_text=True)
    assert 'id="blocker-identity-uscc"' in page and "不同的法律主体" in page
