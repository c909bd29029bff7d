"""End to end in headless Chromium: log in, create a provider, add a licence and an offer, find it."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, SQLModel

import app.models  # noqa: F401 - registers every table
from app import create_app
from app.accounts import users
from app.core.config import Settings
from tests.conftest import missing_tool

pytestmark = pytest.mark.browser

# Debian's chromium (scripts/install.sh --test); GPUVET_TEST_CHROMIUM points elsewhere.
CHROMIUM = Path(os.environ.get("GPUVET_TEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 15_000
PASSWORD = "correct horse battery"


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    missing_tool(f"{CHROMIUM} is missing (scripts/install.sh --test installs Debian's chromium)")


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[str]:
    """The real app (CSRF on) on a fresh SQLite database, served on a free loopback port."""
    from werkzeug.serving import make_server

    url = f"sqlite:///{tmp_path / 'browser.sqlite3'}"
    engine = sa.create_engine(url)
    SQLModel.metadata.create_all(engine)
    engine.dispose()
    flask_app = create_app(Settings(GPUVET_INSTANCE_PATH=tmp_path / "instance", DATABASE_URL=url))
    with Session(flask_app.extensions["gpuvet.engine"]) as session:
        users.create_user(session, username="browser-analyst", password=PASSWORD, role="analyst")
    server = make_server("127.0.0.1", 0, flask_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        flask_app.extensions["gpuvet.engine"].dispose()


@pytest.fixture
def page(live_server: str):
    """A Chromium page with bounded waits; console errors are collected on `page.console_errors`."""
    _require_chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - the test requirements install it
        missing_tool(f"playwright is not installed: {exc}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, timeout=TIMEOUT_MS
        )
        try:
            context = browser.new_context(base_url=live_server, viewport={"width": 1280, "height": 900})
            context.set_default_timeout(TIMEOUT_MS)
            context.set_default_navigation_timeout(TIMEOUT_MS)
            new_page = context.new_page()
            errors: list[str] = []
            new_page.on(
                "console", lambda message: errors.append(message.text) if message.type == "error" else None
            )
            new_page.on("pageerror", lambda error: errors.append(str(error)))
            new_page.console_errors = errors  # type: ignore[attr-defined]
            yield new_page
            context.close()
        finally:
            browser.close()


def test_create_provider_with_licence_and_offer_then_find_it(page, live_server: str):
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)

    # anonymous visitors land on the login form
    page.goto("/providers")
    expect(page).to_have_url(re.compile(r"/login\?next="))
    page.fill("#username", "browser-analyst")
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")
    expect(page).to_have_url(f"{live_server}/providers")
    expect(page.locator("#result-count")).to_contain_text("共 0 家供应商")

    # create the provider through the form
    page.click("nav >> text=新建供应商")
    expect(page).to_have_url(f"{live_server}/providers/new")
    page.fill("#f-legal_name", "杭州浏览器测试算力有限公司")
    page.fill("#f-short_name", "浏览器测试")
    page.select_option("#f-registered_province", "浙江")
    page.select_option("#f-status", "candidate")
    page.click("form.card button[type=submit]")
    expect(page).to_have_url(re.compile(r"/providers/\d+$"))
    expect(page.locator("#provider-name")).to_contain_text("杭州浏览器测试算力有限公司")
    provider_url = page.url

    # add a licence, typed with full-width characters as if pasted from a scan
    page.click("a[href$='/licences/new']")
    page.fill("#f-number_raw", "浙Ｂ１－２０２１００４２")
    page.check("input[name=business_items][value=B11]")
    page.select_option("#f-b11_includes_resource_collab", "true")
    page.click("form.card button[type=submit]")
    expect(page).to_have_url(re.compile(r"/providers/\d+#licences$"))
    expect(page.locator("#licences + div")).to_contain_text("浙B1-20210042")

    # an invalid offer is refused at the field, then corrected
    page.click("a[href$='/offers/new']")
    page.fill("#f-name", "八卡 H800 裸金属")
    page.fill("#f-gpu_model", "H800")
    page.fill("#f-gpus_per_node", "0")
    page.select_option("#f-bandwidth_type", "dedicated")
    page.select_option("#f-storage_type", "local_nvme")
    page.click("form.card button[type=submit]")
    expect(page.locator("#f-gpus_per_node-error")).to_be_visible()
    expect(page.locator("#f-gpu_model")).to_have_value("H800")
    page.fill("#f-gpus_per_node", "8")
    page.click("form.card button[type=submit]")
    expect(page).to_have_url(re.compile(r"/providers/\d+#offers$"))
    expect(page.locator("#offers + div")).to_contain_text("八卡 H800 裸金属")
    expect(page.locator("#history + div")).to_contain_text("browser-analyst")

    # find it in the list by searching for the licence number as normally written
    page.goto("/providers")
    page.fill("#q", "浙B1-20210042")
    page.click("form.filters button[type=submit]")
    expect(page).to_have_url(re.compile(r"/providers\?.*q="))
    rows = page.locator("table.providers tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("杭州浏览器测试算力有限公司")
    expect(rows.first).to_contain_text("H800")
    expect(rows.first).to_contain_text("浙B1-20210042")
    rows.first.locator("a").first.click()
    expect(page).to_have_url(provider_url.split("#")[0])

    # and a search that matches nothing shows no rows
    page.goto("/providers?q=不存在的供应商")
    expect(page.locator("#no-results")).to_be_visible()

    csp = [error for error in page.console_errors if "Content Security Policy" in error]
    assert not csp, csp
