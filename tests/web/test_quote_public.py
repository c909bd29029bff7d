"""The provider's quote page /q/<token>: only its own case and offers, views logged, one quote, and a
wrong, expired or revoked link answered like any wrong token (both databases)."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import select

from app.cases import cases, quotes
from app.cases import quote_requests as service
from app.core import clock
from app.core.audit import set_actor
from app.disclosure import invitations
from app.models import Offer
from app.models.disclosure import InvitationEvent
from app.registry import providers as provider_service
from tests.api.conftest import provider_payload
from tests.cases.conftest import example
from tests.cases.test_quotes import quote_values
from tests.credentials.credit.conftest import png_bytes

OTHER = "另一家算力有限公司"


class Analyst:
    id = None
    username = "analyst-by-hand"


@pytest.fixture
def links(session) -> dict[str, Any]:
    """Two cases; in the training case one request to each of two providers, and a hand quote of the other."""
    set_actor(session, user_id=None, name="arranger")
    first = provider_service.create_provider(session, data=provider_payload())
    other_offer = {"name": "另一家的 A800 集群", "gpu_model": "A800", "gpus_per_node": 8}
    other = provider_service.create_provider(
        session, data=provider_payload(legal_name=OTHER, short_name="另一家", uscc=None, offers=[other_offer])
    )
    owner = cases.Actor(None, "asker")
    training = cases.create_case(session, answers=example("distributed_training"), owner=owner)
    batch = cases.create_case(session, answers=example("offline_batch"), owner=owner)
    first_offers = list(session.exec(select(Offer).where(Offer.provider_id == first.id).order_by(Offer.id)))
    other_offer_row = session.exec(select(Offer).where(Offer.provider_id == other.id)).one()
    sent = service.request_quotes(
        session,
        case_id=training.id,
        offer_ids=[first_offers[0].id, other_offer_row.id],
        actor=owner,
        expires_in_days=3,
    )
    batch_sent = service.request_quotes(
        session, case_id=batch.id, offer_ids=[first_offers[1].id], actor=owner
    )
    other_quote = quotes.create_quote(
        session,
        case_id=training.id,
        values=quote_values(other_offer_row.id, price_gpu_hour_cny="77.7"),
        scan=png_bytes(),
        user=Analyst(),
    )
    return {
        "case": training,
        "batch": batch,
        "first_offers": first_offers,
        "mine": sent[0],
        "token": sent[0].url.rsplit("/q/", 1)[1],
        "batch_token": batch_sent[0].url.rsplit("/q/", 1)[1],
        "other_quote": other_quote,
    }


def _form(offer_id: int, scan: bytes | None = None, **changes: Any) -> dict[str, Any]:
    form: dict[str, Any] = quote_values(offer_id, **changes)
    form.pop("received_via")
    for name in quotes.YES_NO:  # checkboxes: sent when ticked, left out otherwise
        if not form[name]:
            form.pop(name)
    form["scan"] = (io.BytesIO(png_bytes() if scan is None else scan), "报价单.png")
    return form


def _events(session, invitation_id: int) -> list[str]:
    rows = session.exec(
        select(InvitationEvent)
        .where(InvitationEvent.invitation_id == invitation_id)
        .order_by(InvitationEvent.id)
    )
    return [row.kind for row in rows]


def test_the_page_shows_only_its_own_case_and_offers(app, links):
    response = app.test_client().get(f"/q/{links['token']}")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "private, no-store"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert "示例算力科技有限公司" in html and "H800 裸金属" in html
    # its case: 4 servers x 8 GPUs in Beijing, 6 months; H800/H100/A800, 80 GB
    assert "4 台 × 每台 8 张 GPU（共 32 张）" in html and "办公地点：北京" in html
    assert "6 个月，每月约 720 小时" in html and "每张显存至少 80 GB" in html
    # nothing of the other case (4 x L40S in Chengdu, 2 months) or the other provider and its quote
    for absent in ("L40S", "成都", "2 个月", OTHER, "另一家的 A800 集群", "77.7"):
        assert absent not in html, absent
    # nor the budget, the title, the other offers or internal addresses
    for absent in ("400,000", "400000", "7B 模型四机预训练", "A100", f"/cases/{links['case'].id}"):
        assert absent not in html, absent
    assert f'<option value="{links["first_offers"][0].id}"' in html
    assert f'value="{links["first_offers"][1].id}"' not in html


def test_every_view_is_logged(app, session, links):
    client = app.test_client()
    client.get(f"/q/{links['token']}")
    client.get(f"/q/{links['token']}", environ_base={"REMOTE_ADDR": "198.51.100.7"})
    invitation_id = links["mine"].invitation.id
    assert _events(session, invitation_id) == ["created", "viewed", "viewed"]
    rows = session.exec(select(InvitationEvent).where(InvitationEvent.kind == "viewed")).all()
    assert sorted(row.remote_addr for row in rows) == ["127.0.0.1", "198.51.100.7"]
    session.expire_all()  # the page changed the invitation in its own session
    statuses = {
        row.invitation.id: row.status for row in service.list_requests(session, case_id=links["case"].id)
    }
    assert statuses[invitation_id] == "opened"


def test_a_sent_quote_is_listed_and_the_link_then_only_thanks(app, session, links):
    client = app.test_client()
    offer_id = links["first_offers"][0].id
    response = client.post(
        f"/q/{links['token']}",
        data=_form(offer_id, price_gpu_hour_cny="10.5", sla_availability_pct="99.95"),
        content_type="multipart/form-data",
    )
    assert response.status_code == 303 and response.headers["Location"].endswith(f"/q/{links['token']}")
    assert 'id="quote-thanks"' in client.get(response.headers["Location"]).get_data(as_text=True)
    listed = quotes.list_quotes(session, case_id=links["case"].id)
    sent = next(row for row in listed if row.invitation_id == links["mine"].invitation.id)
    assert sent.offer_id == offer_id and sent.price_gpu_hour_cny == 10.5
    assert sent.sla_availability_pct == 99.95 and str(sent.received_via) == "link"
    assert sent.includes_public_bandwidth and not sent.includes_support
    # again (after the redirect above): thanks only, no form, no second quote
    page = client.get(f"/q/{links['token']}").get_data(as_text=True)
    assert 'id="quote-thanks"' in page and 'id="quote-link-form"' not in page
    again = client.post(
        f"/q/{links['token']}",
        data=_form(offer_id, price_gpu_hour_cny="1"),
        content_type="multipart/form-data",
    )
    assert 'id="quote-thanks"' in again.get_data(as_text=True)
    assert len(quotes.list_quotes(session, case_id=links["case"].id)) == 2  # the hand quote and this one


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"price_gpu_hour_cny": "-3"}, "price_gpu_hour_cny"),
        ({"price_gpu_hour_cny": "", "price_month_cny": "0"}, "price_month_cny"),
    ],
)
def test_a_price_must_be_positive(app, session, links, changes, field):
    response = app.test_client().post(
        f"/q/{links['token']}",
        data=_form(links["first_offers"][0].id, **changes),
        content_type="multipart/form-data",
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 422 and 'id="quote-outcome"' in html
    assert f'id="f-{field}-error"' in html
    assert len(quotes.list_quotes(session, case_id=links["case"].id)) == 1
    assert _events(session, links["mine"].invitation.id)[-1] == "submit_refused"


def test_a_missing_scan_is_named(app, session, links):
    form = _form(links["first_offers"][0].id)
    form.pop("scan")
    response = app.test_client().post(f"/q/{links['token']}", data=form, content_type="multipart/form-data")
    assert response.status_code == 422 and 'id="f-scan-error"' in response.get_data(as_text=True)


def _gone_page(app) -> tuple[int, str]:
    response = app.test_client().get("/q/" + "x" * 43)
    return response.status_code, response.get_data(as_text=True)


def test_expired_revoked_and_wrong_links_reveal_nothing(app, session, links):
    status, wrong = _gone_page(app)
    assert status == 404
    client = app.test_client()
    with clock.frozen(clock.now() + timedelta(days=4)):
        expired = client.get(f"/q/{links['token']}")
    assert (expired.status_code, expired.get_data(as_text=True)) == (404, wrong)
    invitations.revoke(session, invitation_id=links["mine"].invitation.id, actor_name="asker")
    for method in (client.get, client.post):
        revoked = method(f"/q/{links['token']}")
        assert (revoked.status_code, revoked.get_data(as_text=True)) == (404, wrong)
    assert "示例算力" not in wrong and "北京" not in wrong
    assert _events(session, links["mine"].invitation.id)[-1] == "refused"


def test_a_quote_link_does_not_open_the_questionnaire_and_back(app, session, links):
    _status, wrong = _gone_page(app)
    client = app.test_client()
    on_disclosure = client.get(f"/d/{links['token']}")
    assert (on_disclosure.status_code, on_disclosure.get_data(as_text=True)) == (404, wrong)
    disclosure = invitations.create(session, data={"legal_name": "问卷供应商有限公司"})
    on_quote = client.get(f"/q/{disclosure.token}")
    assert (on_quote.status_code, on_quote.get_data(as_text=True)) == (404, wrong)


def test_each_link_shows_its_own_case(app, links):
    html = app.test_client().get(f"/q/{links['batch_token']}").get_data(as_text=True)
    assert "1 台，4 张 GPU" in html and "办公地点：成都" in html and "A100" in html
    for absent in ("北京", "H800 裸金属", "32 张", OTHER):
        assert absent not in html, absent


def test_the_page_speaks_english_on_request(app, links):
    client = app.test_client()
    assert client.get(f"/lang/en?next=/q/{links['token']}").status_code in (302, 303)
    html = client.get(f"/q/{links['token']}").get_data(as_text=True)
    assert "4 servers × 8 GPUs each (32 GPUs in all)" in html and "Office: 北京" in html
    assert "Send the quote" in html and "提交报价" not in html


def test_an_offer_not_requested_is_named_with_the_other_mistakes(app, session, links):
    response = app.test_client().post(
        f"/q/{links['token']}",
        data=_form(links["first_offers"][1].id, price_gpu_hour_cny="-1"),
        content_type="multipart/form-data",
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert 'id="f-offer_id-error"' in html and 'id="f-price_gpu_hour_cny-error"' in html
    assert len(quotes.list_quotes(session, case_id=links["case"].id)) == 1
