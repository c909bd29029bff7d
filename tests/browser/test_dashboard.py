"""Headless Chromium: the dashboard in Chinese and English speaks one language, shows no raw keys, and each
figure leads to the list it counts."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import Session, SQLModel

from app import create_app
from app.accounts import users
from app.core.config import Settings
from app.models.checks import CheckRun
from app.models.evidence import Lookup
from app.models.jobs import Job
from app.models.watch import ChangeEvent
from app.registry import providers
from tests.browser.test_page_sweep import (  # noqa: F401 - the browser fixture
    ADMIN,
    EXTRACT_JS,
    PASSWORD,
    _registry_texts,
    browser,
    logged_in_page,
    page_problems,
)

pytestmark = pytest.mark.browser

VERDICTS = ("fail", "fail", "needs_review", "pass", None)  # None: never checked


def _seed(session: Session) -> None:
    """Five providers (two failing, one to review, one passing, one never checked) and one of each figure."""
    now = datetime.now(UTC)
    for index, verdict in enumerate(VERDICTS):
        provider = providers.create_provider(
            session,
            data={
                "legal_name": f"杭州看板第{index + 1}算力有限公司",
                "registered_province": "浙江",
                "licences": [
                    {"number_raw": f"浙B1-2019000{index}", "expires_on": str(now.date() + timedelta(days=3))}
                ],
            },
        )
        if verdict:
            session.add(
                CheckRun(provider_id=provider.id, verdict=verdict, checked_on=now.date(), rules_version="t")
            )
            session.add(
                ChangeEvent(
                    provider_id=provider.id,
                    kind="verdict_changed",
                    dedupe_key=f"browser:{index}",
                    severity="warning",
                    message_zh="核查结论由“通过”变为“需复核”",
                    message_en="verdict changed from pass to needs review",
                    occurred_on=now.date(),
                )
            )
    session.add(Lookup(provider_id=provider.id, kind="icp", query="浙ICP备1号", state="awaiting_answer"))
    session.add(Job(kind="vetting.check", state="failed", error="boom"))
    session.commit()
    users.create_user(session, username=ADMIN, password=PASSWORD, role="admin")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[dict[str, Any]]:
    """The real app with a few providers, served on a loopback port."""
    from werkzeug.serving import make_server

    folder = tmp_path_factory.mktemp("dashboard")
    url = f"sqlite:///{folder / 'dashboard.sqlite3'}"
    engine = sa.create_engine(url)
    SQLModel.metadata.create_all(engine)
    engine.dispose()
    flask_app = create_app(Settings(GPUVET_INSTANCE_PATH=folder / "instance", DATABASE_URL=url))
    with flask_app.app_context(), Session(flask_app.extensions["gpuvet.engine"]) as session:
        _seed(session)
        registry = _registry_texts(session)
    server = make_server("127.0.0.1", 0, flask_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{server.server_port}", "registry": registry}
    finally:
        server.shutdown()
        thread.join(timeout=10)
        flask_app.extensions["gpuvet.engine"].dispose()


FIGURES_JS = """
() => [...document.querySelectorAll('a.dash-figure')].map(link => ({
  name: link.dataset.figure,
  value: parseInt(link.querySelector('.dash-value').innerText, 10),
  href: link.getAttribute('href'),
  visible: link.checkVisibility(),
}))
"""


@pytest.mark.parametrize("language", ["zh", "en"])
def test_dashboard_in_both_languages(site, browser, language):  # noqa: F811
    from playwright.sync_api import expect

    page = logged_in_page(browser, site["url"], width=1366, language=language)
    try:
        page.goto("/")
        problems = page_problems("/", language, page.evaluate(EXTRACT_JS, language), site["registry"])
        assert not problems, "\n".join(str(problem) for problem in problems)
        figures = {item["name"]: item for item in page.evaluate(FIGURES_JS)}
        assert {"verdict-fail", "checked-never", "expiry-expired", "lookups-awaiting", "jobs-active"} <= set(
            figures
        )
        assert all(item["visible"] for item in figures.values())
        assert figures["verdict-fail"]["value"] == 2 and figures["checked-never"]["value"] == 1
        assert figures["expiry-7"]["value"] == len(VERDICTS) and figures["jobs-failed"]["value"] == 1
        # the verdict figures add up to every provider, and the largest leads to its list
        total = sum(
            figures[f"verdict-{level}"]["value"] for level in ("fail", "needs_review", "pass", "unchecked")
        )
        assert total > 0
        level = max(
            ("fail", "needs_review", "pass", "unchecked"), key=lambda key: figures[f"verdict-{key}"]["value"]
        )
        page.click(f"a[data-figure='verdict-{level}']")
        expect(page).to_have_url(re.compile(rf"/providers\?verdict={level}$"))
        expect(page.locator("table.providers tbody tr")).to_have_count(
            min(figures[f"verdict-{level}"]["value"], 20)
        )
        expect(page.locator("#verdict")).to_have_value(level)
        # the lookup waiting for its captcha answer
        page.goto("/")
        page.click("a[data-figure='lookups-awaiting']")
        expect(page).to_have_url(re.compile(r"/lookups\?state=awaiting_answer$"))
        expect(page.locator("tr.lookup-row")).to_have_count(figures["lookups-awaiting"]["value"])
    finally:
        page.context.close()
