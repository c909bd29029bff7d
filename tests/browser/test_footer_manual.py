"""Headless Chromium: an analyst records a provider's website footer by hand, with a screenshot, and the
credentials tab stops saying the footer is not verified (issue 24 items 1 and 2)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session, select

from app.accounts import users
from app.credentials import checks
from app.models import Provider
from app.registry.demo import load_demo
from tests.browser.seeded_app import serve_seeded
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, page  # noqa: F401 - the Chromium page fixture
from tests.credentials.checks.test_item_verification import FOOTER_TEXT
from tests.credentials.checks.test_verdicts import COMPLIANT
from tests.credentials.lookups.test_manual import png_bytes

pytestmark = pytest.mark.browser


def _seed(session: Session) -> dict[str, Any]:
    """The demo providers, one of them checked, and an analyst."""
    load_demo(session)
    provider = session.exec(select(Provider).where(Provider.legal_name == COMPLIANT)).one()
    checks.run_check(session, provider_id=provider.id)
    users.create_user(session, username="browser-footer", password=PASSWORD, role="analyst")
    return {"provider": provider.id}


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The real app (CSRF on, English compiled) on SQLite with the demo providers, one of them checked."""
    with serve_seeded(tmp_path, _seed) as seeded:
        yield seeded


@pytest.fixture
def live_server(seeded: dict[str, Any]) -> str:
    """The seeded app's base URL (the page fixture opens its context there)."""
    return seeded["url"]


def test_a_footer_recorded_by_hand_clears_footer_not_verified(page, seeded, tmp_path):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    credentials = f"/providers/{seeded['provider']}/credentials"
    page.goto(credentials)
    page.fill("#username", "browser-footer")
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")
    expect(page).to_have_url(f"{seeded['url']}{credentials}")
    footer_row = page.locator("#verification-items [data-subject='footer']")
    expect(footer_row).to_have_attribute("data-verification", "unverified")
    expect(page.locator("#verdict .provider-verdict")).to_contain_text("网站页脚")

    footer_row.locator("a.manual-record-link").click()
    expect(page.locator("#footer-manual-form")).to_be_visible()
    page.fill("#footer-text", FOOTER_TEXT)
    screenshot = tmp_path / "footer.png"
    screenshot.write_bytes(png_bytes())
    page.set_input_files("#footer-screenshot", str(screenshot))
    page.click("#footer-manual-form button[type=submit]")

    expect(page).to_have_url(f"{seeded['url']}{credentials}")
    expect(footer_row).to_have_attribute("data-verification", "verified_by_hand")
    expect(page.locator("#verdict .provider-verdict")).not_to_contain_text("网站页脚")
    expect(page.locator("#footer-manual-note")).to_contain_text("人工记录")

    page.goto("/lang/en")
    page.goto(credentials)
    expect(footer_row).to_contain_text("verified by hand")
    expect(page.locator("#verdict .provider-verdict")).not_to_contain_text("website footer")
    expect(page.locator("#verification")).not_to_contain_text("逐项核实")
    csp = [error for error in page.console_errors if "Content Security Policy" in error]
    assert not csp, csp
