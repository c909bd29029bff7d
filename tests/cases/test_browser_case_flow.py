"""Headless Chromium: complete the questionnaire, see ranked offers, open the checklist, tick an item."""

from __future__ import annotations

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
from app.registry import demo
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, page  # noqa: F401 - the Chromium page fixture

pytestmark = pytest.mark.browser


@pytest.fixture
def live_server(tmp_path: Path) -> Iterator[str]:
    """The real app (CSRF on) on SQLite with the demo providers, served on a free loopback port."""
    from werkzeug.serving import make_server

    url = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    engine = sa.create_engine(url)
    SQLModel.metadata.create_all(engine)
    engine.dispose()
    flask_app = create_app(Settings(GPUVET_INSTANCE_PATH=tmp_path / "instance", DATABASE_URL=url))
    with Session(flask_app.extensions["gpuvet.engine"]) as session:
        users.create_user(session, username="browser-buyer", password=PASSWORD, role="analyst")
        demo.load_demo(session)
    server = make_server("127.0.0.1", 0, flask_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)
        flask_app.extensions["gpuvet.engine"].dispose()


def test_questionnaire_to_ranked_offers_and_checklist(page, live_server: str):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    page.goto("/cases")
    page.fill("#username", "browser-buyer")
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")
    expect(page).to_have_url(f"{live_server}/cases")

    page.click("#new-case")
    page.select_option("#f-kind", "distributed_training")
    page.fill("#f-title", "浏览器四机训练")
    page.click("#next")

    expect(page).to_have_url(re.compile(r"/steps/compute$"))
    expect(page.locator("#step-title")).to_contain_text("第 2 步")
    page.fill("#f-nodes", "4")
    page.fill("#f-gpus_per_node", "8")
    page.fill("#f-gpu_models", "H800, H100, A800")
    page.fill("#f-min_gpu_memory_gb", "80")
    page.click("#next")

    page.fill("#f-parameters_billion", "7")
    page.fill("#f-target_step_seconds", "10")
    page.click("#next")

    page.fill("#f-dataset_gb", "2000")
    page.select_option("#f-source", "object_storage")
    page.click("#next")

    # an unknown city is refused at the field, then corrected
    page.fill("#f-office_city", "火星")
    page.click("#next")
    expect(page.locator("#f-office_city-error")).to_contain_text("未知城市")
    page.fill("#f-office_city", "北京")
    page.fill("#f-uplink_mbps", "100")
    page.click("#next")

    page.fill("#f-size_gb", "100")
    page.fill("#f-acceptable_stall_seconds", "120")
    # going back keeps the answers on the server
    page.click("#back")
    expect(page).to_have_url(re.compile(r"/steps/site$"))
    expect(page.locator("#f-office_city")).to_have_value("北京")
    page.click("#next")
    page.fill("#f-size_gb", "100")
    page.fill("#f-acceptable_stall_seconds", "120")
    page.click("#next")

    page.fill("#f-monthly_cny", "400000")
    page.check("input[name=priorities][value=intranet]")
    page.click("#next")
    page.click("#finish")

    expect(page).to_have_url(re.compile(r"/cases/\d+$"))
    expect(page.locator("#case-title")).to_contain_text("浏览器四机训练")
    expect(page.locator("#req-intranet_gbps_needed")).to_contain_text("56")
    rows = page.locator("table.ranked-offers tbody tr.offer-row")
    expect(rows.first).to_contain_text("示例星河算力科技有限公司")
    rows.first.locator("summary").click()
    expect(rows.first.locator("table.criteria")).to_be_visible()
    expect(rows.first.locator(".figures")).to_contain_text("服务商声称")
    excluded = page.locator("table.excluded-offers")
    expect(excluded).to_contain_text("没有 B11")
    expect(excluded).to_contain_text("仅在浙江有效")
    expect(page.locator("#faq")).to_be_visible()

    page.click("#open-checklist")
    expect(page.locator("#checklist-title")).to_contain_text("采购核查清单")
    expect(page.locator("#item-intranet_iperf3")).to_contain_text("iperf3 -c")
    item = page.locator("#item-sla_contract")
    item.locator("summary").click()
    item.locator("textarea[name=comment]").fill("合同附件写明独享带宽")
    item.locator("button[name=done][value='1']").click()
    expect(page.locator("#item-sla_contract .tick-info")).to_contain_text("browser-buyer")
    expect(page.locator("#item-sla_contract .status-passed")).to_be_visible()

    csp = [error for error in page.console_errors if "Content Security Policy" in error]
    assert not csp, csp
