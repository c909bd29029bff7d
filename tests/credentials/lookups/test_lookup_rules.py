"""Rules comparing official lookup facts with the registry: each triggered once and not once."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace
from typing import Any

import pytest

from app.vetting.findings import RuleContext, Severity, load_rules, run_rules
from app.vetting.rules._common import load_knowledge

TODAY = date(2026, 11, 30)
REF = {"kind": "evidence", "evidence_id": 9, "url": "https://x/api", "sha256": "cd" * 32, "fetched_at": "t"}
LEGAL = "北京北辰算力科技有限公司"
ICP_RULES = (
    "lookup.icp_not_found",
    "lookup.icp_nature",
    "lookup.icp_unit_name",
    "lookup.icp_number_mismatch",
)
LICENCE_RULES = (
    "lookup.licence_not_found",
    "lookup.licence_status",
    "lookup.licence_expired",
    "lookup.licence_expiring",
    "lookup.licence_missing_item",
    "lookup.licence_no_resource_collab",
    "lookup.licence_company_name",
    "lookup.licence_number_mismatch",
    "lookup.licence_unrecorded",
)


def provider(*offer_kinds: str, **overrides: Any) -> SimpleNamespace:
    values: dict[str, Any] = {
        "id": 1,
        "legal_name": LEGAL,
        "legal_name_en": None,
        "uscc": None,
        "licences": [SimpleNamespace(id=2, number_raw="B1-20190001", number="B1-20190001")],
        "filings": [SimpleNamespace(id=3, kind="icp_filing", number_raw="京ICP备19012345号", number=None)],
        "offers": [SimpleNamespace(offer_kind=kind) for kind in offer_kinds],
        "datacenters": [],
    }
    values.update(overrides)
    return SimpleNamespace(**values)


def icp(**row: Any) -> dict:
    record = {"unitName": LEGAL, "natureName": "企业", "mainLicence": "京ICP备19012345号", "domain": "a.cn"}
    record.update(row)
    return {
        "query": LEGAL,
        "completed_at": "2026-11-30T08:00:00+00:00",
        "records": [record],
        "evidence": [REF],
    }


def licence(**row: Any) -> dict:
    record = {
        "companyName": LEGAL,
        "licenceNo": "B1-20190001",
        "status": "正常",
        "businessItems": ["B11", "B14"],
        "coverage": ["北京"],
        "expiryDate": "2029-05-20",
        "b11ExcludesResourceCollab": False,
    }
    record.update(row)
    return {
        "query": LEGAL,
        "completed_at": "2026-11-30T08:00:00+00:00",
        "records": [record],
        "evidence": [REF],
    }


def empty(fact: dict) -> dict:
    return {**fact, "records": []}


def found(rule_id: str, facts: dict, the_provider: SimpleNamespace | None = None) -> list:
    context = RuleContext(
        provider=the_provider or provider("bare_metal"), today=TODAY, knowledge=load_knowledge(), facts=facts
    )
    return run_rules(context, [rule_id])


def test_rules_are_registered_with_red_flags():
    rules = load_rules()
    assert set(ICP_RULES + LICENCE_RULES) <= set(rules)
    assert rules["lookup.licence_missing_item"].red_flag == 1 and rules["lookup.licence_status"].red_flag == 4


@pytest.mark.parametrize("rule_id", ICP_RULES + LICENCE_RULES + ("lookup.icp_unrecorded",))
def test_no_fact_raises_nothing(rule_id):
    assert found(rule_id, {}) == []


def test_icp_not_found():
    [finding] = found("lookup.icp_not_found", {"icp_lookup": empty(icp())})
    assert finding.severity == Severity.warning and LEGAL in finding.message_zh and finding.evidence == (REF,)
    assert found("lookup.icp_not_found", {"icp_lookup": icp()}) == []


def test_icp_nature():
    [finding] = found("lookup.icp_nature", {"icp_lookup": icp(natureName="个人")})
    assert "个人" in finding.message_zh
    assert found("lookup.icp_nature", {"icp_lookup": icp()}) == []


def test_icp_unit_name():
    [finding] = found("lookup.icp_unit_name", {"icp_lookup": icp(unitName="北京别家科技有限公司")})
    assert "北京别家科技有限公司" in finding.message_zh
    assert found("lookup.icp_unit_name", {"icp_lookup": icp(unitName="北京北辰算力科技有限责任公司")}) == []


def test_icp_number_mismatch_and_unrecorded():
    other = icp(mainLicence="京ICP备20990001号")
    [missing] = found("lookup.icp_number_mismatch", {"icp_lookup": other})
    assert "京ICP备19012345号" in missing.message_zh and "京ICP备20990001号" in missing.message_zh
    [extra] = found("lookup.icp_unrecorded", {"icp_lookup": other})
    assert extra.severity == Severity.info
    suffixed = icp(mainLicence="京ICP备19012345号", serviceLicence="京ICP备19012345号-1")
    assert found("lookup.icp_number_mismatch", {"icp_lookup": suffixed}) == []
    assert found("lookup.icp_unrecorded", {"icp_lookup": suffixed}) == []
    assert found("lookup.icp_number_mismatch", {"icp_lookup": empty(icp())}) == []  # not_found covers it


def test_licence_not_found_only_when_something_needs_a_licence():
    [finding] = found("lookup.licence_not_found", {"licence_lookup": empty(licence())})
    assert finding.severity == Severity.blocker
    assert found("lookup.licence_not_found", {"licence_lookup": empty(licence())}, provider()) == []
    assert found("lookup.licence_not_found", {"licence_lookup": licence()}) == []


@pytest.mark.parametrize(("status", "severity"), [("吊销", Severity.blocker), ("暂停", Severity.warning)])
def test_licence_status(status, severity):
    [finding] = found("lookup.licence_status", {"licence_lookup": licence(status=status)})
    assert finding.severity == severity and status in finding.message_zh
    assert found("lookup.licence_status", {"licence_lookup": licence()}) == []


def test_licence_expired_and_expiring():
    [expired] = found("lookup.licence_expired", {"licence_lookup": licence(expiryDate="2026-11-01")})
    assert expired.severity == Severity.blocker and "29" in expired.message_zh
    [soon] = found("lookup.licence_expiring", {"licence_lookup": licence(expiryDate="2027-01-15")})
    assert soon.severity == Severity.warning and "46" in soon.message_zh
    assert found("lookup.licence_expired", {"licence_lookup": licence()}) == []
    assert found("lookup.licence_expiring", {"licence_lookup": licence()}) == []
    revoked_and_old = licence(status="吊销", expiryDate="2020-01-01")  # status rule covers it
    assert found("lookup.licence_expired", {"licence_lookup": revoked_and_old}) == []


def test_licence_missing_b11():
    b2_only = licence(businessItems=["B21", "B25"])
    [finding] = found("lookup.licence_missing_item", {"licence_lookup": b2_only})
    assert (
        finding.severity == Severity.blocker and "B11" in finding.message_zh and "B21" in finding.message_zh
    )
    assert found("lookup.licence_missing_item", {"licence_lookup": licence()}) == []
    revoked_b11 = licence(status="吊销")
    assert len(found("lookup.licence_missing_item", {"licence_lookup": revoked_b11})) == 1


def test_licence_b11_without_resource_collab_for_cloud():
    excluded = licence(b11ExcludesResourceCollab=True)
    cloud = provider("cloud_instance")
    [finding] = found("lookup.licence_no_resource_collab", {"licence_lookup": excluded}, cloud)
    assert "B1-20190001" in finding.message_zh
    assert (
        found("lookup.licence_no_resource_collab", {"licence_lookup": excluded}, provider("bare_metal")) == []
    )
    assert found("lookup.licence_no_resource_collab", {"licence_lookup": licence()}, cloud) == []


def test_licence_company_name():
    [finding] = found(
        "lookup.licence_company_name", {"licence_lookup": licence(companyName="别家公司有限公司")}
    )
    assert "别家公司有限公司" in finding.message_zh
    assert found("lookup.licence_company_name", {"licence_lookup": licence()}) == []


def test_licence_number_mismatch_and_unrecorded():
    other = licence(licenceNo="京B2-20202418")
    [missing] = found("lookup.licence_number_mismatch", {"licence_lookup": other})
    assert "B1-20190001" in missing.message_zh and "京B2-20202418" in missing.message_zh
    [extra] = found("lookup.licence_unrecorded", {"licence_lookup": other})
    assert extra.severity == Severity.info and "京B2-20202418" in extra.message_zh
    assert found("lookup.licence_number_mismatch", {"licence_lookup": licence()}) == []
    assert found("lookup.licence_unrecorded", {"licence_lookup": licence()}) == []
