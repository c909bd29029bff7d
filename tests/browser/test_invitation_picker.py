"""Headless Chromium as an analyst (issue 27 item 12): pick the provider by typing part of its name, create
the invitation, and copy its link with the button."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session

from app.registry.providers import create_provider
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, live_server, page  # noqa: F401 - fixtures

pytestmark = pytest.mark.browser


def test_the_provider_is_picked_by_name_and_the_link_copied(
    page,  # noqa: F811 - the imported fixture
    live_server: str,  # noqa: F811 - the imported fixture
    tmp_path: Path,
):
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'browser.sqlite3'}")  # the live server's database
    with Session(engine, expire_on_commit=False) as session:
        create_provider(session, data={"legal_name": "北京浏览器甲算力有限公司"})
        wanted = create_provider(
            session, data={"legal_name": "深圳浏览器乙算力有限公司", "short_name": "乙算力"}
        )
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto("/login")
    page.fill("#username", "browser-analyst")
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")

    page.goto("/invitations/new")
    expect(page.locator("#provider-filter")).to_be_visible()  # shown once the script runs
    page.fill("#provider-filter", "乙算力")
    expect(page.locator("#provider_id")).to_have_value(str(wanted.id))
    assert page.locator("#provider_id option:not([hidden])").count() == 2  # the blank choice and 乙
    page.click("form.card button[type=submit]")

    expect(page.locator("#invitation-provider")).to_contain_text("深圳浏览器乙算力有限公司")
    page.click("#copy-link")
    expect(page.locator("#copy-status")).to_have_text("已复制")
    link = page.locator("#invitation-link").input_value()
    assert "/d/" in link and page.evaluate("navigator.clipboard.readText()") == link
    assert page.console_errors == []  # type: ignore[attr-defined]
