"""/api/v1/cases/<id>/quotes: a quote entered by hand (multipart with its scan), listed, read, documented."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

import pytest
from sqlmodel import select

from app.cases import cases
from app.core import clock
from app.models import AuditEntry, Offer
from app.models.evidence import Evidence
from tests.api.conftest import assert_error_shape
from tests.cases.conftest import example
from tests.cases.test_quotes import quote_values
from tests.credentials.credit.conftest import PDF, png_bytes


@pytest.fixture
def case_and_offer(session, arrange) -> tuple[int, int]:
    """The ids of a stored case and of an offer in the registry."""
    provider = arrange()
    offer = session.exec(select(Offer).where(Offer.provider_id == provider.id).order_by(Offer.id)).first()
    case = cases.create_case(session, answers=example("offline_batch"), owner=cases.Actor(None, "arranger"))
    return case.id, offer.id


def _form(offer_id: int, scan: bytes | None = None, **changes: Any) -> dict[str, Any]:
    form: dict[str, Any] = quote_values(offer_id, **changes)
    form["scan"] = (io.BytesIO(png_bytes() if scan is None else scan), "报价单.png")
    return form


def _post(api, case_id: int, headers: dict[str, str], form: dict[str, Any]):
    return api.post(
        f"/api/v1/cases/{case_id}/quotes", data=form, headers=headers, content_type="multipart/form-data"
    )


def test_a_quote_is_created_read_and_listed(api, tokens, case_and_offer, session):
    case_id, offer_id = case_and_offer
    response = _post(api, case_id, tokens["analyst"], _form(offer_id, scan=PDF))
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert response.headers["Location"].endswith(f"/api/v1/cases/{case_id}/quotes/{body['id']}")
    assert body["offer_id"] == offer_id and body["provider_name"] == "示例算力科技有限公司"
    assert body["price_gpu_hour_cny"] == 11.8 and body["price_month_cny"] is None
    assert body["received_via"] == "email" and body["bandwidth_type"] == "dedicated"
    assert body["expired"] is False and body["entered_by"] == "api-analyst"
    assert body["scan_url"].endswith(f"/evidence/{body['evidence_id']}/download")

    read = api.get(response.headers["Location"], headers=tokens["viewer"])
    assert read.status_code == 200 and read.get_json() == body
    listed = api.get(f"/api/v1/cases/{case_id}/quotes", headers=tokens["viewer"])
    assert listed.status_code == 200 and listed.get_json() == {"items": [body]}
    assert session.get(Evidence, body["evidence_id"]).body == PDF


def test_the_scan_is_served_as_evidence(api, tokens, case_and_offer, login):
    case_id, offer_id = case_and_offer
    body = _post(api, case_id, tokens["analyst"], _form(offer_id)).get_json()
    download = login("viewer", "scan-reader").get(body["scan_url"])
    assert download.status_code == 200 and download.data == png_bytes()


def test_an_expired_quote_says_so(api, tokens, case_and_offer):
    case_id, offer_id = case_and_offer
    yesterday = (clock.business_today() - timedelta(days=1)).isoformat()
    response = _post(api, case_id, tokens["analyst"], _form(offer_id, valid_until=yesterday))
    assert response.status_code == 201 and response.get_json()["expired"] is True


def test_bad_fields_are_named_in_the_error_shape(api, tokens, case_and_offer, session):
    case_id, offer_id = case_and_offer
    form = _form(
        offer_id, scan=b"GIF89a", price_gpu_hour_cny="-1", sla_availability_pct="120", notes="a\x00b"
    )
    errors = assert_error_shape(_post(api, case_id, tokens["analyst"], form), 422)
    assert [error["field"] for error in errors] == [
        "price_gpu_hour_cny",
        "sla_availability_pct",
        "notes",
        "scan",
    ]
    no_price = _form(offer_id, price_gpu_hour_cny="")
    errors = assert_error_shape(_post(api, case_id, tokens["analyst"], no_price), 422)
    assert [error["field"] for error in errors] == ["price_gpu_hour_cny", "price_month_cny"]
    no_scan = quote_values(offer_id)
    errors = assert_error_shape(_post(api, case_id, tokens["analyst"], no_scan), 422)
    assert [error["field"] for error in errors] == ["scan"]
    as_json = api.post(
        f"/api/v1/cases/{case_id}/quotes", json=quote_values(offer_id), headers=tokens["analyst"]
    )
    assert [error["field"] for error in assert_error_shape(as_json, 415)] == ["scan"]
    assert session.exec(select(AuditEntry).where(AuditEntry.entity == "quote")).all() == []


def test_missing_case_offer_or_quote_is_404(api, tokens, case_and_offer):
    case_id, offer_id = case_and_offer
    errors = assert_error_shape(_post(api, 999_999, tokens["analyst"], _form(offer_id)), 404)
    assert errors[0]["field"] == "id"
    errors = assert_error_shape(_post(api, case_id, tokens["analyst"], _form(999_999)), 404)
    assert errors[0]["field"] == "offer_id"
    assert_error_shape(api.get("/api/v1/cases/999999/quotes", headers=tokens["viewer"]), 404)
    missing = api.get(f"/api/v1/cases/{case_id}/quotes/999999", headers=tokens["viewer"])
    assert assert_error_shape(missing, 404)[0]["field"] == "quote_id"


def test_roles(api, tokens, case_and_offer):
    case_id, offer_id = case_and_offer
    assert_error_shape(_post(api, case_id, tokens["anonymous"], _form(offer_id)), 401)
    assert_error_shape(_post(api, case_id, tokens["viewer"], _form(offer_id)), 403)
    assert _post(api, case_id, tokens["admin"], _form(offer_id)).status_code == 201
    assert_error_shape(api.get(f"/api/v1/cases/{case_id}/quotes"), 401)


def test_the_create_is_audited_with_its_actor(api, tokens, case_and_offer, session):
    case_id, offer_id = case_and_offer
    body = _post(api, case_id, tokens["analyst"], _form(offer_id)).get_json()
    entry = session.exec(select(AuditEntry).where(AuditEntry.entity == "quote")).one()
    assert (entry.action, entry.entity_id, entry.actor_name) == ("create", body["id"], "api-analyst")
    assert entry.changes["case_id"] == [None, case_id] and entry.changes["received_via"] == [None, "email"]


def test_openapi_documents_the_quote_operations(api):
    document = api.get("/api/v1/openapi.json").get_json()
    quotes = document["paths"]["/cases/{case_id}/quotes"]
    assert {"post", "get"} <= set(quotes)
    assert "get" in document["paths"]["/cases/{case_id}/quotes/{quote_id}"]
    post = quotes["post"]
    assert set(post["requestBody"]["content"]) == {"multipart/form-data"}
    assert {"201", "401", "403", "404", "415", "422"} <= set(post["responses"])
    schemas = document["components"]["schemas"]
    assert {"QuoteForm", "QuotePublic", "QuoteList"} <= set(schemas)
    assert schemas["QuoteForm"]["properties"]["scan"]["format"] == "binary"


def test_the_provider_history_shows_the_quote(api, tokens, case_and_offer, login, session):
    case_id, offer_id = case_and_offer
    body = _post(api, case_id, tokens["analyst"], _form(offer_id)).get_json()
    page = login("viewer", "history-reader").get(f"/providers/{body['provider_id']}")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "报价" in html and "收到方式" in html and "邮件" in html
