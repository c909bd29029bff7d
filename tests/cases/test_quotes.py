"""Quotes entered by hand for a case: checked field by field, the scan kept as evidence, audited, expiry."""

from __future__ import annotations

import hashlib
from datetime import date, timedelta
from typing import Any

import pytest
from sqlmodel import select

from app.accounts import users
from app.cases import cases
from app.cases import quotes as service
from app.core import clock
from app.core.audit import set_actor
from app.core.errors import InvalidInput, NotFound
from app.credentials.manual_lookups import MAX_SCREENSHOT_BYTES
from app.models import AuditEntry, Offer
from app.models.evidence import MANUAL_METHOD, Evidence
from app.models.quotes import Quote
from app.registry import providers as provider_service
from tests.api.conftest import provider_payload
from tests.cases.conftest import example
from tests.credentials.credit.conftest import PDF, png_bytes


def quote_values(offer: int, **changes: Any) -> dict[str, Any]:
    """What an analyst enters for a quote received by e-mail: form text, as a page or the API sends it."""
    values = {
        "offer_id": str(offer),
        "received_via": "email",
        "price_gpu_hour_cny": "11.8",
        "price_month_cny": "",
        "min_term_months": "3",
        "delivery_on": "2027-01-15",
        "includes_public_bandwidth": "yes",
        "includes_storage": "true",
        "includes_support": "",
        "sla_availability_pct": "99.9",
        "sla_compensation": "每中断 1 小时赔 1 天费用",
        "bandwidth_type": "dedicated",
        "trial_server_lent": "on",
        "valid_until": (clock.business_today() + timedelta(days=30)).isoformat(),
        "notes": " 含税价 ",
    }
    return {**values, **changes}


@pytest.fixture
def quoting(session) -> dict[str, Any]:
    """A case, a provider with two offers, and the analyst who enters quotes."""
    provider = provider_service.create_provider(session, data=provider_payload())
    offer = session.exec(select(Offer).where(Offer.provider_id == provider.id).order_by(Offer.id)).first()
    analyst = users.create_user(session, username="quoter", password="correct horse battery", role="analyst")
    owner = cases.Actor(analyst.id, "quoter")
    case = cases.create_case(session, answers=example("offline_batch"), owner=owner)
    set_actor(session, user_id=analyst.id, name=analyst.username)
    return {"provider": provider, "offer": offer, "analyst": analyst, "case": case}


def _create(session, quoting, scan: Any = None, **changes: Any) -> Quote:
    return service.create_quote(
        session,
        case_id=quoting["case"].id,
        values=quote_values(quoting["offer"].id, **changes),
        scan=png_bytes() if scan is None else scan,
        user=quoting["analyst"],
        filename="报价单.png",
    )


def _fields(excinfo: pytest.ExceptionInfo) -> list[str]:
    return [error.field for error in excinfo.value.errors]


def test_a_valid_quote_is_stored_listed_and_read_back(session, quoting):
    quote = _create(session, quoting)
    assert quote.provider_id == quoting["provider"].id and quote.offer_id == quoting["offer"].id
    assert quote.price_gpu_hour_cny == 11.8 and quote.price_month_cny is None
    assert quote.min_term_months == 3 and quote.delivery_on == date(2027, 1, 15)
    assert (quote.includes_public_bandwidth, quote.includes_storage, quote.includes_support) == (
        True,
        True,
        False,
    )
    assert quote.trial_server_lent and str(quote.bandwidth_type) == "dedicated"
    assert quote.notes == "含税价" and quote.entered_by_name == "quoter"
    assert [row.id for row in service.list_quotes(session, case_id=quoting["case"].id)] == [quote.id]
    assert service.get_quote(session, case_id=quoting["case"].id, quote_id=quote.id).id == quote.id
    shown = service.quote_dict(quote, "示例")
    assert shown["received_via"] == "email" and shown["expired"] is False
    assert shown["price_gpu_hour_cny"] == 11.8 and shown["valid_until"] == quote.valid_until.isoformat()


def test_the_later_quote_is_listed_first(session, quoting):
    first = _create(session, quoting)
    second = _create(session, quoting, received_via="phone", price_gpu_hour_cny="", price_month_cny="52000")
    listed = service.list_quotes(session, case_id=quoting["case"].id)
    assert [row.id for row in listed] == [second.id, first.id]
    assert listed[0].price_month_cny == 52000 and listed[0].price_gpu_hour_cny is None


def test_the_scan_is_kept_as_evidence_recorded_by_hand(session, quoting):
    quote = _create(session, quoting, scan=PDF)
    evidence = session.get(Evidence, quote.evidence_id)
    assert evidence.purpose == service.PURPOSE and evidence.method == MANUAL_METHOD
    assert evidence.body == PDF and evidence.content_type == "application/pdf"
    assert evidence.sha256 == hashlib.sha256(PDF).hexdigest() and evidence.size == len(PDF)
    assert evidence.provider_id == quoting["provider"].id and evidence.triggered_by_name == "quoter"
    assert evidence.extracted["filename"] == "报价单.png"
    assert evidence.extracted["case_id"] == quoting["case"].id
    assert evidence.extracted["price_gpu_hour_cny"] == 11.8


def test_every_create_is_audited(session, quoting):
    quote = _create(session, quoting)
    entry = session.exec(select(AuditEntry).where(AuditEntry.entity == "quote")).one()
    assert entry.action == "create" and entry.entity_id == quote.id and entry.actor_name == "quoter"
    assert entry.provider_id == quoting["provider"].id
    assert entry.changes["price_gpu_hour_cny"] == [None, 11.8]
    assert entry.changes["evidence_id"] == [None, quote.evidence_id]


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("offer_id", "套餐一"),
        ("received_via", "fax"),
        ("price_gpu_hour_cny", "0"),
        ("price_gpu_hour_cny", "-3"),
        ("price_gpu_hour_cny", "nan"),
        ("price_month_cny", "一万"),
        ("min_term_months", "0"),
        ("min_term_months", "1.5"),
        ("delivery_on", "2027-02-30"),
        ("includes_storage", "maybe"),
        ("sla_availability_pct", "0"),
        ("sla_availability_pct", "100.1"),
        ("sla_compensation", "赔\x00偿"),
        ("bandwidth_type", "fast"),
        ("trial_server_lent", "有时"),
        ("valid_until", ""),
        ("valid_until", "下个月"),
        ("notes", "x" * (service.MAX_TEXT + 1)),
        ("currency", "USD"),
    ],
)
def test_each_bad_field_is_named(session, quoting, field, bad):
    with pytest.raises(InvalidInput) as excinfo:
        _create(session, quoting, **{field: bad})
    assert _fields(excinfo) == [field]
    assert all(error.message for error in excinfo.value.errors)
    assert session.exec(select(Quote)).all() == []


def test_one_price_at_least(session, quoting):
    with pytest.raises(InvalidInput) as excinfo:
        _create(session, quoting, price_gpu_hour_cny="", price_month_cny=" ")
    assert _fields(excinfo) == list(service.PRICE_FIELDS)
    assert "大于 0" in excinfo.value.errors[0].message


@pytest.mark.parametrize(
    "scan",
    [b"", b"GIF89a" + b"\x00" * 40, b"%PDF-1.4" + b"\x00" * MAX_SCREENSHOT_BYTES, "not bytes"],
)
def test_the_scan_follows_the_upload_rules(session, quoting, scan):
    with pytest.raises(InvalidInput) as excinfo:
        _create(session, quoting, scan=scan)
    assert _fields(excinfo) == ["scan"]


def test_bad_values_and_a_bad_scan_are_named_together(session, quoting):
    with pytest.raises(InvalidInput) as excinfo:
        _create(session, quoting, scan=b"plain text", received_via="")
    assert _fields(excinfo) == ["received_via", "scan"]
    assert session.exec(select(Evidence)).all() == []


def test_a_quote_expires_after_its_last_valid_day(session, quoting):
    today = clock.business_today()
    quote = _create(session, quoting, valid_until=today.isoformat())
    assert not service.is_expired(quote) and service.quote_dict(quote)["expired"] is False
    assert service.is_expired(quote, today + timedelta(days=1))
    old = _create(session, quoting, valid_until=(today - timedelta(days=1)).isoformat())
    assert service.quote_dict(old)["expired"] is True


def test_missing_case_offer_or_quote_is_not_found(session, quoting):
    with pytest.raises(NotFound) as excinfo:
        service.create_quote(
            session, case_id=999_999, values=quote_values(1), scan=png_bytes(), user=quoting["analyst"]
        )
    assert _fields(excinfo) == ["id"]
    with pytest.raises(NotFound) as excinfo:
        _create(session, quoting, offer_id="999999")
    assert _fields(excinfo) == ["offer_id"]
    with pytest.raises(NotFound):
        service.list_quotes(session, case_id=999_999)
    quote = _create(session, quoting)
    other = cases.create_case(session, answers=example("offline_batch"), owner=cases.Actor(None, "x"))
    with pytest.raises(NotFound) as excinfo:
        service.get_quote(session, case_id=other.id, quote_id=quote.id)
    assert _fields(excinfo) == ["quote_id"]
    assert session.exec(select(Evidence).where(Evidence.purpose == service.PURPOSE)).all() != []


def test_quotes_go_with_their_case_and_their_provider(session, quoting):
    _create(session, quoting)
    cases.delete_case(session, case_id=quoting["case"].id, version=quoting["case"].version)
    session.expunge_all()
    assert session.exec(select(Quote)).all() == []
    owner = cases.Actor(None, "x")
    quoting["case"] = cases.create_case(session, answers=example("offline_batch"), owner=owner)
    _create(session, quoting)
    provider_service.delete_provider(session, provider_id=quoting["provider"].id)
    session.expunge_all()
    assert session.exec(select(Quote)).all() == []
