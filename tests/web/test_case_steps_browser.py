"""Headless Chromium: the questionnaire's live hints (static JS under the CSP) follow what the buyer types."""

from __future__ import annotations

import re

import pytest

from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, page  # noqa: F401 - the Chromium page fixture
from tests.cases.test_browser_case_flow import live_server  # noqa: F401 - the app with the demo data

pytestmark = pytest.mark.browser


def test_effects_and_defaults_update_while_typing(page, live_server: str):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    page.goto("/cases/new")
    page.fill("#username", "browser-buyer")
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")
    page.goto("/cases/new")
    page.select_option("#f-kind", "distributed_training")
    page.click("#next")
    expect(page).to_have_url(re.compile(r"/steps/compute$"))
    expect(page.locator("#f-nodes")).to_have_value("2")
    page.fill("#f-nodes", "4")
    page.fill("#f-gpus_per_node", "8")
    page.click("#next")

    page.fill("#f-parameters_billion", "7")
    effects = page.locator("#f-target_step_seconds-effects")
    expect(effects).to_contain_text("例如 1 秒一步需要 560 Gbps：必须 RDMA")
    page.fill("#f-target_step_seconds", "1")
    expect(effects).to_contain_text("1 秒一步需要 560 Gbps：必须 RDMA")
    expect(effects).not_to_contain_text("例如")
    page.fill("#f-target_step_seconds", "60")
    expect(effects).to_contain_text("60 秒一步需要 9.33 Gbps：以太网 TCP 即可")
    page.fill("#f-parameters_billion", "70")
    page.click("#next")
    page.fill("#f-dataset_gb", "100")
    page.select_option("#f-source", "object_storage")
    page.click("#next")
    page.fill("#f-office_city", "北京")
    page.click("#next")

    expect(page).to_have_url(re.compile(r"/steps/checkpoint$"))
    expect(page.locator("#f-size_gb")).to_have_value("140")
    expect(page.locator("#f-acceptable_stall_seconds")).to_have_value("70")
    page.fill("#f-size_gb", "500")
    # The untouched stall default follows the new size, and the write rate follows the new stall.
    expect(page.locator("#f-acceptable_stall_seconds")).to_have_value("250")
    expect(page.locator("#f-acceptable_stall_seconds-effects")).to_contain_text("500 GB ÷ 可接受停顿 250 s")
    page.fill("#f-acceptable_stall_seconds", "100")
    page.fill("#f-size_gb", "800")
    expect(page.locator("#f-acceptable_stall_seconds-effects")).to_contain_text("800 GB ÷ 可接受停顿 100 s")
    expect(page.locator("#f-acceptable_stall_seconds")).to_have_value("100")
    assert page.console_errors == []  # type: ignore[attr-defined]
