"""Headless Chromium: an analyst requests quotes from a case, then each provider sends its quote through its
link, one in Chinese and one in English (the confirmation asked first), and the link then only thanks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from app.cases import cases
from app.core.audit import set_actor
from app.models.quotes import Quote
from app.registry import providers as provider_service
from tests.api.conftest import provider_payload
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, live_server, page  # noqa: F401 - fixtures
from tests.cases.conftest import example
from tests.disclosure import samples

pytestmark = pytest.mark.browser

OTHER = "另一家浏览器算力有限公司"


def _arrange(tmp_path: Path) -> int:
    """Two providers and a single-server case in the live server's database; the case's id."""
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'browser.sqlite3'}")
    with Session(engine, expire_on_commit=False) as session:
        set_actor(session, user_id=None, name="arranger")
        provider_service.create_provider(session, data=provider_payload())
        offer = {"name": "L40S 整机", "gpu_model": "L40S", "gpus_per_node": 8, "bandwidth_type": "dedicated"}
        provider_service.create_provider(
            session, data=provider_payload(legal_name=OTHER, short_name="另一家", uscc=None, offers=[offer])
        )
        case = cases.create_case(
            session, answers=example("offline_batch"), owner=cases.Actor(None, "arranger")
        )
    engine.dispose()
    return case.id


def _fill_quote(page, scan: Path, price: str) -> None:  # noqa: F811 - the imported fixture's name
    if page.locator("#f-offer_id option").count() > 2:  # (choose) and more than one offer
        page.select_option("#f-offer_id", index=1)
    page.fill("#f-price_gpu_hour_cny", price)
    page.fill("#f-min_term_months", "3")
    page.fill("#f-delivery_on", "2027-03-01")
    page.fill("#f-valid_until", "2099-12-31")
    page.select_option("#f-bandwidth_type", "dedicated")
    page.fill("#f-sla_availability_pct", "99.9")
    page.check("#f-includes_storage")
    page.check("#f-trial_server_lent")
    page.set_input_files("#f-scan", str(scan))


def test_an_analyst_requests_quotes_and_providers_answer_through_their_links(
    page,  # noqa: F811 - the imported fixture
    live_server: str,  # noqa: F811 - the imported fixture
    tmp_path: Path,
):
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    case_id = _arrange(tmp_path)
    scan = tmp_path / "报价单.png"
    scan.write_bytes(samples.png((300, 200)))

    # the analyst asks both providers from the case page
    page.goto("/login")
    page.fill("#username", "browser-analyst")
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")
    page.goto(f"/cases/{case_id}")
    page.click("#request-quotes")
    expect(page.locator("h1")).to_have_text("发起询价")
    for box in page.locator("input[name=offer_ids]").all():
        box.check()
    page.click("#send-quote-requests")
    expect(page.locator("#quote-requests-sent h2")).to_have_text("已生成询价链接：2 个")
    links = [field.input_value() for field in page.locator("#quote-requests-sent input[readonly]").all()]
    assert len(links) == 2 and all("/q/" in link for link in links)
    expect(page.locator("#quote-request-list .request-status")).to_have_text(["已发送", "已发送"])

    # the first provider answers in Chinese; the confirmation is asked before the quote is sent
    provider = page.context.browser.new_context(base_url=live_server).new_page()
    provider.set_default_timeout(TIMEOUT_MS)
    questions: list[str] = []
    provider.on("dialog", lambda dialog: (questions.append(dialog.message), dialog.accept()))
    provider.goto(links[0])
    expect(provider.locator("#quote-requirements")).to_contain_text("1 台，4 张 GPU")
    expect(provider.locator("#quote-requirements")).to_contain_text("办公地点：成都")
    body = provider.locator("body").inner_text()
    names = {"示例算力科技有限公司", OTHER}
    own = next(name for name in names if name in body)
    assert (names - {own}).pop() not in body
    _fill_quote(provider, scan, "8.8")
    provider.click("#submit-quote")
    expect(provider.locator("#quote-thanks")).to_contain_text("报价已提交")
    assert questions and "确定提交这份报价" in questions[0]
    provider.reload()
    expect(provider.locator("#quote-thanks")).to_be_visible()
    expect(provider.locator("#quote-link-form")).to_have_count(0)

    # the second provider switches to English, first sends a wrong price, then a right one
    other = page.context.browser.new_context(base_url=live_server).new_page()
    other.set_default_timeout(TIMEOUT_MS)
    other.on("dialog", lambda dialog: dialog.accept())
    other.goto(links[1])
    other.click("a[lang=en]")
    expect(other.locator("#quote-requirements")).to_contain_text("One server with 4 GPUs")
    _fill_quote(other, scan, "-2")
    other.click("#submit-quote")
    expect(other.locator("#quote-outcome")).to_contain_text("Not sent")
    expect(other.locator("#f-price_gpu_hour_cny-error")).to_be_visible()
    _fill_quote(other, scan, "9.6")
    other.click("#submit-quote")
    expect(other.locator("#quote-thanks")).to_contain_text("Quote sent")

    # the analyst sees both requests submitted and both quotes on the case page
    page.goto(f"/cases/{case_id}/quote-requests")
    expect(page.locator("#quote-request-list .request-status")).to_have_text(["已提交", "已提交"])
    page.goto(f"/cases/{case_id}")
    expect(page.locator("th.quote-column")).to_have_count(2)
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'browser.sqlite3'}")
    with Session(engine) as session:
        quotes = session.exec(select(Quote).order_by(Quote.id)).all()
        assert sorted(quote.price_gpu_hour_cny for quote in quotes) == [8.8, 9.6]
        assert all(quote.invitation_id and str(quote.received_via) == "link" for quote in quotes)
    engine.dispose()
    assert not [error for error in page.console_errors if re.search("quote", error, re.I)]
