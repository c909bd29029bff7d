"""Issue 9 items 3-5 in the API: ids past the INTEGER range, oversized headers and URLs, booleans as numbers,
unknown nested fields, non-http websites, list caps and nesting depth, all in the one error shape."""

from __future__ import annotations

import re

import pytest

from app.api.routing import OPERATIONS
from app.core.limits import COLLECTION_LIMITS, MAX_ID, MAX_JSON_DEPTH
from tests.api.conftest import assert_error_shape, provider_payload

HUGE_IDS = ("99999999999999999999", str(MAX_ID + 1), "9" * 5000)


def _with_id(path: str, value: str, position: int = 0) -> str:
    """The path with `value` as its id at `position` and 1 as any other id."""
    ids = iter(range(path.count("<")))
    return "/api/v1" + re.sub(r"<[^>]*>", lambda _: value if next(ids) == position else "1", path)


@pytest.mark.parametrize("value", HUGE_IDS)
def test_ids_past_the_integer_range_are_404_on_every_operation(api, tokens, value):
    with_ids = [op for op in OPERATIONS if "<" in op.path]
    assert len(with_ids) >= 5
    for op in with_ids:
        for position in range(op.path.count("<")):
            path = _with_id(op.path, value, position)
            response = api.open(path, method=op.method, headers=tokens["admin"], json={})
            errors = assert_error_shape(response, 404)
            assert "不存在" in errors[0]["message"], (op.method, op.path, position)


def test_patch_and_delete_of_a_missing_id_are_404_not_405(api, tokens):
    for method in ("PATCH", "DELETE"):
        response = api.open("/api/v1/providers/99999999999999999999", method=method, headers=tokens["admin"])
        assert_error_shape(response, 404)
    # A method the path really does not have is still 405, with Allow.
    response = api.put("/api/v1/providers/1", headers=tokens["admin"], json={})
    assert_error_shape(response, 405)
    assert "PATCH" in response.headers["Allow"]


@pytest.mark.parametrize("value", ["9" * 4301, "9" * 11, str(MAX_ID + 1), "0"])
def test_if_match_out_of_range_is_422_naming_the_header(api, tokens, arrange, value):
    provider = arrange()
    headers = {**tokens["admin"], "If-Match": f'"{value}"'}
    response = api.patch(f"/api/v1/providers/{provider.id}", headers=headers, json={"short_name": "x"})
    errors = assert_error_shape(response, 422)
    assert errors[0]["field"] == "If-Match" and str(MAX_ID) in errors[0]["message"]
    response = api.delete(f"/api/v1/providers/{provider.id}", headers=headers)
    assert assert_error_shape(response, 422)[0]["field"] == "If-Match"


def _nested(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


def test_json_nested_past_the_limit_is_400_naming_where(api, tokens):
    body = provider_payload(notes=_nested(MAX_JSON_DEPTH + 5))
    response = api.post("/api/v1/providers", headers=tokens["analyst"], json=body)
    errors = assert_error_shape(response, 400)
    assert errors[0]["field"].startswith("notes[0]")
    assert f"最多 {MAX_JSON_DEPTH} 层" in errors[0]["message"]


def test_json_nested_100000_deep_names_the_limit(api, tokens):
    body = b"[" * 100_000 + b"]" * 100_000
    headers = {**tokens["analyst"], "Content-Type": "application/json", "Accept-Language": "en"}
    errors = assert_error_shape(api.post("/api/v1/providers", data=body, headers=headers), 400)
    assert f"at most {MAX_JSON_DEPTH} levels" in errors[0]["message"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"offers": [{"gpu_model": "H800", "gpus_per_node": True}]}, "offers[0].gpus_per_node"),
        (
            {"offers": [{"gpu_model": "H800", "gpus_per_node": 8, "price_gpu_hour_cny": False}]},
            "offers[0].price_gpu_hour_cny",
        ),
        ({"registered_capital_cny": True}, "registered_capital_cny"),
        ({"certifications": [{"kind": "dengbao", "level": True}]}, "certifications[0].level"),
        ({"offers": [{"gpu_model": "H800", "gpus_per_node": 8, "id": True}]}, "offers[0].id"),
    ],
)
def test_booleans_are_not_numbers(api, tokens, change, field):
    response = api.post("/api/v1/providers", headers=tokens["analyst"], json=provider_payload(**change))
    errors = assert_error_shape(response, 422)
    assert any(error["field"] == field and "true/false" in error["message"] for error in errors), errors


def test_number_text_still_counts(api, tokens):
    body = provider_payload(offers=[{"gpu_model": "A100", "gpus_per_node": "4"}])
    response = api.post("/api/v1/providers", headers=tokens["analyst"], json=body)
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["offers"][0]["gpus_per_node"] == 4


def test_version_true_is_refused(api, tokens, arrange):
    provider = arrange()
    response = api.patch(
        f"/api/v1/providers/{provider.id}",
        headers=tokens["analyst"],
        json={"version": True, "short_name": "x"},
    )
    errors = assert_error_shape(response, 422)
    assert errors[0]["field"] == "version"


@pytest.mark.parametrize("collection", ["licences", "filings", "certifications", "datacenters", "offers"])
def test_unknown_fields_in_nested_records_are_refused(api, tokens, collection):
    body = provider_payload()
    body[collection][0]["gpus"] = 8
    errors = assert_error_shape(api.post("/api/v1/providers", headers=tokens["analyst"], json=body), 422)
    assert [error["field"] for error in errors] == [f"{collection}[0].gpus"]


def test_unknown_nested_fields_are_refused_in_patch_too(api, tokens, arrange):
    provider = arrange()
    offer_id = provider.offers[0].id
    body = {"version": provider.version, "offers": [{"id": offer_id, "gpu_count": 8}]}
    response = api.patch(f"/api/v1/providers/{provider.id}", headers=tokens["admin"], json=body)
    assert "offers[0].gpu_count" in [error["field"] for error in assert_error_shape(response, 422)]


@pytest.mark.parametrize(
    "website",
    ["javascript:alert(1)", "https://javascript:alert(1)", "data:text/html,x", "mailto:a@b.example"],
)
def test_website_must_be_an_http_url(api, tokens, website):
    response = api.post(
        "/api/v1/providers", headers=tokens["analyst"], json=provider_payload(website=website)
    )
    errors = assert_error_shape(response, 422)
    assert errors[0]["field"] == "website" and "网址须为 http:// 或 https:// 链接" in errors[0]["message"]


@pytest.mark.parametrize("website", ["gpu.example.cn:8443/x", "http://gpu.example.cn"])
def test_plain_hosts_and_http_urls_are_accepted(api, tokens, website):
    response = api.post(
        "/api/v1/providers", headers=tokens["analyst"], json=provider_payload(website=website)
    )
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["website"].startswith("http")


def test_nested_lists_are_capped_naming_field_and_limit(api, tokens):
    limit = COLLECTION_LIMITS["offers"]
    offers = [{"gpu_model": "A100", "gpus_per_node": 1}] * (limit + 1)
    response = api.post("/api/v1/providers", headers=tokens["analyst"], json=provider_payload(offers=offers))
    errors = assert_error_shape(response, 422)
    assert errors == [
        {
            "field": "offers",
            "message": f"最多 {limit} 项，收到 {limit + 1} 项",
        }
    ]


def test_nested_lists_are_capped_in_patch(api, tokens, arrange):
    provider = arrange()
    limit = COLLECTION_LIMITS["datacenters"]
    body = {
        "version": provider.version,
        "datacenters": [{"name": f"dc{i}", "province": "北京"} for i in range(limit + 1)],
    }
    response = api.patch(f"/api/v1/providers/{provider.id}", headers=tokens["admin"], json=body)
    errors = assert_error_shape(response, 422)
    assert errors[0]["field"] == "datacenters" and f"最多 {limit} 项" in errors[0]["message"]


def test_list_fields_of_a_record_are_capped(api, tokens):
    body = provider_payload()
    body["licences"][0]["coverage"] = ["北京"] * 101
    headers = {**tokens["analyst"], "Accept-Language": "en"}
    errors = assert_error_shape(api.post("/api/v1/providers", headers=headers, json=body), 422)
    assert errors[0]["field"] == "licences[0].coverage" and "at most 100 items" in errors[0]["message"]


def test_long_url_is_414_and_big_headers_431_in_the_error_shape(api, tokens):
    response = api.get("/api/v1/providers?q=" + "x" * 9000, headers=tokens["viewer"])
    assert "网址过长" in assert_error_shape(response, 414)[0]["message"]
    response = api.get(
        "/api/v1/providers", headers={**tokens["viewer"], "X-Big": "y" * 9000, "Accept-Language": "en"}
    )
    assert "header" in assert_error_shape(response, 431)[0]["message"]
    many = {f"X-H{i}": "1" for i in range(120)}
    assert_error_shape(api.get("/api/v1/providers", headers={**tokens["viewer"], **many}), 431)
    # Just under the limits is served normally.
    response = api.get("/api/v1/providers?q=" + "x" * 4000, headers={**tokens["viewer"], "X-Big": "y" * 4000})
    assert response.status_code == 200, response.get_json()
