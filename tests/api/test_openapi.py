"""The OpenAPI document: matches the registered routes, every $ref resolves, real answers validate."""

from __future__ import annotations

import re
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from app.models.enums import BandwidthType, ProviderStatus, StorageType
from app.registry.provider_list import SORTS, ProviderQuery
from tests.api.conftest import provider_payload

PREFIX = "/api/v1"
METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture
def doc(api) -> dict[str, Any]:
    response = api.get(f"{PREFIX}/openapi.json")
    assert response.status_code == 200 and response.mimetype == "application/json"
    return response.get_json()


def _resolve(doc: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and part in node, f"unresolved $ref {ref}"
        node = node[part]
    return node


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


def _validator(doc: dict[str, Any], name: str) -> Draft202012Validator:
    schema = {"$ref": f"#/components/schemas/{name}", "components": doc["components"]}
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def _assert_valid(doc: dict[str, Any], name: str, instance: Any) -> None:
    errors = sorted(_validator(doc, name).iter_errors(instance), key=lambda error: error.path)
    assert not errors, [f"{list(error.path)}: {error.message}" for error in errors[:5]]


def _operation(doc: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    return doc["paths"][path][method]


def test_document_header(doc):
    assert doc["openapi"].startswith("3.1.")
    assert doc["info"]["title"] and doc["info"]["version"]
    assert doc["servers"] == [{"url": PREFIX}]
    assert doc["components"]["securitySchemes"]["bearer"] == {
        **doc["components"]["securitySchemes"]["bearer"],
        "type": "http",
        "scheme": "bearer",
    }


def test_paths_match_the_registered_routes_both_ways(app, doc):
    routes = set()
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith(PREFIX + "/"):
            path = re.sub(r"<(?:[^:<>]+:)?(\w+)>", r"{\1}", rule.rule.removeprefix(PREFIX))
            routes |= {(path, method.lower()) for method in rule.methods - {"HEAD", "OPTIONS"}}
    documented = {
        (path, method) for path, item in doc["paths"].items() for method in item if method in METHODS
    }
    assert routes == documented
    assert {
        "/providers",
        "/providers/{provider_id}",
        "/providers/{provider_id}/history",
        "/openapi.json",
    } <= {path for path, _ in routes}


def test_operations_are_complete(doc):
    operation_ids = []
    for path, item in doc["paths"].items():
        templated = set(re.findall(r"{(\w+)}", path))
        for method, operation in item.items():
            operation_ids.append(operation["operationId"])
            assert operation["summary"] and operation["responses"]
            assert any(status.startswith("2") for status in operation["responses"]), (path, method)
            declared = {p["name"] for p in operation["parameters"] if p["in"] == "path"}
            assert declared == templated, (path, method)
            assert all(p["required"] for p in operation["parameters"] if p["in"] == "path")
            if operation["security"]:
                assert operation["security"] == [{"bearer": []}]
                assert {"401", "403"} <= set(operation["responses"]), (path, method)
            if "requestBody" in operation:
                assert {"400", "413", "422"} <= set(operation["responses"]), (path, method)
            for status, response in operation["responses"].items():
                if status.startswith("4"):
                    error = _resolve(doc, response["$ref"])
                    schema = error["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorResponse"}
    assert len(operation_ids) == len(set(operation_ids))
    assert _operation(doc, "/openapi.json", "get")["security"] == []
    roles = {
        (path, method): operation.get("x-required-role")
        for path, item in doc["paths"].items()
        for method, operation in item.items()
    }
    assert roles[("/providers", "get")] == "viewer"
    assert roles[("/providers", "post")] == roles[("/providers/{provider_id}", "patch")] == "analyst"
    assert roles[("/providers/{provider_id}", "delete")] == "admin"


def test_every_ref_resolves_and_every_schema_is_valid_json_schema(doc):
    refs = _refs(doc)
    assert refs
    for ref in refs:
        _resolve(doc, ref)
    schemas = doc["components"]["schemas"]
    for name in (
        "ProviderCreate",
        "ProviderPatch",
        "ProviderPublic",
        "ProviderWithVerdict",
        "ProviderWithVerdictPage",
        "VerdictPublic",
        "ErrorResponse",
    ):
        assert name in schemas
    for schema in schemas.values():
        Draft202012Validator.check_schema(schema)
    assert "version" in schemas["ProviderPatch"]["required"]
    assert schemas["ProviderCreate"]["additionalProperties"] is False


def test_list_parameters_follow_the_query_and_enums(doc):
    params = {p["name"]: p for p in _operation(doc, "/providers", "get")["parameters"]}
    assert set(params) == set(ProviderQuery.model_fields)
    assert all(p["in"] == "query" and not p["required"] for p in params.values())

    def enum(name: str) -> set[str]:
        schema = params[name]["schema"]
        schema = _resolve(doc, schema["$ref"]) if "$ref" in schema else schema
        return set(schema["enum"])

    assert enum("status") == {e.value for e in ProviderStatus}
    assert enum("bandwidth_type") == {e.value for e in BandwidthType}
    assert enum("storage_type") == {e.value for e in StorageType}
    assert enum("sort") == set(SORTS)
    assert params["per_page"]["schema"]["maximum"] == 100


def test_real_answers_validate_against_the_document(doc, api, tokens):
    analyst, viewer = tokens["analyst"], tokens["viewer"]
    created = api.post(f"{PREFIX}/providers", json=provider_payload(), headers=analyst)
    assert created.status_code == 201
    _assert_valid(doc, "ProviderPublic", created.get_json())
    url = created.headers["Location"]

    body = api.get(url, headers=viewer).get_json()
    _assert_valid(doc, "ProviderWithVerdict", body)
    assert body["licences"] and body["filings"] and body["offers"] and body["datacenters"]
    assert body["verdict"]["level"] == "unchecked"
    listed = api.get(f"{PREFIX}/providers", headers=viewer).get_json()
    _assert_valid(doc, "ProviderWithVerdictPage", listed)
    assert listed["items"][0]["verdict"] == body["verdict"]
    _assert_valid(doc, "AuditEntryList", api.get(f"{url}/history", headers=viewer).get_json())

    # What a client reads can be sent back as a PATCH body.
    read_only = {"id", "created_at", "updated_at", "verdict"}
    patch = {key: value for key, value in body.items() if key not in read_only}
    for collection in ("licences", "filings"):
        for item in patch[collection]:
            for derived in ("number", "number_kind", "categories"):
                item.pop(derived, None)
    _assert_valid(doc, "ProviderPatch", patch)
    assert api.patch(url, json=patch, headers=analyst).status_code == 200

    for response in (
        api.get(f"{PREFIX}/providers"),
        api.get(f"{PREFIX}/providers/999999", headers=viewer),
        api.post(f"{PREFIX}/providers", json={"legal_name": ""}, headers=analyst),
        api.post(f"{PREFIX}/providers", data="{", headers={**analyst, "Content-Type": "application/json"}),
        api.delete(url, headers=analyst),
    ):
        assert response.status_code >= 400
        _assert_valid(doc, "ErrorResponse", response.get_json())

    # A document schema says what the API refuses too.
    assert not _validator(doc, "ProviderCreate").is_valid({"legal_name": "示例公司", "colour": "blue"})
