"""Headless Chromium: an analyst reviews a submitted questionnaire item by item, then merges it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from app.models import AuditEntry, Provider
from app.models.disclosure import Invitation
from tests.browser.test_provider_flow import PASSWORD, TIMEOUT_MS, live_server, page  # noqa: F401
from tests.disclosure.test_review import registry_provider, submitted

pytestmark = pytest.mark.browser


@pytest.fixture
def engine(live_server: str, tmp_path: Path):  # noqa: F811 - the imported fixture
    """The live server's database (live_server keeps it at tmp_path/browser.sqlite3)."""
    database = sa.create_engine(f"sqlite:///{tmp_path / 'browser.sqlite3'}")
    yield database
    database.dispose()


@pytest.fixture
def seeded(engine) -> dict[str, int]:
    """A registered provider and a questionnaire it submitted (as the provider's form stores it)."""
    with Session(engine, expire_on_commit=False) as session:
        provider = registry_provider(session)
        invitation = submitted(session, provider_id=provider.id)
        return {"provider": provider.id, "invitation": invitation.id, "version": provider.version}


def test_review_side_by_side_then_merge(page, live_server: str, engine, seeded):  # noqa: F811
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    page.goto("/login")
    page.fill("#username", "browser-analyst")
    page.fill("#password", PASSWORD)
    with page.expect_navigation():
        page.click("form button[type=submit]")

    page.goto("/invitations?status=submitted")
    row = page.locator(f"tr[data-invitation='{seeded['invitation']}']")
    expect(row.locator(".invitation-status")).to_have_text("已提交")
    row.locator("a", has_text="审核").click()
    expect(page).to_have_url(re.compile(rf"/invitations/{seeded['invitation']}/review$"))

    # side by side: the declared coverage beside the registry's, per field
    licence = page.locator("#item-licences-0")
    expect(licence.locator(".item-state")).to_have_text("有变化")
    coverage = licence.locator("tr[data-field='coverage']")
    expect(coverage.locator(".declared")).to_contain_text("北京, 上海")
    expect(coverage.locator(".registry")).to_contain_text("北京")
    expect(page.locator("#item-identity-uscc")).to_contain_text("与登记簿一致")

    keys = page.eval_on_selector_all(
        ".review-item input[type=radio][value=accept]", "inputs => inputs.map(i => i.name)"
    )
    assert "decision-licences.0" in keys and "decision-topology" in keys
    for name in keys:
        page.check(f"input[name='{name}'][value=accept]")
    page.check("input[name='decision-certifications.0'][value=reject]")
    page.fill("#comment-certifications-0", "证书编号查无此证")
    page.click("#save-review")
    expect(page.locator("#review-status")).to_have_text("已审核")
    expect(page.locator("#item-certifications-0")).to_have_attribute("data-decision", "reject")
    expect(page.locator("#comment-certifications-0")).to_have_value("证书编号查无此证")

    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.click("#merge")
    expect(page).to_have_url(f"{live_server}/providers/{seeded['provider']}")
    expect(page.locator("#declared-values")).to_contain_text("https://decl.example")
    assert not [error for error in page.console_errors if "Content Security Policy" in error]

    with Session(engine) as session:
        provider = session.get(Provider, seeded["provider"])
        assert provider.website == "https://decl.example" and provider.version == seeded["version"] + 1
        assert provider.certifications == []
        assert session.exec(select(AuditEntry).where(AuditEntry.action == "declare")).one()
        assert "merge" in session.get(Invitation, seeded["invitation"]).review
