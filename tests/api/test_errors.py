"""One error shape under /api/v1, for every kind of bad request, and no input that gives a 500."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.api.body import MAX_BODY_BYTES
from app.models.io import ProviderCreate
from tests.api.conftest import assert_error_shape, provider_payload

MALFORMED = {
    "broken JSON": (b'{"legal_name": ', "application/json"),
    "trailing garbage": (b'{"legal_name": "x"} y', "application/json"),
    "array": (b"[]", "application/json"),
    "null": (b"null", "application/json"),
    "string": (b'"text"', "application/json"),
    "empty": (b"", "application/json"),
    "NaN": (b'{"registered_capital_cny": NaN}', "application/json"),
    "bad UTF-8": (b'{"legal_name": "\xff\xfe"}', "application/json"),
    "deep nesting": (b"[" * 100_000 + b"]" * 100_000, "application/json"),
    "too many digits": (b'{"registered_capital_cny": ' + b"9" * 5000 + b"}", "application/json"),
    "form post": (b"legal_name=x", "application/x-www-form-urlencoded"),
    "text": (b'{"legal_name": "x"}', "text/plain"),
    "no content type": (b'{"legal_name": "x"}', None),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_bodies_are_400_naming_the_request(api, tokens, arrange, case):
    body, content_type = MALFORMED[case]
    headers = dict(tokens["admin"])
    if content_type:
        headers["Content-Type"] = content_type
    provider = arrange()
    for method, url in (("post", "/api/v1/providers"), ("patch", f"/api/v1/providers/{provider.id}")):
        response = getattr(api, method)(url, data=body, headers=headers)
        errors = assert_error_shape(response, 400)
        assert [error["field"] for error in errors] == [""], (case, method)
    if content_type != "application/json":
        assert "application/json" in errors[0]["message"]


def test_json_with_charset_and_vendor_types_is_accepted(api, tokens):
    body = json.dumps(provider_payload(uscc=None), ensure_ascii=False).encode()
    for content_type in ("application/json; charset=utf-8", "application/merge-patch+json"):
        response = api.post(
            "/api/v1/providers", data=body, headers={**tokens["analyst"], "Content-Type": content_type}
        )
        assert response.status_code == 201, response.get_json()


def test_oversized_body_is_413(api, tokens):
    body = json.dumps(provider_payload(notes="长" * MAX_BODY_BYTES)).encode()
    assert_error_shape(
        api.post(
            "/api/v1/providers", data=body, headers={**tokens["analyst"], "Content-Type": "application/json"}
        ),
        413,
    )


def test_unknown_paths_methods_and_ids_keep_the_shape(api, tokens, arrange):
    viewer = tokens["viewer"]
    assert_error_shape(api.get("/api/v1/nothing-here", headers=viewer), 404)
    assert_error_shape(api.get("/api/v1", headers=viewer), 404)
    assert_error_shape(api.get("/api/v1/providers/abc", headers=viewer), 404)
    assert_error_shape(api.get("/api/v1/providers/-1", headers=viewer), 404)
    assert_error_shape(api.get("/api/v1/providers/99999999999999999999", headers=viewer), 404)
    assert_error_shape(api.get("/api/v1/providers/2147483647", headers=viewer), 404)
    errors = assert_error_shape(api.get("/api/v1/providers/0", headers=viewer), 404)
    assert errors[0]["field"] == "id"

    response = api.put(f"/api/v1/providers/{arrange().id}", json={}, headers=viewer)
    assert_error_shape(response, 405)
    assert set(response.headers["Allow"].replace(" ", "").split(",")) >= {"GET", "PATCH", "DELETE"}
    assert_error_shape(api.delete("/api/v1/providers", headers=viewer), 405)
    assert_error_shape(api.post("/api/v1/openapi.json"), 405)


def test_unknown_query_parameters_are_refused(api, tokens, arrange):
    provider = arrange()
    errors = assert_error_shape(
        api.get(f"/api/v1/providers/{provider.id}?expand=all", headers=tokens["viewer"]), 422
    )
    assert errors[0]["field"] == "expand"
    errors = assert_error_shape(
        api.delete(f"/api/v1/providers/{provider.id}?force=1", headers=tokens["admin"]), 422
    )
    assert errors[0]["field"] == "force" and "version" in errors[0]["message"]


ODD_VALUES = [
    None,
    True,
    -1,
    0,
    1.5,
    10**30,
    -(10**30),
    1e308,
    "",
    " ",
    "\x00",
    "a\x00b",
    "ｘ" * 500,
    "🙂",
    [],
    [1, "a"],
    {},
    {"id": [1]},
    [{"id": [1]}],
    [{"id": 10**30}],
    [{"id": "x", "datacenter_id": 10**30}],
]
FIELDS = [*ProviderCreate.model_fields, "version", "id", "unknown"]


def _assert_not_500(response) -> None:
    assert response.status_code < 500, response.get_data(as_text=True)[:500]
    if response.status_code >= 400:
        assert_error_shape(response, response.status_code)


@pytest.mark.parametrize("value", ODD_VALUES, ids=[repr(value)[:20] for value in ODD_VALUES])
def test_odd_values_in_any_field_never_give_500(api, tokens, arrange, value):
    provider = arrange()
    url = f"/api/v1/providers/{provider.id}"
    for field in FIELDS:
        data = {**provider_payload(uscc=None), field: value}
        _assert_not_500(api.post("/api/v1/providers", json=data, headers=tokens["admin"]))
        _assert_not_500(
            api.patch(url, json={"version": provider.version, field: value}, headers=tokens["admin"])
        )
    for collection in ("licences", "filings", "certifications", "datacenters", "offers"):
        item = dict(provider_payload()[collection][0])
        for key in [*item, "id", "datacenter_id"]:
            bad = {**item, key: value}
            data = provider_payload(uscc=None, **{collection: [bad]})
            _assert_not_500(api.post("/api/v1/providers", json=data, headers=tokens["admin"]))


@pytest.mark.parametrize(
    "query",
    [
        "page=99999999999999999999",
        "page=9223372036854775807",
        "per_page=99999999999999999999",
        "q=%00",
        "gpu_model=a%00b",
        "province=%00",
        "q=" + "%25" * 500,
        "q=_%25%5C",
        "status=%F0%9F%99%82",
        "sort=",
        "page=1e3",
        "page=-5",
    ],
)
def test_odd_list_queries_never_give_500(api, tokens, arrange, query):
    arrange()
    _assert_not_500(api.get(f"/api/v1/providers?{query}", headers=tokens["viewer"]))


def test_odd_versions_never_give_500(api, tokens, arrange):
    provider = arrange()
    url = f"/api/v1/providers/{provider.id}"
    for value in ("0", "-1", "99999999999999999999", "x", "", "1.0", "١"):
        _assert_not_500(api.delete(f"{url}?version={value}", headers=tokens["admin"]))
        _assert_not_500(api.delete(url, headers={**tokens["admin"], "If-Match": f'"{value}"'}))
        _assert_not_500(
            api.patch(url, json={"notes": "x"}, headers={**tokens["analyst"], "If-Match": f'"{value}"'})
        )
    for header in ("*", "", '"1", W/"1"', "garbage"):
        _assert_not_500(
            api.patch(url, json={"notes": "x"}, headers={**tokens["analyst"], "If-Match": header})
        )


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=10), children, max_size=3)
    ),
    max_leaves=8,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    fields=st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=4),
    collection=st.sampled_from(["licences", "filings", "certifications", "datacenters", "offers"]),
    item=st.dictionaries(st.text(max_size=20), JSON_VALUES, max_size=4),
)
def test_random_bodies_never_give_500(api, tokens, fields, collection, item):
    base = provider_payload(uscc=None)
    base[collection] = [{**base[collection][0], **item}]
    _assert_not_500(api.post("/api/v1/providers", json={**base, **fields}, headers=tokens["admin"]))
    _assert_not_500(api.post("/api/v1/providers", json=fields, headers=tokens["admin"]))
