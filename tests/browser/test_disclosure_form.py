"""Headless Chromium as a provider: fill the questionnaire with uploads, save a draft, come back, submit."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from app.disclosure import invitations
from app.models.disclosure import DisclosureUpload, Invitation
from app.models.evidence import Evidence
from tests.browser.test_provider_flow import TIMEOUT_MS, live_server, page  # noqa: F401 - fixtures
from tests.disclosure import samples

pytestmark = pytest.mark.browser


def test_provider_fills_saves_resumes_and_submits_the_questionnaire(
    page,  # noqa: F811 - the imported fixture
    live_server: str,  # noqa: F811 - the imported fixture
    tmp_path: Path,
):
    from playwright.sync_api import expect

    expect.set_options(timeout=TIMEOUT_MS)
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'browser.sqlite3'}")  # the live server's database
    with Session(engine, expire_on_commit=False) as session:
        created = invitations.create(session, data={"legal_name": "示例浏览器披露算力有限公司"})
    scan, diagram = tmp_path / "许可证扫描件.png", tmp_path / "拓扑图.pdf"
    scan.write_bytes(samples.png((300, 200)))
    diagram.write_bytes(samples.pdf())

    # first visit: Chinese, the name filled in; identity and a licence with its scan, then save the draft
    page.goto(f"/d/{created.token}")
    expect(page.locator("h1")).to_have_text("示例浏览器披露算力有限公司")
    expect(page.locator("#section-identity h2")).to_have_text("企业身份")
    page.fill("#identity-uscc", samples.FULL_WIDTH_USCC)
    page.fill("#licences-0-number_raw", "北京Ｂ２－２０２０２４１８")
    page.fill("#licences-0-business_items", "B11，b12")
    page.fill("#licences-0-coverage", "全国")
    page.set_input_files("#licences-0-scan_upload_id", str(scan))
    page.fill("#topology-oversubscription_ratio", "很多")  # wrong: saved anyway, shown with its error
    page.click("#save-draft")
    expect(page.locator("#disclosure-outcome")).to_contain_text("草稿已保存")
    expect(page.locator("#topology-oversubscription_ratio-error")).to_contain_text("收敛比须形如")
    expect(page.locator("#identity-uscc")).to_have_value(samples.VALID_USCC)
    expect(page.locator("#licences-0-number_raw")).to_have_value("京B2-20202418")
    thumbnail = page.locator("#licences-0-scan_upload_id-current img")
    expect(thumbnail).to_be_visible()
    assert thumbnail.evaluate("image => image.naturalWidth") > 0  # served under the sandboxing CSP
    page.close()

    # later, in a fresh browser session: everything saved is still there
    later = page.context.browser.new_context(base_url=live_server).new_page()
    later.set_default_timeout(TIMEOUT_MS)
    later.goto(f"/d/{created.token}")
    expect(later.locator("#licences-0-number_raw")).to_have_value("京B2-20202418")
    expect(later.locator("#topology-oversubscription_ratio")).to_have_value("很多")
    expect(later.locator("#licences-0-scan_upload_id-current")).to_contain_text("许可证扫描件.png")
    rows = later.locator("#section-offers fieldset").count()
    later.click("#add-offers")
    expect(later.locator("#section-offers fieldset")).to_have_count(rows + 1)

    later.fill("#datacenters-0-name", "华东一号机房")
    later.fill("#datacenters-0-province", "沪")
    later.select_option("#datacenters-0-tier", "tier3")
    later.fill("#offers-0-gpu_model", "H800")
    later.fill("#offers-0-gpus_per_node", "8")
    later.fill("#offers-0-datacenter_name", "华东一号机房")
    later.select_option("#offers-0-bandwidth_type", "dedicated")
    later.fill("#topology-oversubscription_ratio", "１：１")
    later.set_input_files("#topology-diagram_upload_id", str(diagram))
    later.select_option("#storage-location", "local_nvme")
    later.check("#trial-will_lend-yes")
    later.fill("#trial-how", "免费试用 3 天")
    later.click("#submit-disclosure")  # not yet confirmed: kept as a draft, the box asks for the tick
    expect(later.locator("#confirm-submit-error")).to_contain_text("请勾选确认")
    later.check("#confirm-submit")
    later.click("#submit-disclosure")
    expect(later.locator("#disclosure-thanks")).to_contain_text("问卷已提交")

    with Session(engine) as session:
        invitation = session.get(Invitation, created.invitation.id)
        answers = invitation.answers
        uploads = session.exec(select(DisclosureUpload).order_by(DisclosureUpload.id)).all()
        assert invitation.status == "submitted"
        assert answers["identity"]["uscc"] == samples.VALID_USCC
        assert answers["licences"][0]["number_raw"] == "京B2-20202418"
        assert answers["licences"][0]["scan_upload_id"] == uploads[0].id
        assert answers["topology"]["diagram_upload_id"] == uploads[1].id
        assert answers["topology"]["oversubscription_ratio"] == "1:1"
        assert answers["datacenters"][0]["province"] == "上海" and answers["offers"][0]["datacenter_name"]
        assert [upload.media_type for upload in uploads] == ["image/png", "application/pdf"]
        stored = session.get(Evidence, uploads[1].evidence_id)
        assert stored.sha256 == hashlib.sha256(diagram.read_bytes()).hexdigest()
    engine.dispose()
