"""API answers as the document says (issue 23 item 13): bench-run times carry their offset, dates are
strict, blank list parameters are documented, multipart-only bodies and their 415 are documented, and every
operation documents the 422 of its business rules."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from app.trials import bench_uploads
from tests.api.conftest import assert_error_shape, provider_payload
from tests.benchmarks.conftest import DATA

PREFIX = "/api/v1"
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


@pytest.fixture
def doc(api):
    return api.get(f"{PREFIX}/openapi.json").get_json()


def test_bench_run_times_carry_their_offset(api, session, tokens, arrange):
    offer = arrange().offers[0]
    run = bench_uploads.upload_output(
        session, offer_id=offer.id, tool="ping", output=(DATA / "ping_ok.txt").read_bytes()
    )
    body = api.get(f"{PREFIX}/bench-runs/{run.id}", headers=tokens["viewer"]).get_json()
    for name in ("created_at", "finished_at"):
        assert RFC3339.match(body[name]), body[name]
        assert datetime.fromisoformat(body[name]).utcoffset() is not None


@pytest.mark.parametrize("value", [0, 1.5, "0", "1700000000", "2019-03-01T00:00:00"])
def test_licence_and_certification_dates_are_strict(api, tokens, value):
    licence = {**provider_payload()["licences"][0], "issued_on": value}
    certification = {"kind": "iso27001", "expires_on": value}
    body = provider_payload(licences=[licence], certifications=[certification])
    errors = assert_error_shape(api.post(f"{PREFIX}/providers", json=body, headers=tokens["analyst"]), 422)
    fields = {error["field"]: error["message"] for error in errors}
    assert set(fields) == {"licences[0].issued_on", "certifications[0].expires_on"}
    assert all("YYYY-MM-DD" in message for message in fields.values())


def test_blank_list_parameters_are_documented_as_not_given(doc, api, tokens):
    params = {p["name"]: p for p in doc["paths"]["/providers"]["get"]["parameters"]}
    assert all(param.get("allowEmptyValue") is True for param in params.values())
    assert api.get(f"{PREFIX}/providers?verdict=&page=", headers=tokens["viewer"]).status_code == 200
    other = doc["paths"]["/inbox"]["get"]["parameters"]
    assert not any(param.get("allowEmptyValue") for param in other)


def test_what_registry_input_reads_leniently_is_documented(doc, api, tokens):
    schemas = doc["components"]["schemas"]
    blank = {"type": "string", "maxLength": 0}
    assert blank in schemas["LicenceIn"]["properties"]["expires_on"]["anyOf"]
    assert blank in schemas["ProviderCreate"]["properties"]["uscc"]["anyOf"]
    assert blank not in schemas["LicencePublic"]["properties"]["expires_on"]["anyOf"]
    assert blank not in schemas["LicencePatch"]["properties"]["expires_on"]["anyOf"]
    gpus = schemas["OfferIn"]["properties"]["gpus_per_node"]["anyOf"]
    assert gpus[0]["type"] == "integer" and any(option.get("pattern") for option in gpus[1:])
    answer = api.post(
        f"{PREFIX}/providers",
        json=provider_payload(uscc="", offers=[{"gpu_model": "H800", "gpus_per_node": "８"}]),
        headers=tokens["analyst"],
    )
    assert answer.status_code == 201, answer.get_json()
    assert answer.get_json()["uscc"] is None and answer.get_json()["offers"][0]["gpus_per_node"] == 8


def test_manual_lookup_documents_multipart_only_and_its_415(doc, api, tokens, arrange):
    operation = doc["paths"]["/providers/{provider_id}/lookups/manual"]["post"]
    assert set(operation["requestBody"]["content"]) == {"multipart/form-data"}
    screenshot = doc["components"]["schemas"]["ManualLookupRequest"]["properties"]["screenshot"]
    assert screenshot["format"] == "binary"
    assert "415" in operation["responses"]
    provider = arrange()
    url = f"{PREFIX}/providers/{provider.id}/lookups/manual"
    assert_error_shape(api.post(url, json={"kind": "icp"}, headers=tokens["analyst"]), 415)


def test_uploads_document_json_and_multipart(doc):
    content = doc["paths"]["/offers/{offer_id}/uploads"]["post"]["requestBody"]["content"]
    assert set(content) == {"application/json", "multipart/form-data"}
    form = doc["components"]["schemas"]["UploadForm"]["properties"]
    assert form["file"]["format"] == "binary" and "output" in form


def test_every_operation_documents_422(doc, api, tokens):
    for path, methods in doc["paths"].items():
        for method, operation in methods.items():
            assert "422" in operation["responses"], f"{method.upper()} {path}"
    unknown = api.get(f"{PREFIX}/tokens?nonsense=1", headers=tokens["viewer"])
    assert assert_error_shape(unknown, 422)[0]["field"] == "nonsense"
    description = doc["components"]["responses"]["UnprocessableEntity"]["description"]
    assert "业务规则" in description and "business rule" in description


def test_a_query_parameter_given_twice_is_refused(api, tokens):
    response = api.get(f"{PREFIX}/providers?q=a&q=b&verdict=pass", headers=tokens["viewer"])
    (error,) = assert_error_shape(response, 422)
    assert error["field"] == "q"
