"""Forms: errors named at the input, typed values kept, version conflicts, nested records."""

from __future__ import annotations

from app.models import Provider
from tests.web.conftest import field_error, input_value, selected_value

OFFER = {
    "name": "八卡 H800",
    "offer_kind": "bare_metal",
    "gpu_model": "H800",
    "gpus_per_node": "8",
    "gpu_memory_gb": "80",
    "rdma_type": "roce",
    "rdma_gbps": "400",
    "public_mbps": "100",
    "bandwidth_type": "dedicated",
    "storage_type": "local_nvme",
    "price_gpu_hour_cny": "12.5",
    "notes": "含 4 块 NVMe",
}


def test_provider_form_shows_error_under_the_field_and_keeps_input(login):
    client = login("analyst")
    response = client.post(
        "/providers/new",
        data={
            "legal_name": "某",
            "short_name": "保留的简称",
            "contact_email": "not-an-email",
            "registered_capital_cny": "很多",
            "discloses_storage_config": "false",
            "status": "approved",
        },
    )
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert field_error(html, "legal_name") == "至少 2 个字符"
    assert "邮箱格式不正确" in field_error(html, "contact_email")
    assert "须为整数" in field_error(html, "registered_capital_cny")
    assert field_error(html, "short_name") is None
    assert 'id="f-legal_name"' in html and "is-invalid" in html
    assert input_value(html, "short_name") == "保留的简称"
    assert input_value(html, "contact_email") == "not-an-email"
    assert input_value(html, "registered_capital_cny") == "很多"
    assert selected_value(html, "discloses_storage_config") == "false"
    assert selected_value(html, "status") == "approved"


def test_offer_gpus_per_node_zero_is_named_at_that_input(login, make_provider):
    provider = make_provider(datacenters=[{"name": "一号机房", "province": "北京"}])
    client = login("analyst")
    page = client.get(f"/providers/{provider.id}/offers/new").get_data(as_text=True)
    assert 'name="version" value="1"' in page
    assert "一号机房" in page  # the datacenter select lists the provider's datacenters

    data = {**OFFER, "gpus_per_node": "0", "datacenter_id": str(provider.datacenters[0].id), "version": "1"}
    response = client.post(f"/providers/{provider.id}/offers/new", data=data)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert field_error(html, "gpus_per_node") == "不能小于 1"
    assert field_error(html, "gpu_model") is None
    assert input_value(html, "gpus_per_node") == "0"
    assert input_value(html, "gpu_model") == "H800"
    assert input_value(html, "price_gpu_hour_cny") == "12.5"
    assert selected_value(html, "datacenter_id") == str(provider.datacenters[0].id)
    assert selected_value(html, "rdma_type") == "roce"
    assert "含 4 块 NVMe" in html


def test_offer_is_saved_with_its_datacenter(login, make_provider, session):
    provider = make_provider(datacenters=[{"name": "一号机房", "province": "北京"}])
    client = login("analyst")
    data = {**OFFER, "datacenter_id": str(provider.datacenters[0].id), "version": "1"}
    response = client.post(f"/providers/{provider.id}/offers/new", data=data)
    assert response.status_code == 302
    assert response.location.endswith(f"/providers/{provider.id}#offers")
    session.expire_all()
    stored = session.get(Provider, provider.id)
    offer = stored.offers[0]
    assert (offer.gpus_per_node, offer.rdma_gbps, offer.price_gpu_hour_cny) == (8, 400.0, 12.5)
    assert offer.datacenter_id == provider.datacenters[0].id
    assert stored.version == 2
    html = client.get(f"/providers/{provider.id}").get_data(as_text=True)
    assert "八卡 H800" in html and "一号机房" in html

    # the edit form shows what was stored
    form = client.get(f"/providers/{provider.id}/offers/{offer.id}/edit").get_data(as_text=True)
    assert input_value(form, "gpus_per_node") == "8"
    assert input_value(form, "rdma_gbps") == "400"
    assert selected_value(form, "datacenter_id") == str(provider.datacenters[0].id)
    assert 'name="version" value="2"' in form


def test_offer_with_foreign_datacenter_is_refused(login, make_provider):
    mine = make_provider(datacenters=[{"name": "一号机房", "province": "北京"}])
    other = make_provider(
        legal_name="上海别家算力有限公司", datacenters=[{"name": "外滩", "province": "上海"}]
    )
    client = login("analyst")
    data = {**OFFER, "datacenter_id": str(other.datacenters[0].id), "version": "1"}
    response = client.post(f"/providers/{mine.id}/offers/new", data=data)
    assert response.status_code == 422
    assert "机房不属于本供应商" in field_error(response.get_data(as_text=True), "datacenter_id")


def test_licence_form_parses_checkboxes_tristate_and_coverage(login, make_provider, session):
    provider = make_provider()
    client = login("analyst")
    response = client.post(
        f"/providers/{provider.id}/licences/new",
        data={
            "number_raw": "京Ｂ１－２０１９０００１",
            "business_items": ["B11", "B14"],
            "b11_includes_resource_collab": "true",
            "coverage": "北京、上海，广东",
            "status": "正常",
            "issued_on": "2019-03-01",
            "expires_on": "2024-03-01",
            "version": "1",
        },
    )
    assert response.status_code == 302, response.get_data(as_text=True)[:3000]
    session.expire_all()
    licence = session.get(Provider, provider.id).licences[0]
    assert licence.business_items == ["B11", "B14"]
    assert licence.b11_includes_resource_collab is True
    assert licence.coverage == ["北京", "上海", "广东"]
    assert licence.number == "京B1-20190001"

    form = client.get(f"/providers/{provider.id}/licences/{licence.id}/edit").get_data(as_text=True)
    assert selected_value(form, "b11_includes_resource_collab") == "true"
    assert 'value="B11" id="f-business_items-1" checked' in form
    assert 'value="B12" id="f-business_items-2" checked' not in form
    assert input_value(form, "coverage") == "北京, 上海, 广东"


def test_licence_errors_and_dates(login, make_provider):
    provider = make_provider()
    client = login("analyst")
    response = client.post(
        f"/providers/{provider.id}/licences/new",
        data={
            "number_raw": "",
            "business_items": ["B11"],
            "issued_on": "2024-05-01",
            "expires_on": "2020-01-01",
            "version": "1",
        },
    )
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert "必填" in field_error(html, "number_raw")
    assert "早于发证日期" in field_error(html, "expires_on")
    assert input_value(html, "expires_on") == "2020-01-01"
    assert 'value="B11" id="f-business_items-1" checked' in html


def test_filing_kind_auto_detect_and_refusal(login, make_provider, session):
    provider = make_provider()
    client = login("analyst")
    page = client.get(f"/providers/{provider.id}/filings/new").get_data(as_text=True)
    assert '<option value="">自动识别</option>' in page

    ok = client.post(
        f"/providers/{provider.id}/filings/new",
        data={"kind": "", "number_raw": "京ICP备10046444号-9", "entity_name": "北京示例", "version": "1"},
    )
    assert ok.status_code == 302
    session.expire_all()
    assert session.get(Provider, provider.id).filings[0].kind == "icp_filing"

    refused = client.post(
        f"/providers/{provider.id}/filings/new", data={"kind": "", "number_raw": "随便写的", "version": "2"}
    )
    assert refused.status_code == 422
    assert "无法从号码判断类型" in field_error(refused.get_data(as_text=True), "kind")


def test_certification_and_datacenter_rules_come_from_the_models(login, make_provider):
    provider = make_provider(datacenters=[{"name": "一号机房", "province": "北京"}])
    client = login("analyst")
    response = client.post(
        f"/providers/{provider.id}/certifications/new", data={"kind": "dengbao", "version": "1"}
    )
    assert response.status_code == 422
    assert "等保认证须填写级别" in field_error(response.get_data(as_text=True), "level")

    response = client.post(
        f"/providers/{provider.id}/datacenters/new",
        data={"name": "一号机房", "province": "上海", "version": "1"},
    )
    assert response.status_code == 422
    assert "机房名称不能重复" in field_error(response.get_data(as_text=True), "name")


def test_version_conflict_keeps_the_first_save(app, login, make_provider, session):
    provider = make_provider()
    first, second = login("analyst", "anna"), login("analyst", "bert")
    assert 'name="version" value="1"' in first.get(f"/providers/{provider.id}/edit").get_data(as_text=True)
    assert 'name="version" value="1"' in second.get(f"/providers/{provider.id}/edit").get_data(as_text=True)

    base = {"legal_name": "北京示例算力科技有限公司", "status": "candidate", "version": "1"}
    assert first.post(f"/providers/{provider.id}/edit", data={**base, "short_name": "甲"}).status_code == 302
    response = second.post(f"/providers/{provider.id}/edit", data={**base, "short_name": "乙"})
    assert response.status_code == 409
    html = response.get_data(as_text=True)
    assert 'id="form-errors"' in html
    assert "anna" in html and "请重新打开页面" in html
    assert input_value(html, "short_name") == "乙"  # the user's input is not lost
    assert 'name="version" value="1"' in html
    session.expire_all()
    stored = session.get(Provider, provider.id)
    assert stored.short_name == "甲"
    assert stored.version == 2


def test_nested_record_conflict_and_delete(login, make_provider, session):
    provider = make_provider(certifications=[{"kind": "iso9001", "number": "Q-1"}])
    client = login("analyst")
    cert = provider.certifications[0].id
    stale = client.post(
        f"/providers/{provider.id}/certifications/{cert}/edit",
        data={"kind": "iso9001", "number": "Q-2", "version": "0"},
    )
    assert stale.status_code == 409
    assert input_value(stale.get_data(as_text=True), "number") == "Q-2"

    client = login("admin")  # deleting nested records is for admins
    assert (
        client.post(
            f"/providers/{provider.id}/certifications/{cert}/delete", data={"version": "0"}
        ).status_code
        == 409
    )
    response = client.post(f"/providers/{provider.id}/certifications/{cert}/delete", data={"version": "1"})
    assert response.status_code == 302
    session.expire_all()
    assert session.get(Provider, provider.id).certifications == []


def test_unknown_collection_and_record_are_404(login, make_provider):
    provider = make_provider()
    client = login("analyst")
    assert client.get(f"/providers/{provider.id}/widgets/new").status_code == 404
    assert client.get(f"/providers/{provider.id}/offers/999/edit").status_code == 404
    assert client.get("/providers/999/offers/new").status_code == 404
    assert client.post("/providers/999/edit", data={"legal_name": "x", "version": "1"}).status_code == 404


def test_uscc_duplicate_is_shown_at_the_field(login, make_provider):
    make_provider(uscc="91350100M000100Y43")
    client = login("analyst")
    response = client.post(
        "/providers/new",
        data={"legal_name": "另一家科技有限公司", "uscc": "91350100M000100Y43", "status": "candidate"},
    )
    assert response.status_code == 409
    assert "已登记在" in field_error(response.get_data(as_text=True), "uscc")
