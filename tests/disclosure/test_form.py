"""The provider's form: registry validation next to each field, identifiers normalised, drafts kept, CSRF."""

from __future__ import annotations

import re

import pytest
from sqlmodel import Session

from app.disclosure.schema import Disclosure
from app.models.disclosure import Invitation
from tests.conftest import csrf_token_from
from tests.disclosure import samples

# Storage matters in only some tests; the others run on SQLite alone (PostgreSQL adds seconds per test).
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

NAME = "示例披露算力科技有限公司"
COMPLETE = {
    "identity.legal_name": NAME,
    "identity.uscc": samples.FULL_WIDTH_USCC,
    "identity.registered_province": "粤",
    "identity.website": "example.cn",
    "licences.0.number_raw": "北京Ｂ２－２０２０２４１８",  # province name instead of 京, full-width digits
    "licences.0.business_items": "b11，B12",
    "licences.0.coverage": "全国",
    "licences.0.expires_on": "2029-03-14",
    "filings.0.number_raw": "京ICP备10046444号－9",
    "filings.1.number_raw": "北京市公网安备11010802032137号",
    "certifications.0.kind": "dengbao",
    "certifications.0.level": "３",
    "datacenters.0.name": "华南一号机房",
    "datacenters.0.province": "广东省",
    "datacenters.0.city": "深圳",
    "datacenters.0.tier": "tier3",
    "datacenters.0.power_kw": "1200",
    "offers.0.gpu_model": "Ｈ８００",
    "offers.0.gpus_per_node": "8",
    "offers.0.datacenter_name": "华南一号机房",
    "offers.0.rdma_type": "infiniband",
    "offers.0.rdma_gbps": "400",
    "offers.0.public_mbps": "100",
    "offers.0.bandwidth_type": "dedicated",
    "offers.0.storage_type": "local_nvme",
    "offers.0.price_gpu_hour_cny": "12.5",
    "topology.oversubscription_ratio": "３：１",
    "topology.uplink_gbps": "200",
    "topology.shared_with": "同机房其他租户",
    "storage.location": "local_nvme",
    "storage.raid": "raid10",
    "trial.will_lend": "yes",
    "trial.how": "免费试用 3 天",
    "confirm_submit": "yes",  # submitting is final: the provider ticks to confirm (issue 27 item 12)
}


@pytest.fixture
def invited(app):
    """A session, a test client and a new invitation's token."""
    with Session(app.extensions["gpuvet.engine"], expire_on_commit=False) as session:
        with app.app_context():  # not kept: requests must get their own context (locale, g)
            invitation, token = samples.invite(session)
        yield session, app.test_client(), invitation, token


def value(html: str, name: str) -> str | None:
    match = re.search(rf'name="{re.escape(name)}" value="([^"]*)"', html)
    return match.group(1) if match else None


def error(html: str, name: str) -> str:
    match = re.search(rf'id="{re.escape(name.replace(".", "-"))}-error">([^<]*)<', html)
    return match.group(1) if match else ""


def test_full_width_and_aliases_are_shown_back_normalised_and_submitted(invited):
    session, client, invitation, token = invited
    html = client.post(f"/d/{token}", data={**COMPLETE, "action": "save"}).get_data(as_text=True)
    assert value(html, "identity.uscc") == samples.VALID_USCC
    assert value(html, "licences.0.number_raw") == "京B2-20202418"
    assert value(html, "filings.0.number_raw") == "京ICP备10046444号-9"
    assert value(html, "filings.1.number_raw") == "京公网安备11010802032137号"
    assert 'id="disclosure-outcome"' in html and "草稿已保存" in html and "field-error" not in html

    response = client.post(f"/d/{token}", data={**COMPLETE, "action": "submit"})
    assert 'id="disclosure-thanks"' in response.get_data(as_text=True)
    session.refresh(invitation)
    answers = invitation.answers
    assert Disclosure.model_validate(answers).dump() == answers  # the schema's own shape
    assert "status" not in answers["licences"][0]  # registry defaults nobody asked about stay out
    assert answers["identity"]["uscc"] == samples.VALID_USCC
    assert answers["identity"]["registered_province"] == "广东"
    assert answers["identity"]["website"] == "https://example.cn"
    licence = answers["licences"][0]
    assert (licence["number_raw"], licence["business_items"], licence["coverage"]) == (
        "京B2-20202418",
        ["B11", "B12"],
        ["全国"],
    )
    assert [(f["kind"], f["number_raw"]) for f in answers["filings"]] == [
        ("icp_filing", "京ICP备10046444号-9"),
        ("psb_filing", "京公网安备11010802032137号"),
    ]
    assert answers["certifications"][0]["level"] == 3
    assert answers["datacenters"][0]["province"] == "广东" and answers["datacenters"][0]["power_kw"] == 1200
    assert answers["offers"][0]["gpu_model"] == "H800" and answers["offers"][0]["rdma_gbps"] == 400
    assert answers["topology"]["oversubscription_ratio"] == "3:1"
    assert Disclosure.model_validate(answers).answer_states() == {
        "topology": "answered",
        "storage": "answered",
        "trial": "answered",
    }
    assert len(answers["licences"]) == 1  # blank rows are left out


FIELD_CHECKS = [
    ("identity.uscc", "91110000802100433C", "校验码应为 B"),
    ("identity.registered_province", "火星", "未知省份"),
    ("identity.website", "javascript:alert(1)", "不接受其他协议"),
    ("licences.0.number_raw", "京ICP备10046444号", "编号类型不符"),
    ("licences.0.business_items", "B11、B99", "未知业务代码 B99"),
    ("certifications.0.level", "", "等保认证须填写级别"),
    ("offers.0.rdma_type", "", "未选择 RDMA 类型却填写了 RDMA 带宽"),  # shown under rdma_gbps
    ("offers.0.gpus_per_node", "0", "不能小于 1"),
    ("offers.0.datacenter_name", "不存在的机房", "没有名为“不存在的机房”的机房"),
    ("topology.oversubscription_ratio", "很多", "收敛比须形如"),
]


@SQLITE_ONLY
def test_each_field_is_checked_as_the_registry_checks_it_with_the_error_next_to_it(invited):
    session, client, invitation, token = invited
    for field, typed, expected in FIELD_CHECKS:
        response = client.post(f"/d/{token}", data={**COMPLETE, field: typed, "action": "submit"})
        html = response.get_data(as_text=True)
        assert response.status_code == 200 and 'id="disclosure-thanks"' not in html
        shown_at = "offers.0.rdma_gbps" if field == "offers.0.rdma_type" else field
        assert expected in error(html, shown_at), (field, error(html, shown_at) or html[:2000])
        assert "未能提交：有 1 处需要修改" in html, field  # only the field changed is wrong
    session.refresh(invitation)
    assert invitation.status == "draft" and invitation.answers == {}


@SQLITE_ONLY
def test_an_abandoned_draft_keeps_even_invalid_text_as_typed(invited):
    session, client, invitation, token = invited
    typed = {**COMPLETE, "identity.uscc": "91110000802100433C", "offers.0.price_gpu_hour_cny": "十二块五"}
    client.post(f"/d/{token}", data={**typed, "action": "save"})
    html = client.get(f"/d/{token}").get_data(as_text=True)  # later, a fresh visit
    assert value(html, "identity.uscc") == "91110000802100433C"
    assert value(html, "offers.0.price_gpu_hour_cny") == "十二块五"
    assert value(html, "topology.uplink_gbps") == "200"
    assert re.search(r'<option value="raid10" selected', html)
    assert re.search(r'name="trial.will_lend" value="yes" checked', html)
    session.refresh(invitation)
    assert invitation.status == "draft" and invitation.saved_at is not None


@SQLITE_ONLY
def test_add_row_saves_and_shows_one_more_blank_row(invited):
    _session, client, _invitation, token = invited
    html = client.get(f"/d/{token}").get_data(as_text=True)
    before = len(re.findall(r'class="border rounded p-3 mb-3 disclosure-row" id="licences-', html))
    data = {**COMPLETE, "rows.licences": str(before), "action": "add:licences"}
    html = client.post(f"/d/{token}", data=data).get_data(as_text=True)
    after = len(re.findall(r'class="border rounded p-3 mb-3 disclosure-row" id="licences-', html))
    assert after == before + 1
    assert value(html, "licences.0.number_raw") == "京B2-20202418"


@SQLITE_ONLY
def test_a_submitted_questionnaire_can_no_longer_be_changed(invited):
    session, client, invitation, token = invited
    client.post(f"/d/{token}", data={**COMPLETE, "action": "submit"})
    session.refresh(invitation)
    answers = invitation.answers
    page = client.post(
        f"/d/{token}", data={**COMPLETE, "identity.legal_name": "改名有限公司", "action": "submit"}
    )
    assert 'id="disclosure-thanks"' in page.get_data(as_text=True)
    session.expire_all()
    assert session.get(Invitation, invitation.id).answers == answers


@SQLITE_ONLY
def test_declining_is_an_answer_and_unanswered_sections_stay_unanswered(invited):
    session, client, invitation, token = invited
    data = {
        "identity.legal_name": NAME,
        "identity.uscc": samples.VALID_USCC,
        "topology.declined": "on",
        "trial.will_lend": "no",
        "action": "submit",
        "confirm_submit": "yes",
    }
    client.post(f"/d/{token}", data=data)
    session.refresh(invitation)
    assert Disclosure.model_validate(invitation.answers).answer_states() == {
        "topology": "declined",
        "storage": "unanswered",
        "trial": "declined",
    }


@SQLITE_ONLY
def test_the_form_needs_its_csrf_token(app, invited):
    _session, client, _invitation, token = invited
    app.config["WTF_CSRF_ENABLED"] = True
    try:
        refused = client.post(f"/d/{token}", data={**COMPLETE, "action": "save"})
        assert refused.status_code == 400
        csrf = csrf_token_from(client.get(f"/d/{token}").get_data(as_text=True))
        accepted = client.post(f"/d/{token}", data={**COMPLETE, "csrf_token": csrf, "action": "save"})
        assert accepted.status_code == 200 and "草稿已保存" in accepted.get_data(as_text=True)
    finally:
        app.config["WTF_CSRF_ENABLED"] = False


@SQLITE_ONLY
def test_chinese_first_with_an_english_switch(invited):
    _session, client, _invitation, token = invited
    html = client.get(f"/d/{token}").get_data(as_text=True)
    assert "统一社会信用代码" in html and "<script" not in html
    assert f"/lang/en?next=/d/{token}" in html
    client.get(f"/lang/en?next=/d/{token}")
    english = client.get(f"/d/{token}").get_data(as_text=True)
    assert "Unified social credit code" in english and "Save draft" in english
