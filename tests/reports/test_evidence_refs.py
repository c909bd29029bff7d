"""Evidence in the provider PDF: every [En] points at appendix entry n; other evidence is labelled text."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from app.reports.labels import Labels
from app.reports.render import render_html
from tests.reports.conftest import make_inputs, make_meta, needs_poppler, pages_text, squash

pytestmark = needs_poppler

HASH_A = "aa11" * 16
HASH_B = "bb22" * 16


def _fetch(evidence_id: int, url: str, sha: str, fetched_at: str) -> dict:
    return {
        "kind": "evidence",
        "evidence_id": evidence_id,
        "url": url,
        "sha256": sha,
        "fetched_at": fetched_at,
    }


STORED = [
    {**_fetch(5, "https://compute.example/", HASH_A, "2026-03-01T02:00:00"), "title_zh": "官网页脚"},
    {**_fetch(6, "https://compute.example/about", HASH_B, "2026-03-01T02:05:00"), "title_zh": "官网页面"},
]
FINDINGS = [
    {
        "rule_id": "footer.company_mismatch",
        "severity": "warning",
        "message_zh": "关于页面的公司名与登记不一致。",
        "message_en": "The about page names another company.",
        "how_to_verify_zh": "打开关于页面核对。",
        "how_to_verify_en": "Open the about page.",
        "subject": "provider",
        # the same fetch as stored evidence 6, its time spelled with an offset
        "evidence": [_fetch(6, "https://compute.example/about", HASH_B, "2026-03-01T02:05:00+00:00")],
    },
    {
        "rule_id": "benchmarks.bandwidth_below_claim",
        "severity": "blocker",
        "message_zh": "公网带宽实测低于标称。",
        "message_en": "Public bandwidth measured below the claim.",
        "how_to_verify_zh": "晚高峰复测。",
        "how_to_verify_en": "Test again in the evening.",
        "subject": "offer:11",
        "evidence": [
            {
                "kind": "benchmark",
                "run_id": 3,
                "origin": "executed",
                "offer_id": 11,
                "check": "bandwidth",
                "verdict": "fail",
                "measured": 320.5,
                "claimed": 500.0,
                "ratio": 0.641,
                "unit": "Mbps",
                "path": "public",
            },
            {
                "kind": "registry",
                "entity": "offer",
                "id": 11,
                "field": "bandwidth_type",
                "value": "dedicated",
            },
        ],
    },
]
CHECK_RUN = {
    "id": 9,
    "verdict": "fail",
    "checked_on": "2026-03-02",
    "created_at": "2026-03-02T06:00:00+00:00",
    "created_by": "analyst-li",
    "provider_version": 3,
    "rules_version": "test",
    "counts": {"blocker": 1, "warning": 1, "info": 0},
    "fact_errors": {},
    "findings": FINDINGS,
}


def _inputs() -> dict:
    return make_inputs(
        sources={
            "checks": {"status": "ok", "data": CHECK_RUN},
            "evidence": {"status": "ok", "data": STORED},
        }
    )


@pytest.fixture(scope="module", params=["zh", "en"])
def rendered(request, renderer):
    language = request.param
    html = render_html("provider", _inputs(), make_meta(language=language), language, screen=False)
    return language, html, pages_text(renderer.render(html).data)


def test_each_reference_points_at_its_appendix_entry(rendered):
    language, html, pages = rendered
    soup = BeautifulSoup(html, "html.parser")
    rows = soup.select("#evidence-table tbody tr")
    # one entry per stored fetch, numbered in order, however a finding spelled its time
    assert [row.select("td")[0].get_text(strip=True) for row in rows] == ["[E1]", "[E2]"]
    assert [row["id"] for row in rows] == ["ev-E1", "ev-E2"]
    urls = {row["id"]: row.select("td")[1].get_text(" ", strip=True) for row in rows}
    links = soup.select("#findings-table a[href^='#ev-']")
    assert [link.get_text() for link in links] == ["[E2]"]
    assert urls[links[0]["href"][1:]].startswith("https://compute.example/about")
    # in the PDF text: the finding cites [E2] with a 12-hex short hash; appendix entry 2 is that page
    text = "\n".join(pages)
    labels = Labels(language)
    findings = squash(text[text.rindex(labels.t("sec_findings")) : text.rindex(labels.t("sec_claims"))])
    assert "[E2]" in findings and HASH_B[:12] in findings and HASH_B not in findings
    appendix = squash(text[text.rindex("A.1") :])
    first, second = appendix.index("[E1]"), appendix.index("[E2]")
    assert first < second and "https://compute.example/about" in appendix[second:]
    assert "https://compute.example/about" not in appendix[first:second]
    assert HASH_B in appendix and HASH_A in appendix


def test_benchmark_and_registry_evidence_are_labelled(rendered):
    language, html, pages = rendered
    cells = BeautifulSoup(html, "html.parser").select("#findings-table td.evidence-cell")
    text = " ".join(cell.get_text(" ", strip=True) for cell in cells)
    for raw in ("kind:", "run_id", "offer_id", "bandwidth_type", "dedicated", "executed", "'check'"):
        assert raw not in text, raw
    if language == "zh":
        expected = ("测试 #3", "检查项：带宽", "实测：320.5 Mbps", "标称：500 Mbps", "64%", "判定：不通过")
        expected += ("套餐 #11", "独享")
    else:
        expected = ("run #3", "check: bandwidth", "measured: 320.5 Mbps", "claimed: 500 Mbps", "64%")
        expected += ("verdict: fail", "offer #11")
    for part in expected:
        assert part in text, part
    pdf = squash("\n".join(pages))
    assert squash(expected[0]) in pdf and "320.5Mbps" in pdf and "kind:" not in pdf


def test_times_in_the_pdf_are_local_and_labelled(rendered):
    _language, _html, pages = rendered
    appendix = "\n".join(pages)[-3000:]
    # stored 02:05 UTC is 10:05 in Asia/Shanghai, labelled with its offset
    assert re.search(r"2026-03-01\s+10:05\s+UTC\+8", "\n".join(pages))
    assert "02:05" not in appendix
