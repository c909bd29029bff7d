"""Headless Chromium: an analyst records a provider's website footer by hand, with a screenshot, and the
credentials tab stops saying the footer is not verified (issue 24 items 1 and 2)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import Session, SQLModel, select

import app.models  # noqa: F401 - registers every table
from app import create_app
from app.config import Settings
from app.models import Provider
from app.services import checks, users
from app.services.demo import load_demo
from tests.browser.test_case_verdicts import _english_catalog
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, page  # noqa: F401 - the Chromium page fixture
from tests.checks.test_item_verification import FOOTER_TEXT
from tests.checks.test_verdicts import COMPLIANT
from tests.lookups.test_manual import png_bytes

pytestmark = pytest.mark.browser


@pytest.fixture
def seeded(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The real app (CSRF on, English compiled) on SQLite with the demo providers, one of them checked."""
    from werkzeug.serving import make_server

    url = f"sqlite:///{tmp_path / 'footer.sqlite3'}"
    engine = sa.create_engine(url)
    SQLModel.metadata.create_all(engine)
    engine.dispose()
    flask_app = create_app(
        Settings(GPUVET_INSTANCE_PATH=tmp_path / "instance", DATABASE_URL=url),
        BABEL_TRANSLATION_DIRECTORIES=str(_english_catalog(tmp_path / "translations")),
    )
    with Session(flask_app.extensions["gpuvet.engine"], expire_on_commit=False) as session:
        load_demo(session)
        provider = session.exec(select(Provider).where(Provider.legal_name == COMPLIANT)).one()
        checks.run_check(session, provider_id=provider.id)
        users.create_user(session, username="browser-footer", password=PASSWORD, role="analyst")
        provider_id = provider.id
    server = make_server("127.0.0.1", 0, flask_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"provider": provider_id, "url": f"http://127.0.0.1:{server.server_port}"}
    finally:
        server.shutdown()
        thread.join(timeout=10)
        flask_app.extensions["gpuvet.engine"].dispose()


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
