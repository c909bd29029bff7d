"""Headless Chromium: an analyst proposes a decision on a case with three quotes; the proposer is told in
words (Chinese, then English) why they cannot approve it; a second user with the approver role approves it;
an approver who proposes a decision of their own finds its approve button refused with the same words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from sqlmodel import Session, select

import app.models  # noqa: F401 - registers every table
from app.accounts import users
from app.cases import cases, quotes
from app.core.audit import set_actor
from app.models import Offer
from app.registry import providers as provider_service
from tests.api.conftest import provider_payload
from tests.browser.seeded_app import serve_seeded
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, page  # noqa: F401 - the Chromium page fixture
from tests.cases.conftest import example
from tests.cases.test_quotes import quote_values
from tests.credentials.credit.conftest import png_bytes

pytestmark = pytest.mark.browser

NAMES = ("浏览器甲算力有限公司", "浏览器乙算力有限公司", "浏览器丙算力有限公司")
FOUR_EYES_ZH = "四眼原则：你是本决定的提议人"
FOUR_EYES_EN = "Four eyes: you proposed this decision"


def seed(session: Session) -> dict[str, Any]:
    """Three providers with one offer each, a case quoted by all three, an analyst and two approvers."""
    set_actor(session, user_id=None, name="arranger")
    offers = []
    for name in NAMES:
        provider = provider_service.create_provider(
            session, data=provider_payload(legal_name=name, uscc=None)
        )
        offers.append(session.exec(select(Offer).where(Offer.provider_id == provider.id)).first())
    analyst = users.create_user(session, username="browser-analyst", password=PASSWORD, role="analyst")
    for name in ("browser-approver", "browser-approver-2"):
        users.create_user(session, username=name, password=PASSWORD, role="approver")
    case = cases.create_case(
        session, answers=example("offline_batch"), owner=cases.Actor(analyst.id, analyst.username)
    )
    entered_by = SimpleNamespace(id=analyst.id, username=analyst.username)
    for position, offer in enumerate(offers):  # entered by hand with their scans, as the quote page does
        values = quote_values(offer.id, price_gpu_hour_cny=str(9.5 + position))
        quotes.create_quote(session, case_id=case.id, values=values, scan=png_bytes(), user=entered_by)
    return {"case": case.id, "offers": [offer.id for offer in offers]}


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[dict[str, Any]]:
    with serve_seeded(tmp_path, seed, english=True) as seeded:
        yield seeded


@pytest.fixture
def live_server(seeded: dict[str, Any]) -> str:
    return seeded["url"]


def sign_in(tab, username: str) -> None:
    tab.context.clear_cookies()
    tab.goto("/login")
    tab.fill("#username", username)
    tab.fill("#password", PASSWORD)
    tab.click("form button[type=submit]")


def propose(tab, case_id: int, offer_id: int, scope: str) -> str:
    """Fill the proposal form from the case page's link; returns the decision page's path."""
    from playwright.sync_api import expect

    tab.goto(f"/cases/{case_id}")
    tab.click("#propose-decision")
    expect(tab.locator("h1")).to_have_text("提出采购决定")
    expect(tab.locator("#single-source-help")).to_contain_text("已有三家或以上有效报价")
    tab.check(f"#f-offer-{offer_id}")
    tab.fill("#f-scope", scope)
    tab.fill("#f-term_months", "12")
    tab.fill("#f-justification", "每有效卡时价格最低，内网实测达标")
    tab.fill("#f-condition_text_0", "交付后 30 天内复测内网带宽")
    tab.fill("#f-condition_due_on_0", "2027-03-01")
    tab.click("#propose")
    expect(tab).to_have_url(re.compile(r"/decisions/\d+$"))
    return tab.url.split(tab.url.split("/decisions/")[0], 1)[1]


def test_propose_then_a_second_person_approves(page, seeded):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    sign_in(page, "browser-analyst")
    # a proposal with an error first: the error stands at its input, what was typed is kept
    page.goto(f"/cases/{seeded['case']}/decisions/new")
    page.fill("#f-scope", "离线批处理")
    page.click("#propose")
    expect(page.locator("#f-offer_ids-error")).to_be_visible()
    expect(page.locator("#f-scope")).to_have_value("离线批处理")

    decision = propose(page, seeded["case"], seeded["offers"][0], "离线批处理：图片标注数据")
    expect(page.locator("#decision-state")).to_have_text("待审批")
    expect(page.locator("#chosen-offers")).to_contain_text(NAMES[0])
    why = page.locator("#why-not")
    expect(why).to_contain_text(FOUR_EYES_ZH)
    expect(page.locator("#approve")).to_have_count(0)
    expect(page.locator(".decision-conditions")).to_contain_text("2027-03-01")
    page.goto("/lang/en")
    page.goto(decision)
    expect(page.locator("#why-not")).to_contain_text(FOUR_EYES_EN)
    expect(page.locator("#why-not")).to_contain_text("You cannot approve this decision now")
    expect(page.locator("#decision-state")).to_have_text(re.compile("Proposed|Awaiting", re.I))
    assert not [error for error in page.console_errors if "status of 422" not in error]  # the refused form

    # the second person, an approver, approves with a comment
    sign_in(page, "browser-approver")
    page.goto("/lang/zh")
    page.goto(decision)
    expect(page.locator("#why-not")).to_have_count(0)
    page.fill("#f-comment", "同意，按条件执行")
    page.click("#approve")
    expect(page.locator("#decision-state")).to_have_text("已批准")
    expect(page.locator("#approver")).to_have_text("browser-approver")
    expect(page.locator("#snapshot-hash")).to_have_text(re.compile(r"^[0-9a-f]{64}$"))
    expect(page.locator("#decide-form")).to_have_count(0)
    page.goto(f"/cases/{seeded['case']}")
    expect(page.locator(".case-decisions")).to_contain_text("已批准")

    # an approver who proposes a decision cannot approve it: the same words, the button refused
    decision = propose(page, seeded["case"], seeded["offers"][1], "离线批处理：视频数据")
    expect(page.locator("#why-not")).to_contain_text(FOUR_EYES_ZH)
    expect(page.locator("#approve")).to_be_disabled()
    page.goto("/lang/en")
    page.goto(decision)
    expect(page.locator("#why-not")).to_contain_text(FOUR_EYES_EN)
    expect(page.locator("#approve")).to_be_disabled()
    assert not [error for error in page.console_errors if "status of 422" not in error]  # the refused form
