"""One comparison of observed numbers with the registry's, shared by the lookup and footer rules."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

import pytest

from app.vetting.findings import RuleContext, run_rules
from app.vetting.rules._common import load_knowledge
from app.vetting.rules._sources import recorded_numbers

RECORDED_FILING = "川ICP备2020012345号"
RECORDED_LICENCE = "川B1-20190001"
REF = {"kind": "evidence", "evidence_id": 9, "url": "https://x/", "sha256": "cd" * 32, "fetched_at": "t"}


def provider() -> SimpleNamespace:
    return SimpleNamespace(
        id=1,
        legal_name="四川西部算力科技有限公司",
        legal_name_en=None,
        uscc=None,
        licences=[SimpleNamespace(id=2, number_raw=RECORDED_LICENCE, number=RECORDED_LICENCE)],
        filings=[SimpleNamespace(id=3, kind="icp_filing", number_raw=RECORDED_FILING, number=None)],
        offers=[],
        datacenters=[],
    )


def run(rule_id: str, facts: dict) -> list:
    context = RuleContext(
        provider=provider(), today=date(2026, 11, 30), knowledge=load_knowledge(), facts=facts
    )
    return run_rules(context, [rule_id])


def lookup(number_field: str, *numbers: str) -> dict:
    records = [{number_field: number, "status": "正常"} for number in numbers]
    return {"query": "q", "completed_at": "2026-11-30T08:00:00+00:00", "records": records, "evidence": [REF]}


def footer(kind: str, number: str) -> dict:
    item = {"kind": kind, "normalized": number, "valid": True, "evidence": REF}
    return {"ok": True, "url": "https://x/", "evidence": [REF], "identifiers": [item], "company_name": None}


def test_recorded_numbers_match_by_key_not_by_spelling():
    filings = recorded_numbers(provider(), "icp_filing")
    assert filings.holds("蜀ICP备2020012345号-3") and not filings.holds("川ICP备2021099999号")
    assert not filings.holds(None) and not filings.holds("not a number")
    assert filings.missing_from(["蜀ICP备2020012345号-2", None]) == []
    assert [number for number, _, _ in filings.missing_from(["川ICP备2021099999号"])] == [RECORDED_FILING]
    observed = [("川ICP备2021099999号", "a"), ("川ICP备2021099999号-2", "b"), (RECORDED_FILING, "c")]
    assert list(filings.unrecorded(observed)) == [("川ICP备2021099999号", "a")]
    assert filings.evidence == [
        {"kind": "registry", "entity": "filing", "id": 3, "field": "number", "value": RECORDED_FILING}
    ]


@pytest.mark.parametrize(
    ("kind", "field", "prefix", "same", "other"),
    [
        ("icp_filing", "mainLicence", "icp", "蜀ICP备2020012345号-1", "川ICP备2021099999号"),
        ("licence", "licenceNo", "licence", " 川B1-20190001 ", "川B1-20209999"),
    ],
)
def test_lookup_and_footer_rules_agree_on_what_matches(kind, field, prefix, same, other):
    for number, expected in ((same, 0), (other, 1)):
        fact = {f"{prefix}_lookup": lookup(field, number)}
        assert len(run(f"lookup.{prefix}_number_mismatch", fact)) == expected
        assert len(run(f"lookup.{prefix}_unrecorded", fact)) == expected
        assert len(run("footer.number_mismatch", {"footer": footer(kind, number)})) == expected


def test_an_official_licence_listed_twice_is_reported_once_like_a_filing():
    twice = lookup("licenceNo", "川B1-20209999", "川B1-20209999")
    assert len(run("lookup.licence_unrecorded", {"licence_lookup": twice})) == 1
    filings_twice = lookup("mainLicence", "川ICP备2021099999号", "川ICP备2021099999号")
    assert len(run("lookup.icp_unrecorded", {"icp_lookup": filings_twice})) == 1
