"""Headless Chromium: upload a recorded iperf3 output far below a claim, see the saved case re-ranked."""

# A case is saved while offer A (claims 100 Gbps intranet, the cheaper one) ranks first. The analyst uploads
# the recorded loopback iperf3 result (46 Gbit/s) as A's intranet measurement on the provider's 试用测试 tab;
# the case page then ranks A below B, shows the measured figure with its source 实测 and a link to the run,
# and says the evidence changed since the case was saved.

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session

import app.models  # noqa: F401 - registers every table
from app.accounts import users
from app.cases import cases
from app.registry.providers import create_provider
from tests.advice.factories import training_answers
from tests.browser.seeded_app import serve_seeded
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, page  # noqa: F401 - the Chromium page fixture
from tests.cases.test_measured_offers import beijing_licence

pytestmark = pytest.mark.browser

RECORDING = Path(__file__).resolve().parents[1] / "data" / "bench" / "iperf3_single.json"  # 46 Gbit/s
PROVIDER = "示例实测重排算力有限公司"
OFFER = {
    "gpu_model": "H800",
    "gpus_per_node": 8,
    "gpu_memory_gb": 80,
    "public_mbps": 100,
    "bandwidth_type": "dedicated",
    "storage_type": "local_nvme",
    "nominal_iops": 500000,
    "price_month_cny": 60000,
    "datacenter_name": "示例实测机房",
}
# A: 100 Gbps claimed and cheaper, so it ranks first on claims; B: 40 Gbps claimed.
OFFERS = [
    {**OFFER, "name": "百G套餐", "intranet_gbps": 100, "price_month_cny": 55000},
    {**OFFER, "name": "四十G套餐", "intranet_gbps": 40},
]


def _seed(session: Session) -> dict[str, Any]:
    """One provider, its two offers and a case saved on claims."""
    analyst = users.create_user(session, username="browser-uploader", password=PASSWORD, role="analyst")
    provider = create_provider(
        session,
        data={
            "legal_name": PROVIDER,
            "licences": [beijing_licence("京B1.B2-20249902")],
            "datacenters": [{"name": "示例实测机房", "province": "北京", "city": "北京"}],
            "offers": OFFERS,
        },
    )
    # 2 x 8 H800 training a 1 B model: about 8 Gbps of intranet needed, well under both claims.
    answers = training_answers(model={"parameters_billion": 1}, budget={"monthly_cny": 1_000_000})
    case = cases.create_case(
        session,
        answers=answers.model_dump(mode="json", exclude_none=True),
        owner=cases.Actor(analyst.id, analyst.username),
        title="上传后重排",
    )
    offer_a, offer_b = sorted(provider.offers, key=lambda offer: -(offer.intranet_gbps or 0))
    return {"provider": provider.id, "case": case.id, "a": offer_a.id, "b": offer_b.id}


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The real app (CSRF on) on SQLite with one provider, its two offers and a case saved on claims."""
    with serve_seeded(tmp_path, _seed, english=False) as seeded:
        yield seeded


@pytest.fixture
def live_server(seeded: dict[str, Any]) -> str:
    """The seeded app's base URL (the page fixture opens its context there)."""
    return seeded["url"]


def test_upload_far_below_the_claim_reranks_the_saved_case(page, seeded):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    case_url = f"/cases/{seeded['case']}"
    offer_a, offer_b = seeded["a"], seeded["b"]

    page.goto(case_url)
    page.fill("#username", "browser-uploader")
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")
    expect(page).to_have_url(f"{seeded['url']}{case_url}")
    # saved on claims: A (100 Gbps claimed, cheaper) ranks first, and nothing has landed since
    rows = page.locator("table.ranked-offers tbody tr.offer-row")
    expect(rows).to_have_count(2)
    expect(rows.first).to_have_attribute("id", f"offer-{offer_a}")
    expect(page.locator("#evidence-changed")).to_have_count(0)
    row_a = page.locator(f"#offer-{offer_a}")
    row_a.locator("summary").click()
    expect(row_a.locator(".figures")).to_contain_text("内网带宽 100 Gbps")
    expect(row_a.locator(".figures")).to_contain_text("服务商声称")

    # the provider's 试用测试 tab: upload the recorded iperf3 output as A's intranet measurement
    page.goto(f"/providers/{seeded['provider']}/trials")
    form = page.locator("#upload-form")
    page.select_option("#upload-offer", str(offer_a))
    page.select_option("#upload-tool", "iperf3")
    page.select_option("#upload-path", "intranet")
    page.fill("#upload-note", "机房内 iperf3 -c 对端 -t 3 -J")
    page.set_input_files("#upload-file", str(RECORDING))
    form.locator("button[type=submit]").click()
    expect(page).to_have_url(re.compile(r"/bench-runs/\d+$"))
    run_id = int(page.url.rsplit("/", 1)[1])
    comparison = page.locator("#comparisons tr[data-check=bandwidth]")
    expect(comparison).to_contain_text("不通过")
    expect(comparison).to_contain_text("100000")
    # the run page charts the intranet claim (100,000 Mbit/s), not the public 100 Mbit/s
    expect(page.locator("#chart-gv-vs-nominal")).to_contain_text("100,000 Mbit/s")

    # the saved case: re-ranked on the measurement, with its source and run, and the freshness notice
    page.goto(case_url)
    notice = page.locator("#evidence-changed")
    expect(notice).to_contain_text("案例保存后证据有更新")
    expect(notice).to_contain_text("1 次基准测试")
    expect(rows.first).to_have_attribute("id", f"offer-{offer_b}")
    row_a = page.locator(f"#offer-{offer_a}")
    expect(row_a.locator("td").first).to_have_text("2")
    expect(row_a).to_have_class(re.compile(r"\boffer-row\b"))  # ranked lower, not excluded
    row_a.locator("summary").click()
    figures = row_a.locator(".figures")
    expect(figures).to_contain_text(re.compile(r"内网带宽 46(\.\d+)? Gbps\s*实测"))
    expect(figures.locator(f"a.run-link[href='/bench-runs/{run_id}']")).to_have_text(f"测试 #{run_id}")
    expect(row_a).to_contain_text(f"实测 46.1 Gbps，只有声称 100 Gbps 的 46%（测试 #{run_id}）")
    score_a = float(row_a.locator("td.score").inner_text())
    score_b = float(page.locator(f"#offer-{offer_b} td.score").inner_text())
    assert score_a < score_b

    # the link leads to the uploaded run
    figures.locator("a.run-link").click()
    expect(page).to_have_url(f"{seeded['url']}/bench-runs/{run_id}")

    csp = [error for error in page.console_errors if "Content Security Policy" in error]
    assert not csp, csp
