"""Provider endpoints: nested create and read, validation, versions, duplicates, filters, audit."""

from __future__ import annotations

import re

from app.registry import providers as svc
from tests.api.conftest import assert_error_shape, provider_payload

CJK = re.compile(r"[\u4e00-\u9fff]")


def _create(api, headers, **overrides):
    response = api.post("/api/v1/providers", json=provider_payload(**overrides), headers=headers)
    assert response.status_code == 201, response.get_json()
    return response


def test_create_with_nested_records_then_read_everything_back(api, tokens):
    created = _create(api, tokens["analyst"])
    body = created.get_json()
    assert created.headers["Location"] == f"/api/v1/providers/{body['id']}"
    assert created.headers["ETag"] == '"1"'

    response = api.get(created.headers["Location"], headers=tokens["viewer"])
    assert response.status_code == 200 and response.headers["ETag"] == '"1"'
    provider = response.get_json()
    verdict = provider.pop("verdict")  # a read: the verdict is derived, not part of what was written
    assert provider == body and "verdict" not in body
    assert verdict["level"] == "unchecked"
    assert provider["version"] == 1
    assert provider["uscc"] == "91440300708461136T"
    assert provider["registered_province"] == "广东"
    assert provider["website"] == "https://gpu.example.cn"
    assert provider["created_at"].endswith(("+00:00", "Z"))

    (licence,) = provider["licences"]
    assert licence["number_raw"] == "ICP证粤Ｂ１－２０１９０００１号"  # kept exactly as entered
    assert (licence["number"], licence["number_kind"], licence["categories"]) == (
        "粤B1-20190001",
        "licence",
        ["B1"],
    )
    assert licence["business_items"] == ["B11", "B14"]
    assert licence["coverage"] == ["广东"]
    assert (licence["issued_on"], licence["expires_on"], licence["status"]) == (
        "2019-03-01",
        "2029-03-01",
        "正常",
    )

    icp, psb = provider["filings"]
    assert (icp["kind"], icp["number"]) == ("icp_filing", "粤ICP备2021012345号-1")
    assert (psb["kind"], psb["number"]) == ("psb_filing", "粤公网安备44030502000001号")

    assert [(c["kind"], c["level"]) for c in provider["certifications"]] == [
        ("dengbao", 3),
        ("iso27001", None),
    ]
    shenzhen, guian = provider["datacenters"]
    assert (guian["name"], guian["province"], guian["city"]) == ("贵安二号", "贵州", "贵安")

    h800, a100 = provider["offers"]
    assert h800["datacenter_id"] == guian["id"] and a100["datacenter_id"] is None
    assert h800["gpu_model"] == "H800 SXM"
    assert (h800["gpus_per_node"], a100["gpus_per_node"]) == (8, 4)
    assert (h800["rdma_type"], h800["rdma_gbps"], h800["price_gpu_hour_cny"]) == ("roce", 400.0, 12.5)
    assert (a100["bandwidth_type"], a100["storage_type"]) == ("shared", "cloud_disk")
    assert shenzhen["province"] == "广东"


def test_validation_errors_name_nested_fields(api, tokens):
    bad = provider_payload(
        legal_name="x",
        licences=[{"number_raw": "", "business_items": "B99"}],
        certifications=[{"kind": "dengbao"}],
        offers=[{"gpu_model": "A100", "gpus_per_node": 0, "rdma_gbps": 100, "price_month_cny": "cheap"}],
        colour="blue",
    )
    errors = assert_error_shape(api.post("/api/v1/providers", json=bad, headers=tokens["analyst"]), 422)
    fields = {error["field"] for error in errors}
    assert fields == {
        "legal_name",
        "licences[0].number_raw",
        "licences[0].business_items",
        "certifications[0].level",
        "offers[0].gpus_per_node",
        "offers[0].rdma_gbps",
        "offers[0].price_month_cny",
        "colour",
    }
    assert all(CJK.search(error["message"]) for error in errors)  # our Chinese wording, one language
    assert not any("should" in error["message"] or "(" in error["message"] for error in errors)


def test_offer_naming_an_unknown_datacenter_is_refused(api, tokens):
    offers = [{"gpu_model": "A100", "gpus_per_node": 8, "datacenter_name": "不存在的机房"}]
    errors = assert_error_shape(
        api.post("/api/v1/providers", json=provider_payload(offers=offers), headers=tokens["analyst"]), 422
    )
    assert [error["field"] for error in errors] == ["offers[0].datacenter_name"]


def test_patch_changes_given_fields_and_nested_items_by_id(api, tokens):
    provider = _create(api, tokens["analyst"]).get_json()
    h800, a100 = provider["offers"]
    patch = {
        "version": 1,
        "status": "approved",
        "offers": [{"id": h800["id"], "price_gpu_hour_cny": 11}, {"id": a100["id"]}],
    }
    response = api.patch(f"/api/v1/providers/{provider['id']}", json=patch, headers=tokens["analyst"])
    assert response.status_code == 200, response.get_json()
    changed = response.get_json()
    assert response.headers["ETag"] == '"2"' and changed["version"] == 2
    assert changed["status"] == "approved" and changed["legal_name"] == provider["legal_name"]
    assert changed["offers"][0]["price_gpu_hour_cny"] == 11.0
    assert changed["offers"][0]["gpu_model"] == "H800 SXM"  # untouched field of a changed item kept
    assert changed["licences"] == provider["licences"]  # collection not given: unchanged

    # A nested list replaces the collection: leaving a record out deletes it, which is for admins.
    cut = {"version": 2, "certifications": [{"id": provider["certifications"][0]["id"]}]}
    dropped = provider["certifications"][1]["id"]
    refused = api.patch(f"/api/v1/providers/{provider['id']}", json=cut, headers=tokens["analyst"])
    (error,) = assert_error_shape(refused, 403)
    assert error["field"] == "certifications" and str(dropped) in error["message"]
    assert "admin" in error["message"]
    unchanged = api.get(f"/api/v1/providers/{provider['id']}", headers=tokens["viewer"]).get_json()
    assert unchanged["version"] == 2 and len(unchanged["certifications"]) == 2
    response = api.patch(f"/api/v1/providers/{provider['id']}", json=cut, headers=tokens["admin"])
    assert [c["kind"] for c in response.get_json()["certifications"]] == ["dengbao"]


def test_analyst_patch_keeping_every_record_by_id_is_allowed(api, tokens):
    provider = _create(api, tokens["analyst"]).get_json()
    offers = [{"id": offer["id"]} for offer in provider["offers"]]
    patch = {"version": 1, "offers": [*offers, {"gpu_model": "L40S", "gpus_per_node": 4}]}
    response = api.patch(f"/api/v1/providers/{provider['id']}", json=patch, headers=tokens["analyst"])
    assert response.status_code == 200, response.get_json()
    assert len(response.get_json()["offers"]) == 3


def test_patch_validation_names_nested_fields(api, tokens):
    provider = _create(api, tokens["analyst"]).get_json()
    first, second = (offer["id"] for offer in provider["offers"])
    patch = {"version": 1, "offers": [{"id": first, "gpus_per_node": 0}, {"id": second}]}
    errors = assert_error_shape(
        api.patch(f"/api/v1/providers/{provider['id']}", json=patch, headers=tokens["analyst"]), 422
    )
    assert [error["field"] for error in errors] == ["offers[0].gpus_per_node"]
    errors = assert_error_shape(
        api.patch(
            f"/api/v1/providers/{provider['id']}", json={"version": 1, "id": 5}, headers=tokens["analyst"]
        ),
        422,
    )
    assert [error["field"] for error in errors] == ["id"]


def test_same_version_twice_is_a_conflict_and_nothing_is_overwritten(api, tokens):
    provider = _create(api, tokens["analyst"]).get_json()
    url = f"/api/v1/providers/{provider['id']}"
    first = api.patch(url, json={"version": 1, "notes": "甲的修改"}, headers=tokens["analyst"])
    assert first.status_code == 200
    second = api.patch(url, json={"version": 1, "notes": "乙的修改"}, headers=tokens["admin"])
    errors = assert_error_shape(second, 409)
    assert errors[0]["field"] == "version" and "api-analyst" in errors[0]["message"]
    assert api.get(url, headers=tokens["viewer"]).get_json()["notes"] == "甲的修改"


def test_if_match_carries_the_version(api, tokens):
    provider = _create(api, tokens["analyst"]).get_json()
    url = f"/api/v1/providers/{provider['id']}"
    headers = {**tokens["analyst"], "If-Match": '"1"'}
    response = api.patch(url, json={"notes": "用 If-Match"}, headers=headers)
    assert response.status_code == 200 and response.headers["ETag"] == '"2"'
    assert_error_shape(api.patch(url, json={"notes": "过期"}, headers=headers), 409)
    weak = {**tokens["analyst"], "If-Match": 'W/"2"'}
    assert api.patch(url, json={"notes": "弱标签"}, headers=weak).status_code == 200

    errors = assert_error_shape(api.patch(url, json={"notes": "无版本"}, headers=tokens["analyst"]), 422)
    assert errors[0]["field"] == "version"
    for value in ('"abc"', '"1", "2"'):
        bad = {**tokens["analyst"], "If-Match": value}
        assert (
            assert_error_shape(api.patch(url, json={"notes": "x"}, headers=bad), 422)[0]["field"]
            == "If-Match"
        )
    disagree = {**tokens["analyst"], "If-Match": '"3"'}
    errors = assert_error_shape(api.patch(url, json={"version": 2, "notes": "x"}, headers=disagree), 422)
    assert errors[0]["field"] == "If-Match"


def test_delete_checks_the_version_when_given(api, tokens, session):
    url = f"/api/v1/providers/{_create(api, tokens['analyst']).get_json()['id']}"
    assert (
        assert_error_shape(api.delete(url + "?version=7", headers=tokens["admin"]), 409)[0]["field"]
        == "version"
    )
    assert (
        assert_error_shape(api.delete(url + "?version=x", headers=tokens["admin"]), 422)[0]["field"]
        == "version"
    )
    assert_error_shape(api.delete(url, headers={**tokens["admin"], "If-Match": '"7"'}), 409)
    response = api.delete(url, headers={**tokens["admin"], "If-Match": '"1"'})
    assert response.status_code == 204 and response.get_data() == b""
    assert_error_shape(api.get(url, headers=tokens["viewer"]), 404)
    assert_error_shape(api.delete(url, headers=tokens["admin"]), 404)

    other = _create(api, tokens["analyst"], uscc=None).get_json()
    assert (
        api.delete(f"/api/v1/providers/{other['id']}?version=1", headers=tokens["admin"]).status_code == 204
    )


def test_duplicate_uscc_is_a_conflict(api, tokens):
    first = _create(api, tokens["analyst"]).get_json()
    errors = assert_error_shape(
        api.post(
            "/api/v1/providers",
            json=provider_payload(legal_name="另一家公司", uscc="91440300708461136T"),
            headers=tokens["analyst"],
        ),
        409,
    )
    assert errors[0]["field"] == "uscc" and first["legal_name"] in errors[0]["message"]

    second = _create(api, tokens["analyst"], legal_name="第二家公司", uscc=None).get_json()
    patch = {"version": 1, "uscc": "91440300708461136T"}
    errors = assert_error_shape(
        api.patch(f"/api/v1/providers/{second['id']}", json=patch, headers=tokens["analyst"]), 409
    )
    assert errors[0]["field"] == "uscc"


def _seed_for_filters(arrange):
    arrange(uscc=None, legal_name="甲算力有限公司", status="approved")  # H800 dedicated + A100 shared, 广东
    arrange(
        uscc=None,
        legal_name="乙云计算有限公司",
        registered_province="北京",
        datacenters=[{"name": "亦庄", "province": "京"}],
        offers=[
            {"gpu_model": "RTX 4090", "gpus_per_node": 8, "storage_type": "nfs", "datacenter_name": "亦庄"}
        ],
        licences=[{"number_raw": "京B1-20200002", "business_items": "B11"}],
        filings=[],
    )
    for index in range(5):
        arrange(
            uscc=None,
            legal_name=f"丙{index}号数据有限公司",
            registered_province="四川",
            licences=[],
            filings=[],
            datacenters=[],
            offers=[{"gpu_model": "H800", "gpus_per_node": 8, "storage_type": "cloud_disk"}],
        )


def test_filters_sort_and_pagination(api, tokens, arrange):
    _seed_for_filters(arrange)
    viewer = tokens["viewer"]

    def names(query: str) -> list[str]:
        response = api.get(f"/api/v1/providers?{query}", headers=viewer)
        assert response.status_code == 200, response.get_json()
        return [item["legal_name"] for item in response.get_json()["items"]]

    assert names("status=approved") == ["甲算力有限公司"]
    assert set(names("gpu_model=h800")) == {"甲算力有限公司", *(f"丙{i}号数据有限公司" for i in range(5))}
    assert names("gpu_model=4090&storage_type=nfs") == ["乙云计算有限公司"]
    assert names("province=京") == ["乙云计算有限公司"]
    assert names("province=蜀&per_page=100") == [f"丙{i}号数据有限公司" for i in range(5)]
    assert names("bandwidth_type=shared") == ["甲算力有限公司"]
    assert names("q=京B1-20200002") == ["乙云计算有限公司"]
    assert names("q=粤ICP备2021012345号") == ["甲算力有限公司"]
    assert names("q=&status=") == names("")  # blank parameters mean "no filter"

    response = api.get("/api/v1/providers?province=四川&sort=-name&per_page=2&page=2", headers=viewer)
    page = response.get_json()
    assert (page["total"], page["page"], page["per_page"], page["pages"]) == (5, 2, 2, 3)
    assert [item["legal_name"] for item in page["items"]] == ["丙2号数据有限公司", "丙1号数据有限公司"]
    assert page["items"][0]["offers"][0]["gpu_model"] == "H800"  # nested records included
    beyond = api.get("/api/v1/providers?province=四川&per_page=2&page=9", headers=viewer).get_json()
    assert beyond["items"] == [] and beyond["total"] == 5


def test_bad_list_parameters_name_the_field(api, tokens):
    for query, field in (
        ("status=maybe", "status"),
        ("bandwidth_type=fast", "bandwidth_type"),
        ("storage_type=ssd", "storage_type"),
        ("sort=price", "sort"),
        ("province=火星", "province"),
        ("page=0", "page"),
        ("page=two", "page"),
        ("per_page=1000", "per_page"),
        ("colour=red", "colour"),
    ):
        errors = assert_error_shape(api.get(f"/api/v1/providers?{query}", headers=tokens["viewer"]), 422)
        assert [error["field"] for error in errors] == [field], query
        assert CJK.search(errors[0]["message"]) and "(" not in errors[0]["message"], errors


def test_audit_entries_carry_the_api_user(api, tokens, session):
    provider = _create(api, tokens["analyst"]).get_json()
    url = f"/api/v1/providers/{provider['id']}"
    api.patch(url, json={"version": 1, "status": "approved"}, headers=tokens["admin"])

    history = api.get(url + "/history", headers=tokens["viewer"]).get_json()["items"]
    created = [entry for entry in history if entry["action"] == "create"]
    assert {entry["actor_name"] for entry in created} == {"api-analyst"}
    assert {entry["entity"] for entry in created} == {
        "provider",
        "licence",
        "filing",
        "certification",
        "datacenter",
        "offer",
    }
    (update,) = [entry for entry in history if entry["action"] == "update"]
    assert update["actor_name"] == "api-admin" and update["changes"]["status"] == ["candidate", "approved"]
    assert history[0]["id"] > history[-1]["id"]  # newest first

    assert api.delete(url, headers=tokens["admin"]).status_code == 204
    after = api.get(url + "/history", headers=tokens["viewer"])
    assert after.status_code == 200  # the trail outlives the provider
    deleted = [entry for entry in after.get_json()["items"] if entry["action"] == "delete"]
    assert deleted and {entry["actor_name"] for entry in deleted} == {"api-admin"}
    assert {entry.actor_name for entry in svc.history(session, provider_id=provider["id"])} == {
        "api-analyst",
        "api-admin",
    }
    assert_error_shape(api.get("/api/v1/providers/999999/history", headers=tokens["viewer"]), 404)
