"""Headless Chromium: watch a provider, its changes raise the inbox badge, opening one marks it read."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session

from app.credentials import watch
from app.credentials.watch import EventDraft
from app.registry.providers import create_provider
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, live_server, page  # noqa: F401

pytestmark = pytest.mark.browser


def test_watch_then_read_changes_in_the_inbox(page, live_server: str, tmp_path: Path):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'browser.sqlite3'}")
    with Session(engine) as session:
        provider = create_provider(session, data={"legal_name": "壬算力有限公司", "short_name": "壬算力"}).id

    page.goto("/login")
    page.fill("#username", "browser-analyst")
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")
    page.goto(f"/providers/{provider}")
    expect(page.locator("#inbox-unread")).to_have_count(0)
    page.click("#watch-toggle button")
    expect(page.locator("#watch-toggle button")).to_have_text("已关注")

    drafts = [
        EventDraft("expired", "licence:1", "expired", "blocker", "许可证已过期", "licence expired"),
        EventDraft("verdict_changed", "", "verdict", "warning", "核查结论变为不通过", "verdict is now fail"),
    ]
    with Session(engine) as session:  # as the daily re-check stores them
        watch.store_events(
            session, [(provider, d, f"browser:{d.key}") for d in drafts], occurred_on=date.today()
        )
    engine.dispose()

    page.reload()
    expect(page.locator("#inbox-unread")).to_have_text("2")
    page.click("#nav-inbox")
    expect(page).to_have_url(f"{live_server}/inbox")
    expect(page.locator(".inbox-item.inbox-unread")).to_have_count(2)
    expect(page.locator("#inbox-items")).to_contain_text("许可证已过期")
    page.locator(".inbox-item", has_text="许可证已过期").locator("a").click()
    expect(page).to_have_url(re.compile(rf"/providers/{provider}$"))
    expect(page.locator("#inbox-unread")).to_have_text("1")

    page.goto("/inbox?unread=1")
    expect(page.locator(".inbox-item")).to_have_count(1)
    page.click("#inbox-read-all")
    expect(page.locator("#inbox-empty")).to_be_visible()
    expect(page.locator("#inbox-unread")).to_have_count(0)
    assert page.console_errors == []
