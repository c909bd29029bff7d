"""Findings cite evidence as a link with a 12-hex short hash (the full hash only on the evidence page)."""

from __future__ import annotations

import re
from datetime import date

import pytest
from bs4 import BeautifulSoup

from app.core import jobs
from app.credentials import checks
from app.models.checks import CheckRun, StoredFinding
from tests.core.jobs.fixtures import immediate_jobs  # noqa: F401 - fixture

pytestmark = pytest.mark.usefixtures("immediate_jobs")

BENCH_RUN_URL = "/bench-runs/3"
HEX64 = re.compile(r"\b[0-9a-f]{64}\b")


def _tab(client, provider_id: int, language: str) -> tuple[str, BeautifulSoup]:
    client.get(f"/lang/{language}?next=/providers")
    html = client.get(f"/providers/{provider_id}/credentials").get_data(as_text=True)
    return html, BeautifulSoup(html, "html.parser")


def test_fetched_evidence_is_a_link_with_a_short_hash(app, session, login, make_provider):
    provider = make_provider(short_name="证据示例", website="http://127.0.0.1:9/")
    with app.app_context():
        job = jobs.enqueue(
            session,
            kind="scrape.footer",
            params={"provider_id": provider.id, "url": "http://127.0.0.1:9/"},
            provider_id=provider.id,
        )
        checks.run_check(session, provider_id=provider.id)
    evidence_id = job.result["evidence_ids"][0]
    client = login("viewer")
    full = client.get(f"/evidence/{evidence_id}").get_data(as_text=True)
    sha = BeautifulSoup(full, "html.parser").find(id="sha256").get_text(strip=True)
    assert HEX64.fullmatch(sha), "the evidence page shows the full hash"
    for language in ("zh", "en"):
        html, soup = _tab(client, provider.id, language)
        links = soup.select("ul.evidence a.evidence-ref")
        assert any(link["href"] == f"/evidence/{evidence_id}" for link in links), links
        hashes = [node.get_text(strip=True) for node in soup.select("ul.evidence .evidence-hash")]
        assert sha[:12] in hashes and all(re.fullmatch(r"[0-9a-f]{12}", text) for text in hashes)
        assert not HEX64.search(html), "a full 64-character hash reached the credentials tab"
        evidence = " ".join(ul.get_text(" ", strip=True) for ul in soup.select("ul.evidence"))
        assert "sha256" not in evidence and "evidence_id" not in evidence and "kind:" not in evidence
        assert "wrap-anywhere" in (soup.select_one("ul.evidence") or {}).get("class", [])


def test_benchmark_and_registry_evidence_read_as_labelled_fields(app, session, login, make_provider):
    provider = make_provider(short_name="实测示例")
    run = CheckRun(
        provider_id=provider.id,
        verdict="fail",
        blockers=1,
        checked_on=date(2026, 3, 2),
        provider_version=provider.version,
        rules_version="test",
    )
    session.add(run)
    session.flush()
    benchmark = {
        "kind": "benchmark",
        "run_id": 3,
        "origin": "uploaded",
        "offer_id": 11,
        "check": "bandwidth",
        "verdict": "fail",
        "measured": 320.5,
        "claimed": 500.0,
        "ratio": 0.641,
        "unit": "Mbps",
    }
    registry = {
        "kind": "registry",
        "entity": "offer",
        "id": 11,
        "field": "storage_type",
        "value": "cloud_disk",
    }
    session.add(
        StoredFinding(
            check_run_id=run.id,
            provider_id=provider.id,
            rule_id="benchmarks.bandwidth_below_claim",
            severity="blocker",
            message_zh="带宽不足",
            message_en="Bandwidth short",
            evidence=[benchmark, registry],
        )
    )
    session.commit()
    client = login("viewer")
    for language, expected in (
        (
            "zh",
            (
                "测试 #3",
                "带宽",
                "320.5 Mbps",
                "500 Mbps",
                "64%",
                "不通过",
                "上传的测试输出",
                "套餐 #11",
                "云盘",
            ),
        ),
        ("en", ("320.5 Mbps", "500 Mbps", "64%")),
    ):
        _html, soup = _tab(client, provider.id, language)
        evidence = " ".join(ul.get_text(" ", strip=True) for ul in soup.select("ul.evidence"))
        for part in expected:
            assert part in evidence, (language, part, evidence)
        for raw in ("run_id", "offer_id", "cloud_disk", "uploaded", "kind", "ratio", "0.641"):
            assert raw not in evidence, (language, raw, evidence)
        assert soup.select_one("ul.evidence a.evidence-ref")["href"] == BENCH_RUN_URL
