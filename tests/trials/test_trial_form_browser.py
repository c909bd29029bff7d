"""Headless Chromium: the trial-server form shows the credentials of the chosen login method only."""

from __future__ import annotations

import pytest

from tests.browser.test_page_sweep import ADMIN, browser, logged_in_page, site  # noqa: F401 - module fixtures
from tests.browser.test_provider_flow import PASSWORD

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def allow_loopback_trials():
    """Not needed here (nothing connects), and it would run the module once per test database."""


def test_credentials_follow_the_login_method(site, browser):  # noqa: F811
    from playwright.sync_api import expect

    page = logged_in_page(browser, site["url"], width=1280, language="zh")
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    try:
        for path in (f"/providers/{site['provider']}/trials/new", f"/trial-servers/{site['server']}/edit"):
            page.goto(path)
            key_fields = [page.locator("#f-private_key"), page.locator("#f-passphrase")]
            password = page.locator("#f-password")
            expect(page.locator("#auth-note")).to_be_hidden()  # the note is for pages without scripts

            page.select_option("#f-auth_method", "key")
            for field in key_fields:
                expect(field).to_be_visible()
            expect(password).to_be_hidden()

            page.select_option("#f-auth_method", "password")
            expect(password).to_be_visible()
            for field in key_fields:
                expect(field).to_be_hidden()
        # the seeded server logs in with a password: its edit page opens showing the password field only
        page.goto(f"/trial-servers/{site['server']}/edit")
        expect(page.locator("#f-password")).to_be_visible()
        expect(page.locator("#f-private_key")).to_be_hidden()
    finally:
        page.context.close()
    assert not errors, errors


def test_without_scripts_every_credential_field_shows_with_the_note(site, browser):  # noqa: F811
    from playwright.sync_api import expect

    context = browser.new_context(base_url=site["url"], java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto("/login")
        page.fill("#username", ADMIN)
        page.fill("#password", PASSWORD)
        page.click("form button[type=submit]")
        page.goto(f"/providers/{site['provider']}/trials/new")
        for selector in ("#auth-note", "#f-private_key", "#f-passphrase", "#f-password"):
            expect(page.locator(selector)).to_be_visible()
    finally:
        context.close()
