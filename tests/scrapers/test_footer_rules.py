"""Rules comparing the website footer fact with the registry: each triggered once and not once."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace
from typing import Any

import pytest

from app.vetting.findings import RuleContext, Severity, load_rules, run_rules
from app.vetting.rules._common import load_knowledge

REF = {
    "kind": "evidence",
    "evidence_id": 7,
    "url": "https://a.example.cn/",
    "sha256": "ab" * 32,
    "fetched_at": "x",
}


def provider(**overrides: Any) -> SimpleNamespace:
    values: dict[str, Any] = {
        "id": 1,
        "legal_name": "四川西部算力科技有限公司",
        "legal_name_en": "Sichuan West Compute Technology Co., Ltd.",
        "uscc": None,
        "licences": [],
        "filings": [SimpleNamespace(id=3, kind="icp_filing", number_raw="川ICP备2020012345号", number=None)],
        "offers": [],
        "datacenters": [],
    }
    values.update(overrides)
    return SimpleNamespace(**values)


def footer_fact(*items: tuple[str, str], ok: bool = True, company: str | None = None, **extra: Any) -> dict:
    return {
        "ok": ok,
        "url": "https://a.example.cn/",
        "evidence": [REF],
        "identifiers": [
            {"kind": kind, "normalized": number, "source": "text", "valid": True, "evidence": REF, **extra}
            for kind, number in items
        ],
        "company_name": company,
        "company_name_evidence": REF if company else None,
        **({"error": "timed out"} if not ok else {}),
    }


def findings(rule_id: str, the_provider: SimpleNamespace, facts: dict) -> list:
    context = RuleContext(
        provider=the_provider, today=date(2026, 11, 30), knowledge=load_knowledge(), facts=facts
    )
    return run_rules(context, [rule_id])


def test_rules_are_registered():
    assert {
        "footer.fetch_failed",
        "footer.filing_not_shown",
        "footer.number_mismatch",
        "footer.number_unrecorded",
        "footer.invalid_number",
        "footer.company_mismatch",
    } <= set(load_rules())


@pytest.mark.parametrize(
    "rule_id",
    [
        "footer.fetch_failed",
        "footer.filing_not_shown",
        "footer.number_mismatch",
        "footer.number_unrecorded",
        "footer.invalid_number",
        "footer.company_mismatch",
    ],
)
def test_no_fact_raises_nothing(rule_id):
    assert findings(rule_id, provider(), {}) == []


def test_fetch_failed_is_a_note():
    [found] = findings("footer.fetch_failed", provider(), {"footer": footer_fact(ok=False)})
    assert found.severity == Severity.info and "timed out" in found.message_zh
    assert found.evidence == (REF,) and "https://a.example.cn/" in found.how_to_verify_zh
    assert findings("footer.fetch_failed", provider(), {"footer": footer_fact()}) == []


def test_an_unreachable_site_is_told_in_each_language_alone():
    fact = {
        **footer_fact(ok=False),
        "error_code": "unreachable_dns",
        "error": "本机无法连接 x (cannot reach x)",
    }
    [found] = findings("footer.fetch_failed", provider(), {"footer": fact})
    assert "域名无法解析" in found.message_zh and "cannot" not in found.message_zh
    assert "the host name does not resolve" in found.message_en and "本机" not in found.message_en


def test_filing_not_shown():
    fact = footer_fact(("psb_filing", "川公网安备51019002004321号"))
    [found] = findings("footer.filing_not_shown", provider(), {"footer": fact})
    assert found.severity == Severity.warning and "川ICP备2020012345号" in found.message_zh
    shown = footer_fact(("icp_filing", "川ICP备2020012345号-3"))
    assert findings("footer.filing_not_shown", provider(), {"footer": shown}) == []
    assert findings("footer.filing_not_shown", provider(filings=[]), {"footer": fact}) == []


def test_number_mismatch_ignores_site_suffix_and_province_alias():
    same = footer_fact(("icp_filing", "蜀ICP备2020012345号-3"))
    assert findings("footer.number_mismatch", provider(), {"footer": same}) == []
    other = footer_fact(("icp_filing", "川ICP备2021099999号"))
    [found] = findings("footer.number_mismatch", provider(), {"footer": other})
    assert "川ICP备2021099999号" in found.message_zh and "川ICP备2020012345号" in found.message_zh
    assert found.evidence[0] == REF and found.evidence[1]["kind"] == "registry"


def test_number_unrecorded_only_for_kinds_the_registry_lacks():
    fact = footer_fact(("psb_filing", "川公网安备51019002004321号"), ("icp_filing", "川ICP备2020012345号"))
    [found] = findings("footer.number_unrecorded", provider(), {"footer": fact})
    assert found.severity == Severity.info and "川公网安备51019002004321号" in found.message_zh
    recorded = provider(
        filings=[
            SimpleNamespace(id=3, kind="icp_filing", number_raw="川ICP备2020012345号", number=None),
            SimpleNamespace(id=4, kind="psb_filing", number_raw="川公网安备51019002004321号", number=None),
        ]
    )
    assert findings("footer.number_unrecorded", recorded, {"footer": fact}) == []


def test_invalid_number_on_the_site():
    bad = footer_fact(
        ("icp_filing", "京ICP备1234567号"), valid=False, problems=["7 位"], text="京ICP备1234567号"
    )
    [found] = findings("footer.invalid_number", provider(), {"footer": bad})
    assert found.severity == Severity.warning and "7 位" in found.message_zh
    assert (
        findings(
            "footer.invalid_number",
            provider(),
            {"footer": footer_fact(("icp_filing", "川ICP备2020012345号"))},
        )
        == []
    )


def test_company_mismatch_with_folding_and_english_name():
    other = footer_fact(company="成都别家网络有限公司")
    [found] = findings("footer.company_mismatch", provider(), {"footer": other})
    assert "成都别家网络有限公司" in found.message_zh and found.evidence[0] == REF
    for same in (
        "四川西部算力科技有限责任公司",
        " 四川西部算力科技有限公司 ",
        "Sichuan West Compute Technology Co., Ltd",
    ):
        assert findings("footer.company_mismatch", provider(), {"footer": footer_fact(company=same)}) == []
    bracketed = provider(legal_name="燕云智算（北京）科技有限公司")
    assert (
        findings(
            "footer.company_mismatch",
            bracketed,
            {"footer": footer_fact(company="燕云智算(北京)科技有限公司")},
        )
        == []
    )
