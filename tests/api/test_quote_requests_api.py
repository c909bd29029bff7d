"""/api/v1/cases/<id>/quote-requests: one link per provider, statuses, the usual errors, OpenAPI."""

from __future__ import annotations

import pytest
from sqlmodel import select

from app.cases import cases
from app.cases import quote_requests as service
from app.models import Offer
from app.models.disclosure import Invitation
from tests.api.conftest import assert_error_shape
from tests.cases.conftest import example

OTHER = "另一家算力有限公司"


@pytest.fixture
def case_offers(session, arrange) -> dict[str, int]:
    """A case and three offers: two of the first provider, one of another."""
    first = arrange()
    second = arrange(
        legal_name=OTHER, short_name="另一家", uscc=None, offers=[{"gpu_model": "A800", "gpus_per_node": 8}]
    )
    offers = session.exec(select(Offer).order_by(Offer.id)).all()
    case = cases.create_case(session, answers=example("offline_batch"), owner=cases.Actor(None, "arranger"))
    return {
        "case": case.id,
        "first": first.id,
        "second": second.id,
        "a": offers[0].id,
        "b": offers[1].id,
        "c": next(offer.id for offer in offers if offer.provider_id == second.id),
    }


def _post(api, case_id: int, headers, body):
    return api.post(f"/api/v1/cases/{case_id}/quote-requests", json=body, headers=headers)


def test_one_link_per_provider_and_their_statuses(api, tokens, case_offers, session):
    ids = case_offers
    response = _post(api, ids["case"], tokens["analyst"], {"offer_ids": [ids["a"], ids["c"], ids["b"]]})
    assert response.status_code == 201, response.get_json()
    items = response.get_json()["items"]
    assert [item["provider_id"] for item in items] == [ids["first"], ids["second"]]
    for item in items:
        assert set(item) == {"provider_id", "invitation_id", "url"}
        invitation = session.get(Invitation, item["invitation_id"])
        assert invitation.purpose == "quote" and invitation.case_id == ids["case"]
        assert service.find(session, item["url"].rsplit("/q/", 1)[1]).id == invitation.id
    assert session.get(Invitation, items[0]["invitation_id"]).offer_ids == [ids["a"], ids["b"]]

    listed = api.get(f"/api/v1/cases/{ids['case']}/quote-requests", headers=tokens["analyst"])
    assert listed.status_code == 200
    rows = listed.get_json()["items"]
    assert {row["invitation_id"]: row["status"] for row in rows} == {
        item["invitation_id"]: "sent" for item in items
    }
    assert {row["provider_name"] for row in rows} == {"示例算力科技有限公司", OTHER}
    assert all(row["quote_id"] is None and row["opened_at"] is None for row in rows)
    assert "url" not in rows[0]  # the token is never shown again


def test_the_links_last_as_asked(api, tokens, case_offers, session):
    response = _post(
        api, case_offers["case"], tokens["analyst"], {"offer_ids": [case_offers["a"]], "expires_in_days": 2}
    )
    invitation = session.get(Invitation, response.get_json()["items"][0]["invitation_id"])
    lasts = invitation.expires_at - invitation.created_at
    assert 47 * 3600 < lasts.total_seconds() <= 48 * 3600 + 5


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "offer_ids"),
        ({"offer_ids": []}, "offer_ids"),
        ({"offer_ids": "1"}, "offer_ids"),
        ({"offer_ids": [999_999]}, "offer_ids"),
        ({"offer_ids": [1], "expires_in_days": 0}, "expires_in_days"),
        ({"offer_ids": [1], "expires_in_days": 366}, "expires_in_days"),
        ({"offer_ids": [1], "provider_id": 1}, "provider_id"),
    ],
)
def test_bad_bodies_name_the_field(api, tokens, case_offers, session, body, field):
    errors = assert_error_shape(_post(api, case_offers["case"], tokens["analyst"], body), 422)
    assert field in [error["field"] for error in errors]
    assert session.exec(select(Invitation)).all() == []


def test_a_body_that_is_not_an_object_is_refused(api, tokens, case_offers):
    response = api.post(
        f"/api/v1/cases/{case_offers['case']}/quote-requests",
        data="[1]",
        headers=tokens["analyst"],
        content_type="application/json",
    )
    assert response.status_code in (400, 422)
    assert_error_shape(response, response.status_code)


def test_an_unknown_case_is_404(api, tokens, case_offers):
    assert_error_shape(_post(api, 999_999, tokens["analyst"], {"offer_ids": [case_offers["a"]]}), 404)
    assert_error_shape(api.get("/api/v1/cases/999999/quote-requests", headers=tokens["analyst"]), 404)


def test_a_viewer_cannot_request_quotes_or_see_them(api, tokens, case_offers, session):
    assert_error_shape(
        _post(api, case_offers["case"], tokens["viewer"], {"offer_ids": [case_offers["a"]]}), 403
    )
    assert_error_shape(
        _post(api, case_offers["case"], tokens["anonymous"], {"offer_ids": [case_offers["a"]]}), 401
    )
    assert_error_shape(
        api.get(f"/api/v1/cases/{case_offers['case']}/quote-requests", headers=tokens["viewer"]), 403
    )
    assert session.exec(select(Invitation)).all() == []


def test_the_routes_are_documented(api):
    document = api.get("/api/v1/openapi.json").get_json()
    path = document["paths"]["/cases/{case_id}/quote-requests"]
    assert {"201", "401", "403", "404", "422"} <= set(path["post"]["responses"])
    assert "200" in path["get"]["responses"]
    assert set(path["post"]["requestBody"]["content"]) == {"application/json"}
    schemas = document["components"]["schemas"]
    assert {"QuoteRequestIn", "QuoteRequestsSent", "QuoteRequestList"} <= set(schemas)
    assert set(schemas["QuoteRequestIn"]["properties"]) == {"offer_ids", "expires_in_days"}
