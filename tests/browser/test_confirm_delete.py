"""Headless Chromium: destructive forms ask first; dismissed, nothing is deleted; accepted, it is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet
from sqlmodel import Session, select

from app.accounts import users
from app.models import Licence, Provider
from app.models.trials import BenchRun, TrialServer
from app.registry.providers import create_provider
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, live_server, page  # noqa: F401

pytestmark = pytest.mark.browser


@pytest.fixture
def engine(live_server: str, tmp_path: Path):  # noqa: F811 - the imported fixture
    """The live server's database (live_server keeps it at tmp_path/browser.sqlite3)."""
    database = sa.create_engine(f"sqlite:///{tmp_path / 'browser.sqlite3'}")
    yield database
    database.dispose()


@pytest.fixture
def seeded(engine) -> dict[str, int]:
    """An admin, a provider with a licence, and a trial server of it with one run."""
    with Session(engine, expire_on_commit=False) as session:
        users.create_user(session, username="browser-admin", password=PASSWORD, role="admin")
        provider = create_provider(
            session,
            data={
                "legal_name": "浏览器删除测试算力有限公司",
                "licences": [{"number_raw": "浙B1-20210042", "business_items": "B11"}],
            },
        )
        secret = Fernet(Fernet.generate_key()).encrypt(b"password").decode()
        server = TrialServer(
            provider_id=provider.id, name="待删除试用机", host="93.184.216.34", secret_encrypted=secret
        )
        session.add(server)
        session.commit()
        run = BenchRun(trial_server_id=server.id, provider_id=provider.id, suite="quick", state="succeeded")
        session.add(run)
        session.commit()
        return {"provider": provider.id, "licence": provider.licences[0].id, "server": server.id}


def _count(engine, model, **where) -> int:
    with Session(engine) as session:
        stmt = select(model)
        for name, value in where.items():
            stmt = stmt.where(getattr(model, name) == value)
        return len(session.exec(stmt).all())


def _log_in(page, live_server: str) -> None:  # noqa: F811
    page.goto("/login")
    page.fill("#username", "browser-admin")
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")
    page.wait_for_url(f"{live_server}/")  # the dashboard


def _click_answering(page, selector: str, *, accept: bool) -> list[str]:  # noqa: F811
    """Click `selector`, answer the confirm dialog, and return the dialog messages seen."""
    seen: list[str] = []

    def answer(dialog) -> None:
        seen.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", answer)
    if accept:
        with page.expect_navigation():
            page.click(selector)
    else:
        page.click(selector)
    return seen


def test_trial_server_delete_is_confirmed(page, live_server: str, engine, seeded):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    posts: list[str] = []
    page.on("request", lambda request: posts.append(request.url) if request.method == "POST" else None)
    _log_in(page, live_server)
    server_url = f"{live_server}/trial-servers/{seeded['server']}"
    page.goto(server_url)
    expect(page.locator("#server-name")).to_contain_text("待删除试用机")

    posts.clear()
    seen = _click_answering(page, "#delete-server button[type=submit]", accept=False)
    assert seen == ["删除这台试用服务器及其全部测试记录？"]
    page.reload()  # a round trip after the dismissed dialog: any submission would have gone first
    expect(page.locator("#server-name")).to_contain_text("待删除试用机")
    assert not [url for url in posts if url.endswith("/delete")]
    assert _count(engine, TrialServer, id=seeded["server"]) == 1
    assert _count(engine, BenchRun, trial_server_id=seeded["server"]) == 1

    seen = _click_answering(page, "#delete-server button[type=submit]", accept=True)
    assert len(seen) == 1
    expect(page).to_have_url(f"{live_server}/providers/{seeded['provider']}/trials")
    assert _count(engine, TrialServer, id=seeded["server"]) == 0
    assert _count(engine, BenchRun, trial_server_id=seeded["server"]) == 0
    csp = [error for error in page.console_errors if "Content Security Policy" in error]
    assert not csp, csp


def test_nested_record_delete_is_confirmed(page, live_server: str, engine, seeded):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    _log_in(page, live_server)
    page.goto(f"/providers/{seeded['provider']}")
    button = f"form[action$='/licences/{seeded['licence']}/delete'] button[type=submit]"

    assert _click_answering(page, button, accept=False) == ["确定删除这条记录吗？"]
    page.reload()
    expect(page.locator(button)).to_be_visible()
    assert _count(engine, Licence, id=seeded["licence"]) == 1

    _click_answering(page, button, accept=True)
    expect(page).to_have_url(re.compile(rf"/providers/{seeded['provider']}#licences$"))
    assert _count(engine, Licence, id=seeded["licence"]) == 0
    assert _count(engine, Provider, id=seeded["provider"]) == 1
