"""Headless Chromium: a case result page shows each provider's verdict beside its offers, in Chinese and
English (issue 24 item 3).

Three checked providers: one failing only on a trial run (46% of the claimed intranet: ranked on the
measurement, its claimed RDMA marked as contradicted), one whose ICP filing belongs to a private person
(需复核, ranked, the finding named with red flag 7) and one showing an ICP filing as its licence
(excluded on licence red flag 11).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session, select

import app.models  # noqa: F401 - registers every table
from app.accounts import users
from app.cases import cases
from app.credentials import checks
from app.models import Offer
from tests.browser.seeded_app import serve_seeded
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, page  # noqa: F401 - the Chromium page fixture
from tests.cases.test_measured_offers import TODAY, small_model_answers
from tests.cases.test_offer_verdicts import MEASURED, PRIVATE, RED_FLAG, _measured_provider, _provider

pytestmark = pytest.mark.browser


def _seed(session: Session) -> dict[str, Any]:
    """The three checked providers and a case over them; their offer ids by provider name."""
    ids = {
        MEASURED: _measured_provider(session),
        RED_FLAG: _provider(session, RED_FLAG, licence="京ICP备10046444号"),
        PRIVATE: _provider(
            session,
            PRIVATE,
            licence="京B1.B2-20249903",
            filings=[
                {"number_raw": "京ICP备2021099901号-1", "entity_name": "某个人", "entity_nature": "个人"}
            ],
        ),
    }
    for provider_id in ids.values():
        checks.run_check(session, provider_id=provider_id, today=TODAY)
    analyst = users.create_user(session, username="browser-verdicts", password=PASSWORD, role="analyst")
    case = cases.create_case(
        session,
        answers=small_model_answers(0.01).model_dump(mode="json", exclude_none=True),
        owner=cases.Actor(analyst.id, analyst.username),
        title="核查结论一栏",
    )
    offers = {
        name: session.exec(select(Offer.id).where(Offer.provider_id == pid)).one()
        for name, pid in ids.items()
    }
    return {"case": case.id, "offers": offers}


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The real app (CSRF on, English compiled) on SQLite with the three providers and the case."""
    with serve_seeded(tmp_path, _seed) as seeded:
        yield seeded


@pytest.fixture
def live_server(seeded: dict[str, Any]) -> str:
    """The seeded app's base URL (the page fixture opens its context there)."""
    return seeded["url"]


def test_the_case_page_shows_each_providers_verdict_in_chinese_and_english(page, seeded):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    case_url = f"/cases/{seeded['case']}"
    offers = seeded["offers"]
    page.goto(case_url)
    page.fill("#username", "browser-verdicts")
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")
    expect(page).to_have_url(f"{seeded['url']}{case_url}")

    ranked, excluded = page.locator("table.ranked-offers"), page.locator("table.excluded-offers")
    expect(ranked.locator(":scope > thead")).to_contain_text("核查结论")
    expect(excluded.locator(":scope > thead")).to_contain_text("核查结论")
    measured = page.locator(f"#offer-{offers[MEASURED]} td.verdict-cell")
    expect(measured.locator(".verdict")).to_have_text("不通过")
    expect(measured).to_contain_text("按实测数据排名")
    expect(measured.locator("li[data-rule='benchmarks.bandwidth_below_claim']")).to_contain_text("红旗 12")
    private = page.locator(f"#offer-{offers[PRIVATE]} td.verdict-cell")
    expect(private.locator(".verdict")).to_have_text("需复核")
    expect(private.locator(".verdict-label")).to_contain_text("未核实")  # what is unverified is named
    expect(private.locator("li[data-rule='filing.nature']")).to_contain_text("红旗 7")
    red_flag = page.locator(f"table.excluded-offers #offer-{offers[RED_FLAG]}")
    expect(red_flag.locator("td.verdict-cell .verdict")).to_have_text("不通过")
    expect(red_flag.locator("li.reason[data-code='finding.licence.is_icp_filing']")).to_contain_text(
        "许可证红旗 11"
    )
    row = page.locator(f"#offer-{offers[MEASURED]}")
    row.locator("summary").click()
    expect(row).to_contain_text("服务商声称，已被其他实测否定：签约前请实测 RDMA")

    page.goto("/lang/en")
    page.goto(case_url)
    expect(ranked.locator(":scope > thead")).to_contain_text("Verdict")
    expect(excluded.locator(":scope > thead")).to_contain_text("Verdict")
    expect(measured.locator(".verdict")).to_have_text("fails")
    expect(measured).to_contain_text("ranked on the measured figures")
    expect(measured.locator("li[data-rule='benchmarks.bandwidth_below_claim']")).to_contain_text(
        "red flag 12"
    )
    expect(private.locator(".verdict")).to_have_text("needs review")
    expect(private.locator(".verdict-label")).to_contain_text("not verified")
    expect(red_flag.locator("td.verdict-cell .verdict")).to_have_text("fails")
    expect(red_flag.locator("li.reason[data-code='finding.licence.is_icp_filing']")).to_contain_text(
        "licence red flag 11"
    )
    row.locator("summary").click()
    expect(row).to_contain_text("claimed, contradicted elsewhere: measure RDMA before signing")

    csp = [error for error in page.console_errors if "Content Security Policy" in error]
    assert not csp, csp
