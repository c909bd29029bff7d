"""/api/v1/cases: create from answers, read back with advice, one error shape, listed in OpenAPI."""

from __future__ import annotations

from tests.cases.conftest import KINDS, codes, example, offers_named


def test_create_and_read_a_case(app, token_for, demo_loaded):
    client = app.test_client()
    response = client.post(
        "/api/v1/cases", json=example("distributed_training"), headers=token_for("analyst")
    )
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert response.headers["Location"].endswith(f"/api/v1/cases/{body['id']}")
    assert response.headers["ETag"] == '"1"'
    assert body["complete"] and body["workload_kind"] == "distributed_training"
    assert body["title"] == "7B 模型四机预训练" and body["owner_name"] == "api-analyst"
    advice = body["advice"]
    assert {q["key"] for q in advice["requirements"]} >= {"allreduce_gb", "intranet_gbps_needed", "rdma"}
    (b2_only,) = offers_named(advice["offers"], "虚构极光云科技有限公司")
    assert codes(b2_only) == ["licence.no_b11"]

    read = client.get(response.headers["Location"], headers=token_for("viewer"))
    assert read.status_code == 200
    assert read.get_json()["advice"]["offers"] == advice["offers"]
    listed = client.get("/api/v1/cases", headers=token_for("viewer", "v2")).get_json()["items"]
    assert [item["id"] for item in listed] == [body["id"]]


def test_every_example_is_accepted(app, token_for):
    client = app.test_client()
    headers = token_for("analyst")
    for kind in KINDS:
        response = client.post("/api/v1/cases", json=example(kind), headers=headers)
        assert response.status_code == 201, (kind, response.get_json())


def test_bad_answers_get_field_level_errors(app, token_for):
    answers = example("distributed_training")
    answers["compute"]["gpus_per_node"] = -8
    answers["site"]["office_city"] = "火星"
    del answers["model"]["target_step_seconds"]
    client = app.test_client()
    response = client.post("/api/v1/cases", json=answers, headers=token_for("analyst"))
    assert response.status_code == 422
    fields = {error["field"] for error in response.get_json()["errors"]}
    assert fields == {"compute.gpus_per_node", "site.office_city", "model.target_step_seconds"}
    answers["compute"]["gpus_per_node"] = 8
    answers["site"]["office_city"] = "北京"
    response = client.post("/api/v1/cases", json=answers, headers=token_for("analyst", "a2"))
    assert [error["field"] for error in response.get_json()["errors"]] == ["model.target_step_seconds"]


def test_roles_and_missing_cases(app, token_for):
    client = app.test_client()
    assert client.post("/api/v1/cases", json=example("offline_batch")).status_code == 401
    assert (
        client.post("/api/v1/cases", json=example("offline_batch"), headers=token_for("viewer")).status_code
        == 403
    )
    missing = client.get("/api/v1/cases/999999", headers=token_for("viewer", "v3"))
    assert missing.status_code == 404 and missing.get_json()["errors"][0]["field"] == "id"
    bad = client.post(
        "/api/v1/cases", data="[1]", content_type="application/json", headers=token_for("analyst")
    )
    assert bad.status_code == 400


def test_openapi_documents_the_case_operations(app):
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    assert {"post", "get"} <= set(document["paths"]["/cases"])
    assert "get" in document["paths"]["/cases/{case_id}"]
    request = document["paths"]["/cases"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert request["$ref"].endswith("/Answers")
    assert "WorkloadSection" in document["components"]["schemas"]


def test_limit_lists_the_best_and_the_first_excluded(app, token_for, demo_loaded):
    client = app.test_client()
    headers = token_for("analyst")
    created = client.post("/api/v1/cases?limit=2", json=example("distributed_training"), headers=headers)
    offers = created.get_json()["advice"]["offers"]
    assert [offer["excluded"] for offer in offers] == [False, False, True, True]
    assert created.get_json()["advice"]["summary"]["offers"] == 27
    bad = client.get(f"/api/v1/cases/{created.get_json()['id']}?limit=0", headers=headers)
    assert bad.status_code == 422 and bad.get_json()["errors"][0]["field"] == "limit"
    unknown = client.get(f"/api/v1/cases/{created.get_json()['id']}?top=2", headers=headers)
    assert unknown.status_code == 422 and unknown.get_json()["errors"][0]["field"] == "top"
