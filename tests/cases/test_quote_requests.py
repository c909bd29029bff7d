"""Requests for quotes (询价) from a case: one link per provider, statuses, the provider's one quote, the
request page (both databases)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import select

from app.cases import cases, quotes
from app.cases import quote_requests as service
from app.core import clock
from app.core.audit import set_actor
from app.core.errors import InvalidInput
from app.disclosure import invitations
from app.models import Offer
from app.models.disclosure import Invitation, InvitationEvent
from app.registry import providers as provider_service
from tests.api.conftest import provider_payload
from tests.cases.conftest import example
from tests.cases.test_quotes import quote_values
from tests.credentials.credit.conftest import png_bytes
from tests.live_server import free_port

OTHER = "另一家算力有限公司"


def _offers_of(session, provider_id: int) -> list[Offer]:
    return list(session.exec(select(Offer).where(Offer.provider_id == provider_id).order_by(Offer.id)))


@pytest.fixture
def asking(session) -> dict[str, Any]:
    """A distributed-training case and two providers: the first with two offers, the second with one."""
    set_actor(session, user_id=None, name="arranger")
    first = provider_service.create_provider(session, data=provider_payload())
    second_offer = {"name": "A800 集群", "gpu_model": "A800", "gpus_per_node": 8, "price_gpu_hour_cny": 9}
    second = provider_service.create_provider(
        session,
        data=provider_payload(
            legal_name=OTHER, short_name="另一家", uscc=None, filings=[], offers=[second_offer]
        ),
    )
    case = cases.create_case(
        session, answers=example("distributed_training"), owner=cases.Actor(None, "asker")
    )
    return {
        "case": case,
        "first": first,
        "second": second,
        "first_offers": _offers_of(session, first.id),
        "second_offers": _offers_of(session, second.id),
        "actor": cases.Actor(None, "asker"),
    }


def _request(session, asking, offers: list[Offer], **kwargs: Any) -> list[service.Sent]:
    return service.request_quotes(
        session,
        case_id=asking["case"].id,
        offer_ids=[offer.id for offer in offers],
        actor=asking["actor"],
        **kwargs,
    )


def _token(url: str) -> str:
    assert "/q/" in url
    return url.rsplit("/q/", 1)[1]


def test_one_request_per_provider_of_the_chosen_offers(session, asking):
    offers = [*asking["first_offers"], *asking["second_offers"]]
    sent = _request(session, asking, offers, expires_in_days=5)
    assert [item.provider_id for item in sent] == [asking["first"].id, asking["second"].id]
    first, second = (item.invitation for item in sent)
    assert first.purpose == "quote" and first.case_id == asking["case"].id
    assert first.offer_ids == [offer.id for offer in asking["first_offers"]]
    assert second.offer_ids == [asking["second_offers"][0].id]
    assert first.legal_name == "示例算力科技有限公司" and first.created_by_name == "asker"
    for item in sent:
        assert item.as_dict() == {
            "provider_id": item.provider_id,
            "invitation_id": item.invitation.id,
            "url": item.url,
        }
        token = _token(item.url)
        assert service.find(session, token).id == item.invitation.id
        assert invitations.find(session, token) is None  # not a disclosure link
        lasts = clock.aware(item.invitation.expires_at) - clock.now()
        assert timedelta(days=4, hours=23) < lasts <= timedelta(days=5)


def test_an_offer_asked_twice_is_asked_once(session, asking):
    offer = asking["first_offers"][0]
    sent = _request(session, asking, [offer, offer])
    assert len(sent) == 1 and sent[0].invitation.offer_ids == [offer.id]


@pytest.mark.parametrize("offer_ids", [[], [999_999], "1", [True], [0], [-3]])
def test_bad_offer_ids_are_refused_naming_the_field(session, asking, offer_ids):
    with pytest.raises(InvalidInput) as excinfo:
        service.request_quotes(session, case_id=asking["case"].id, offer_ids=offer_ids, actor=asking["actor"])
    assert [error.field for error in excinfo.value.errors] == ["offer_ids"]
    assert session.exec(select(Invitation)).all() == []


def test_an_unknown_offer_is_named_and_nothing_is_sent(session, asking):
    with pytest.raises(InvalidInput) as excinfo:
        service.request_quotes(
            session,
            case_id=asking["case"].id,
            offer_ids=[asking["first_offers"][0].id, 999_999],
            actor=asking["actor"],
        )
    assert "999999" in excinfo.value.errors[0].message
    assert session.exec(select(Invitation)).all() == []


@pytest.fixture
def demo_case(demo_loaded) -> int:
    """A multi-node training case on the demo registry (several eligible providers)."""
    return cases.create_case(
        demo_loaded, answers=example("distributed_training"), owner=cases.Actor(None, "x")
    ).id


def test_the_leading_eligible_offers_are_the_best_of_three_providers(session, demo_case):
    advice = cases.advise_case(session, case_id=demo_case)
    leading = service.leading_offer_ids(advice)
    best: dict[int, int] = {}  # each provider's best eligible offer, in the ranking's order
    for a in advice.eligible:
        best.setdefault(a.offer.provider.id, a.offer.id)
    assert len(best) >= 3, "the demo needs three eligible providers"
    assert leading == list(best.values())[:3]


def test_the_requirements_are_the_cases_in_plain_words(session, asking):
    sent = _request(session, asking, asking["first_offers"])
    rows = dict(service.requirements(session, sent[0].invitation))
    # example distributed_training: 4 nodes x 8 GPUs, H800/H100/A800 not strict, 80 GB, 6 months, Beijing
    assert rows["GPU"] == [
        "4 台 × 每台 8 张 GPU（共 32 张）",
        "H800 / H100 / A800 或同等算力",
        "每张显存至少 80 GB",
    ]
    assert "需要 RDMA（RoCE 或 InfiniBand）" in rows["内网"]
    assert rows["内网"][0].startswith("节点间有效带宽至少 ")
    assert rows["存储"][0] == "数据集约 2,000 GB"
    assert rows["租期"] == ["6 个月，每月约 720 小时"]
    assert rows["城市"] == ["办公地点：北京"]
    text = repr(rows)
    for secret in ("400000", "400,000", "40 万", "7B 模型四机预训练"):  # the budget and the title stay inside
        assert secret not in text


def _events(session, invitation_id: int) -> list[str]:
    return [
        row.kind
        for row in session.exec(
            select(InvitationEvent)
            .where(InvitationEvent.invitation_id == invitation_id)
            .order_by(InvitationEvent.id)
        )
    ]


def _submit(session, invitation: Invitation, offer: Offer, **changes: Any):
    values = quote_values(offer.id, **changes)
    values.pop("received_via")
    return service.submit_quote(
        session, invitation, values=values, scan=png_bytes(), filename="报价单.png", address="203.0.113.9"
    )


def _status(session, asking) -> dict[int, str]:
    return {
        row.invitation.id: row.status for row in service.list_requests(session, case_id=asking["case"].id)
    }


def test_statuses_follow_the_link_from_sent_to_submitted(session, asking):
    sent = _request(session, asking, [*asking["first_offers"], *asking["second_offers"]])
    first, second = (item.invitation for item in sent)
    assert _status(session, asking) == {first.id: "sent", second.id: "sent"}
    service.record_view(session, first, address="203.0.113.9")
    service.record_view(session, first, address="203.0.113.9")
    assert _status(session, asking)[first.id] == "opened"
    assert _events(session, first.id) == ["created", "viewed", "viewed"]
    quote = _submit(session, first, asking["first_offers"][1], price_gpu_hour_cny="10.5")
    listed = service.list_requests(session, case_id=asking["case"].id)
    assert {row.invitation.id: (row.status, row.quote_id) for row in listed} == {
        first.id: ("submitted", quote.id),
        second.id: ("sent", None),
    }
    assert listed[-1].as_dict()["status"] in ("sent", "submitted")
    invitations.revoke(session, invitation_id=second.id, actor_name="asker")
    assert _status(session, asking)[second.id] == "revoked"


def test_an_unopened_request_expires(session, asking):
    sent = _request(session, asking, asking["second_offers"], expires_in_days=2)
    with clock.frozen(clock.now() + timedelta(days=3)):
        assert _status(session, asking) == {sent[0].invitation.id: "expired"}


def test_the_providers_quote_is_listed_with_its_request(session, asking):
    sent = _request(session, asking, asking["first_offers"])
    invitation = sent[0].invitation
    quote = _submit(session, invitation, asking["first_offers"][0])
    listed = quotes.list_quotes(session, case_id=asking["case"].id)
    assert [(row.id, row.invitation_id) for row in listed] == [(quote.id, invitation.id)]
    assert str(quote.received_via) == "link" and quote.provider_id == asking["first"].id
    assert quote.price_gpu_hour_cny == 11.8 and quote.entered_by_name == "示例算力科技有限公司"
    assert quote.evidence_id is not None
    assert _events(session, invitation.id)[-1] == "submitted"


def test_a_link_takes_one_quote_only(session, asking):
    invitation = _request(session, asking, asking["first_offers"])[0].invitation
    _submit(session, invitation, asking["first_offers"][0])
    with pytest.raises(InvalidInput):
        _submit(session, invitation, asking["first_offers"][0], price_gpu_hour_cny="1")
    assert len(quotes.list_quotes(session, case_id=asking["case"].id)) == 1


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"price_gpu_hour_cny": "-1"}, "price_gpu_hour_cny"),
        ({"price_gpu_hour_cny": "0"}, "price_gpu_hour_cny"),
        ({"price_gpu_hour_cny": "", "price_month_cny": "-5"}, "price_month_cny"),
    ],
)
def test_prices_must_be_positive(session, asking, changes, field):
    invitation = _request(session, asking, asking["first_offers"])[0].invitation
    with pytest.raises(InvalidInput) as excinfo:
        _submit(session, invitation, asking["first_offers"][0], **changes)
    assert field in [error.field for error in excinfo.value.errors]
    assert quotes.list_quotes(session, case_id=asking["case"].id) == []
    session.refresh(invitation)
    assert invitation.status == "sent" and invitation.submitted_at is None
    assert _events(session, invitation.id) == ["created", "submit_refused"]


def test_only_the_requested_offers_can_be_priced(session, asking):
    invitation = _request(session, asking, asking["first_offers"][:1])[0].invitation
    for offer in (asking["first_offers"][1], asking["second_offers"][0]):
        with pytest.raises(InvalidInput) as excinfo:
            _submit(session, invitation, offer)
        assert [error.field for error in excinfo.value.errors] == ["offer_id"]
    assert quotes.list_quotes(session, case_id=asking["case"].id) == []


def test_a_hand_entered_quote_cannot_claim_the_link_channel(session, asking):
    with pytest.raises(InvalidInput) as excinfo:
        quotes.create_quote(
            session,
            case_id=asking["case"].id,
            values=quote_values(asking["first_offers"][0].id, received_via="link"),
            scan=png_bytes(),
            user=None,
        )
    assert [error.field for error in excinfo.value.errors] == ["received_via"]


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_link_is_e_mailed_to_the_providers_contact_where_smtp_is_set(app, session, asking):
    from aiosmtpd.controller import Controller

    received: list[tuple[list[str], str]] = []

    class Handler:
        async def handle_DATA(self, server, smtp_session, envelope):
            received.append((list(envelope.rcpt_tos), envelope.content.decode("utf-8", "replace")))
            return "250 OK"

    asking["first"].contact_email = "sales@example.cn"
    session.add(asking["first"])
    session.commit()
    port = free_port()
    controller = Controller(Handler(), hostname="127.0.0.1", port=port)
    controller.start()
    try:
        update = {"smtp_host": "127.0.0.1", "smtp_port": port, "smtp_starttls": False}
        app.config["GPUVET_SETTINGS"] = app.config["GPUVET_SETTINGS"].model_copy(
            update={**update, "public_url": "https://gpuvet.example.cn"}
        )
        with app.app_context():
            sent = _request(session, asking, [*asking["first_offers"], *asking["second_offers"]])
    finally:
        controller.stop()
    assert [item.mailed for item in sent] == [True, False]  # the second provider has no address
    assert sent[0].url.startswith("https://gpuvet.example.cn/q/")
    assert len(received) == 1 and received[0][0] == ["sales@example.cn"]
    assert _events(session, sent[0].invitation.id) == ["created"]


# ---------------------------------------------------------------- the request page
def test_the_request_page_ticks_the_leading_eligible_offers(login, session, demo_case):
    advice = cases.advise_case(session, case_id=demo_case)
    leading = set(service.leading_offer_ids(advice))
    html = login("analyst").get(f"/cases/{demo_case}/quote-requests").get_data(as_text=True)
    boxes = re.findall(r'<input[^>]*name="offer_ids" value="(\d+)"[^>]*>', html)
    assert sorted(int(value) for value in boxes) == sorted(a.offer.id for a in advice.ranked)
    ticked = re.findall(r'<input[^>]*name="offer_ids" value="(\d+)"[^>]*checked>', html)
    assert {int(value) for value in ticked} == leading and len(leading) == 3
    assert 'id="no-quote-requests"' in html


def test_the_request_page_sends_and_shows_the_links_and_statuses(login, session, asking):
    client = login("analyst", "asker-on-page")
    offers = [asking["first_offers"][0], asking["second_offers"][0]]
    response = client.post(
        f"/cases/{asking['case'].id}/quote-requests",
        data={"offer_ids": [str(offer.id) for offer in offers], "expires_in_days": "7"},
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and response.headers["Cache-Control"] == "private, no-store"
    rows = session.exec(select(Invitation).order_by(Invitation.id)).all()
    assert [row.provider_id for row in rows] == [asking["first"].id, asking["second"].id]
    for row in rows:
        link = html.split(f'id="link-{row.id}"', 1)[1].split('value="', 1)[1].split('"', 1)[0]
        assert service.find(session, _token(link)).id == row.id
        assert f'id="request-{row.id}"' in html
    assert html.count("已发送") >= 2 and rows[0].created_by_name == "asker-on-page"
    again = client.get(f"/cases/{asking['case'].id}/quote-requests").get_data(as_text=True)
    assert "/q/" not in again  # the links are shown once


def test_the_request_page_names_a_missing_choice(login, session, asking):
    response = login("analyst").post(f"/cases/{asking['case'].id}/quote-requests", data={})
    assert response.status_code == 422
    assert "offer_ids" in response.get_data(as_text=True)
    assert session.exec(select(Invitation)).all() == []


def test_a_viewer_cannot_request_quotes(login, session, asking):
    client = login("viewer")
    offer = asking["first_offers"][0]
    assert client.get(f"/cases/{asking['case'].id}/quote-requests").status_code == 403
    response = client.post(f"/cases/{asking['case'].id}/quote-requests", data={"offer_ids": [str(offer.id)]})
    assert response.status_code == 403
    assert session.exec(select(Invitation)).all() == []
    case_page = client.get(f"/cases/{asking['case'].id}").get_data(as_text=True)
    assert 'id="request-quotes"' not in case_page


def test_the_case_page_links_the_request_page_for_an_analyst(login, asking):
    html = login("analyst").get(f"/cases/{asking['case'].id}").get_data(as_text=True)
    assert f'href="/cases/{asking["case"].id}/quote-requests"' in html
