"""Every vetting rule on in-memory providers: one variant that triggers it, edge cases that do not."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pytest

from app.models import Certification, Datacenter, Filing, Licence, Offer, Provider
from app.vetting.findings import RuleContext, Severity, Verdict, load_rules, run_rules, verdict
from app.vetting.rules._common import load_knowledge

TODAY = date(2026, 6, 1)
# The registry rules of this package (other modules add footer, lookup and benchmark rules).
REGISTRY_MODULES = {
    f"app.vetting.rules.{name}"
    for name in (
        "licence_items",
        "licence_coverage",
        "licence_validity",
        "company_names",
        "filings",
        "numbers",
        "disclosure",
    )
}


def registry_rule_ids() -> list[str]:
    """Ids of the rules that look at registry data only."""
    return sorted(
        rule_id for rule_id, entry in load_rules().items() if entry.check.__module__ in REGISTRY_MODULES
    )


NAME = "示例星河算力科技有限公司"

BASE: dict[str, Any] = {
    "id": 1,
    "legal_name": NAME,
    "uscc": "91110108EXAMPL0120",
    "registered_province": "北京",
    "website": "https://xinghe.example",
    "discloses_network_topology": True,
    "discloses_storage_config": True,
    "licences": [
        {
            "number_raw": "京B1.B2-20249901",
            "company_name": NAME,
            "business_items": ["B11", "B14", "B25"],
            "b11_includes_resource_collab": True,
            "coverage": ["北京"],
            "issued_on": date(2024, 3, 15),
            "expires_on": date(2029, 3, 14),
            "status": "正常",
        }
    ],
    "filings": [
        {
            "kind": "icp_filing",
            "number_raw": "京ICP备2024099901号-1",
            "entity_name": NAME,
            "entity_nature": "企业",
        },
        {"kind": "psb_filing", "number_raw": "京公网安备11010802099901号", "entity_name": NAME},
    ],
    "datacenters": [{"name": "亦庄机房", "province": "北京", "city": "北京"}],
    "offers": [
        {
            "name": "H800 裸金属",
            "offer_kind": "bare_metal",
            "gpu_model": "H800",
            "gpus_per_node": 8,
            "public_mbps": 100,
        },
        {"name": "H100 云主机", "offer_kind": "cloud_instance", "gpu_model": "H100", "gpus_per_node": 8},
    ],
}


def build(data: dict[str, Any]) -> Provider:
    """A Provider aggregate in memory (ids set, no database)."""
    fields = {k: v for k, v in data.items() if k not in ("licences", "filings", "datacenters", "offers")}
    provider = Provider(**fields)
    provider.licences = [Licence(id=i + 1, provider_id=1, **r) for i, r in enumerate(data["licences"])]
    provider.filings = [Filing(id=i + 1, provider_id=1, **r) for i, r in enumerate(data["filings"])]
    provider.certifications = [Certification(id=1, provider_id=1, kind="iso9001")]
    provider.datacenters = [
        Datacenter(id=i + 1, provider_id=1, **r) for i, r in enumerate(data["datacenters"])
    ]
    provider.offers = [Offer(id=i + 1, provider_id=1, **r) for i, r in enumerate(data["offers"])]
    return provider


def variant(*changes: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    for change in changes:
        change(data)
    return data


def lic(**values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["licences"][0].update(values)


def field(**values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.update(values)


def icp(**values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["filings"][0].update(values)


def psb(**values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["filings"][1].update(values)


def dc(**values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda data: data["datacenters"][0].update(values)


def only_offers(*kinds: str, public: float | None = None) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        data["offers"] = [
            {
                "name": f"{kind} 套餐",
                "offer_kind": kind,
                "gpu_model": "A100",
                "gpus_per_node": 8,
                "public_mbps": public,
            }
            for kind in kinds
        ]

    return change


def check(data: dict[str, Any], rule_id: str | None = None, knowledge: dict[str, Any] | None = None):
    context = RuleContext(build(data), TODAY, knowledge or load_knowledge())
    return run_rules(context, [rule_id] if rule_id else registry_rule_ids())


def test_compliant_base_provider_raises_nothing():
    assert check(variant()) == []
    assert verdict(check(variant())) == Verdict.passed


# (rule id, variant that triggers it, expected severity, values the message must name)
TRIGGERS = [
    (
        "licence.missing_item",
        variant(lic(number_raw="京B2-20249901", business_items=["B21", "B25"])),
        "blocker",
        ["B11", "B21"],
    ),
    ("licence.missing_item", variant(field(licences=[])), "blocker", ["B11"]),
    ("licence.bandwidth_without_b14", variant(lic(business_items=["B11"])), "info", ["B14", "100"]),
    (
        "licence.b11_no_resource_collab",
        variant(lic(b11_includes_resource_collab=False)),
        "blocker",
        ["京B1.B2-20249901", "H100 云主机"],
    ),
    (
        "licence.b11_resource_collab_unknown",
        variant(lic(b11_includes_resource_collab=None)),
        "warning",
        ["京B1.B2-20249901"],
    ),
    ("licence.coverage", variant(dc(province="河北", city="廊坊")), "blocker", ["河北", "廊坊", "北京"]),
    (
        "licence.coverage",
        variant(lic(number_raw="B1-20249901", coverage=["北京", "深圳"]), dc(province="广东", city="广州")),
        "blocker",
        ["广州", "深圳"],
    ),
    (
        "licence.coverage_unknown",
        variant(lic(number_raw="B1-20249901", coverage=[]), dc(province="上海", city="上海")),
        "warning",
        ["B1-20249901", "上海"],
    ),
    ("licence.bad_status", variant(lic(status="吊销")), "blocker", ["吊销", "京B1.B2-20249901"]),
    ("licence.expired", variant(lic(expires_on=TODAY - timedelta(days=1))), "blocker", ["2026-05-31", "1"]),
    (
        "licence.expiring",
        variant(lic(expires_on=TODAY + timedelta(days=90))),
        "warning",
        ["2026-08-30", "90"],
    ),
    ("licence.expiring", variant(lic(expires_on=TODAY)), "warning", ["2026-06-01"]),
    (
        "licence.issued_in_future",
        variant(lic(issued_on=TODAY + timedelta(days=1))),
        "blocker",
        ["2026-06-02"],
    ),
    (
        "names.mismatch",
        variant(lic(company_name="示例星河算力科技（北京）有限公司")),
        "warning",
        ["示例星河算力科技（北京）有限公司", NAME],
    ),
    ("names.mismatch", variant(icp(entity_name="另一家公司")), "warning", ["另一家公司"]),
    (
        "filing.province_mismatch",
        variant(icp(number_raw="粤ICP备2024099901号-1")),
        "warning",
        ["广东", "北京"],
    ),
    ("filing.nature", variant(icp(entity_nature="个人")), "warning", ["个人"]),
    ("filing.missing", variant(field(filings=[])), "warning", ["https://xinghe.example"]),
    (
        "psb.province_mismatch",
        variant(psb(number_raw="京公网安备44030502099901号")),
        "warning",
        ["44", "广东", "北京"],
    ),
    ("identifier.malformed", variant(lic(number_raw="京A2.B1-20239901")), "blocker", ["京A2.B1-20239901"]),
    ("identifier.malformed", variant(field(uscc="91110108EXAMPL0121")), "warning", ["91110108EXAMPL0121"]),
    (
        "identifier.malformed",
        variant(icp(number_raw="港ICP备2023099914号")),
        "warning",
        ["港ICP备2023099914号"],
    ),
    (
        "identifier.malformed",
        variant(psb(kind="psb_filing", number_raw="京ICP备2024099902号")),
        "warning",
        ["京ICP备2024099902号"],
    ),
    (
        "licence.foreign_invested",
        variant(lic(number_raw="合字B1.B2-20239901", coverage=["北京"])),
        "warning",
        ["合字B1.B2-20239901"],
    ),
    (
        "licence.is_icp_filing",
        variant(lic(number_raw="京ICP备2024099916号")),
        "blocker",
        ["京ICP备2024099916号"],
    ),
    ("disclosure.refused", variant(field(discloses_network_topology=False)), "warning", []),
    ("disclosure.unknown", variant(field(discloses_storage_config=None)), "info", []),
]


@pytest.mark.parametrize(("rule_id", "data", "severity", "values"), TRIGGERS, ids=[t[0] for t in TRIGGERS])
def test_rule_triggers_with_concrete_values(rule_id, data, severity, values):
    found = check(data, rule_id)
    assert found, f"{rule_id} did not trigger"
    first = found[0]
    assert first.rule_id == rule_id
    assert first.severity == Severity(severity)
    for value in values:
        assert value in first.message_zh, (value, first.message_zh)
        assert value in first.message_en, (value, first.message_en)
    assert first.how_to_verify_zh and first.how_to_verify_en
    assert first.evidence and all("kind" in item for item in first.evidence)


# (rule id, variant close to a trigger that must NOT raise it)
NON_TRIGGERS = [
    ("licence.missing_item", variant(only_offers("colocation"))),
    (
        "licence.bandwidth_without_b14",
        variant(lic(business_items=["B11"]), only_offers("bare_metal", public=0)),
    ),
    (
        "licence.b11_no_resource_collab",
        variant(lic(b11_includes_resource_collab=False), only_offers("bare_metal")),
    ),
    (
        "licence.b11_resource_collab_unknown",
        variant(
            lambda data: data["licences"].append(
                {**data["licences"][0], "number_raw": "京B1-20249902", "b11_includes_resource_collab": None}
            )
        ),
    ),
    (
        "licence.coverage",
        variant(lic(number_raw="B1-20249901", coverage=["北京", "深圳市"]), dc(province="广东", city="深圳")),
    ),
    (
        "licence.coverage",
        variant(lic(number_raw="B1-20249901", coverage=["全国"]), dc(province="新疆", city="乌鲁木齐")),
    ),
    (
        "licence.coverage",
        variant(
            lic(number_raw="蜀B1-20249901", coverage=["四川"]),
            dc(province="四川", city="成都"),
            field(registered_province="四川"),
        ),
    ),
    (
        "licence.coverage",
        variant(lic(number_raw="B1-20249901", coverage=[]), dc(province="上海")),
    ),  # unknown, not a blocker
    (
        "licence.coverage_unknown",
        variant(lic(number_raw="B1-20249901", coverage=["上海"]), dc(province="上海")),
    ),
    ("licence.bad_status", variant(lic(status="正常"))),
    ("licence.expired", variant(lic(expires_on=TODAY))),
    (
        "licence.expired",
        variant(lic(status="吊销", expires_on=TODAY - timedelta(days=400))),
    ),  # bad_status says it
    ("licence.expiring", variant(lic(expires_on=TODAY + timedelta(days=91)))),
    ("licence.issued_in_future", variant(lic(issued_on=TODAY))),
    ("names.mismatch", variant(lic(company_name="示例星河算力科技 有限责任公司"))),
    (
        "names.mismatch",
        variant(
            field(legal_name="示例（北京）算力有限公司"),
            lic(company_name="示例(北京)算力有限公司"),
            icp(entity_name="示例 (北京) 算力有限公司"),
            psb(entity_name=None),
        ),
    ),
    (
        "filing.province_mismatch",
        variant(icp(number_raw="蜀ICP备2024099901号-1"), field(registered_province="四川")),
    ),
    ("filing.province_mismatch", variant(field(registered_province=None))),
    ("filing.nature", variant(icp(entity_nature=None))),
    ("filing.missing", variant(field(filings=[], website=None, offers=[]))),
    ("filing.blacklisted", variant()),
    ("psb.province_mismatch", variant(psb(number_raw="蜀公网安备51010702099903号"))),
    (
        "identifier.malformed",
        variant(lic(number_raw="浙B1-20279912")),
    ),  # future year: issued_in_future says it
    ("identifier.malformed", variant(lic(number_raw="京ICP证030173号"))),
    (
        "identifier.malformed",
        variant(psb(number_raw="粤公网安备11010802099913号")),
    ),  # psb.province_mismatch says it
    ("licence.foreign_invested", variant()),
    ("licence.is_icp_filing", variant(lic(number_raw="京ICP证030173号"))),
    ("disclosure.refused", variant(field(discloses_network_topology=None))),
    ("disclosure.unknown", variant()),
]


@pytest.mark.parametrize(("rule_id", "data"), NON_TRIGGERS, ids=[t[0] for t in NON_TRIGGERS])
def test_rule_does_not_trigger_on_edge_case(rule_id, data):
    assert check(data, rule_id) == []


def test_every_rule_has_a_trigger_and_a_non_trigger_case():
    rules = set(registry_rule_ids())
    assert len(rules) >= 20
    assert rules <= {t[0] for t in TRIGGERS} | {"filing.blacklisted"}
    assert rules <= {t[0] for t in NON_TRIGGERS} | {"licence.missing_item"}


def test_thresholds_come_from_the_knowledge_file():
    knowledge = copy.deepcopy(load_knowledge())
    data = variant(lic(expires_on=TODAY + timedelta(days=100)))
    assert check(data, "licence.expiring") == []
    knowledge["thresholds"]["licence_expiring_days"] = 120
    assert [f.rule_id for f in check(data, "licence.expiring", knowledge)] == ["licence.expiring"]


def test_required_items_per_offer_kind_come_from_the_knowledge_file():
    knowledge = copy.deepcopy(load_knowledge())
    data = variant(lic(business_items=["B11", "B25"]))
    knowledge["offer_kinds"]["bare_metal"]["required_items"] = ["B11", "B13"]
    found = check(data, "licence.missing_item", knowledge)
    assert [f.subject for f in found] == ["item:B13"]


def test_blacklist_comes_from_the_knowledge_file():
    knowledge = copy.deepcopy(load_knowledge())
    knowledge["filing"]["blacklist"] = [{"match": "京ICP备2024099901号", "reason": "冒用他人备案"}]
    found = check(variant(), "filing.blacklisted", knowledge)
    assert len(found) == 1 and "冒用他人备案" in found[0].message_zh
    assert found[0].severity == Severity.blocker


def test_status_severity_per_status_from_the_knowledge_file():
    knowledge = copy.deepcopy(load_knowledge())
    knowledge["licence_status"]["severity"]["注销"] = "warning"
    assert check(variant(lic(status="注销")), "licence.bad_status", knowledge)[0].severity == Severity.warning
    assert check(variant(lic(status="注销")), "licence.bad_status")[0].severity == Severity.blocker


def test_disclosure_refused_names_each_refusal():
    data = variant(field(discloses_network_topology=False, discloses_storage_config=False))
    found = check(data, "disclosure.refused")
    assert sorted(f.subject for f in found) == [
        "provider:discloses_network_topology",
        "provider:discloses_storage_config",
    ]


def test_verdicts_from_rule_findings():
    assert verdict(check(variant(field(discloses_storage_config=None)))) == Verdict.passed
    assert verdict(check(variant(icp(entity_nature="个人")))) == Verdict.needs_review
    assert verdict(check(variant(lic(status="吊销")))) == Verdict.failed
