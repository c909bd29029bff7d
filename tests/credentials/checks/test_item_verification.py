"""Verification per item (issue 24): each licence, filing, certification, the footer and each claimed offer
figure has its own status, and a manual record exists for every source (footer, PSB filing, certificate)."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session, select

from app.core.errors import InvalidInput
from app.credentials import checks, footer_manual, manual_lookups, verdicts, verification
from app.models import AuditEntry, Provider
from app.models.evidence import Evidence, Lookup, LookupKind, LookupState
from app.registry.demo import load_demo
from tests.credentials.checks.test_verdicts import COMPLIANT
from tests.credentials.lookups.test_manual import png_bytes

LOOKED_AT = "2026-12-01T10:15"
FOOTER_TEXT = (
    "关于我们 联系我们\n© 2025 示例星河算力科技有限公司 版权所有\n"
    "京ICP备2025099901号-1 京公网安备11010802099901号 增值电信业务经营许可证：京B1.B2-20259901"
)


@pytest.fixture
def compliant(session: Session) -> Provider:
    """The compliant demo provider, checked once on its registry data only."""
    load_demo(session)
    provider = session.exec(select(Provider).where(Provider.legal_name == COMPLIANT)).one()
    checks.run_check(session, provider_id=provider.id)
    return provider


def _items(session: Session, provider_id: int) -> dict[str, verification.ItemVerification]:
    session.expire_all()
    return verification.by_subject(verification.verification_of(session, provider_id))


def _lookup(session, provider, kind, records, *, state=LookupState.completed, days_ago=0, by="分析员"):
    at = datetime.now(UTC) - timedelta(days=days_ago)
    extra = {"manual": {"by": by, "looked_at": at.isoformat()}} if state == LookupState.manual else {}
    lookup = Lookup(
        provider_id=provider.id,
        kind=kind,
        query=provider.legal_name,
        state=state,
        completed_at=at,
        records=records,
        captcha_extra=extra,
        created_by_name=by,
    )
    session.add(lookup)
    session.commit()
    return lookup


def test_every_item_starts_unverified_and_is_named(session, compliant):
    items = _items(session, compliant.id)
    licence, filing_icp, filing_psb = (
        items[f"licence:{compliant.licences[0].id}"],
        items[f"filing:{compliant.filings[0].id}"],
        items[f"filing:{compliant.filings[1].id}"],
    )
    assert (licence.kind, licence.name, licence.status) == ("licence", "京B1.B2-20259901", "unverified")
    assert (filing_icp.kind, filing_psb.kind) == ("icp_filing", "psb_filing")
    assert items["footer"].status == "unverified" and items["footer"].reason("en") == "not checked"
    offer = compliant.offers[0]
    assert items[f"offer:{offer.id}:intranet_gbps"].reason("zh") == "未实测"
    assert {item.status for item in items.values()} == {"unverified"}


def test_one_manual_icp_lookup_never_clears_the_licence(session, compliant):
    _lookup(
        session,
        compliant,
        LookupKind.icp,
        [{"unitName": COMPLIANT, "mainLicence": "京ICP备2025099901号-1", "natureName": "企业"}],
        state=LookupState.manual,
    )
    checks.run_check(session, provider_id=compliant.id)
    items = _items(session, compliant.id)
    assert items[f"filing:{compliant.filings[0].id}"].status == "verified_by_hand"
    assert items[f"licence:{compliant.licences[0].id}"].status == "unverified"
    label = verdicts.verdict_of(session, compliant.id).label("en")
    assert "licence 京B1.B2-20259901 not looked up" in label
    assert "京ICP备2025099901号-1" not in label


def test_a_licence_lookup_that_lists_another_number_contradicts_the_licence(session, compliant):
    lookup = _lookup(
        session, compliant, LookupKind.licence, [{"licenceNo": "京B1.B2-20250001", "companyName": COMPLIANT}]
    )
    item = _items(session, compliant.id)[f"licence:{compliant.licences[0].id}"]
    assert item.status == "contradicted" and item.lookup_id == lookup.id
    assert f"lookup #{lookup.id} does not list this number" == item.reason("en")


def test_a_verification_older_than_the_limit_expires(app, session, compliant):
    number = {"licenceNo": "京B1.B2-20259901", "companyName": COMPLIANT, "status": "正常"}
    _lookup(session, compliant, LookupKind.licence, [number], days_ago=91)
    item = _items(session, compliant.id)[f"licence:{compliant.licences[0].id}"]
    assert item.status == "expired" and "90" in item.reason("en")
    app.config["GPUVET_SETTINGS"].verification_max_age_days = 120
    try:
        with app.app_context():
            assert _items(session, compliant.id)[f"licence:{compliant.licences[0].id}"].status == "verified"
    finally:
        app.config["GPUVET_SETTINGS"].verification_max_age_days = 90


def _record_manual(session, provider, kind, **values):
    return manual_lookups.record_manual(
        session,
        provider_id=provider.id,
        kind=kind,
        values={"found": "yes", "looked_at": LOOKED_AT, **values},
        screenshot=png_bytes(),
        user=None,
    )


def test_a_manual_psb_lookup_verifies_the_public_security_filing(session, compliant):
    lookup = _record_manual(
        session,
        compliant,
        "psb",
        holder_name=COMPLIANT,
        number="京公网安备11010802099901号",
        domain="x.example",
    )
    assert lookup.kind == LookupKind.psb and lookup.records[0]["recordNo"] == "京公网安备11010802099901号"
    item = _items(session, compliant.id)[f"filing:{compliant.filings[1].id}"]
    assert item.status == "verified_by_hand" and item.lookup_id == lookup.id and item.by == "system"


def test_a_manual_certificate_lookup_verifies_or_contradicts_the_certificate(session, compliant):
    cert = compliant.certifications[0]
    _record_manual(
        session,
        compliant,
        "certification",
        holder_name=COMPLIANT,
        number=cert.number,
        certificate_kind=str(cert.kind),
        status="有效",
    )
    assert _items(session, compliant.id)[f"certification:{cert.id}"].status == "verified_by_hand"
    _record_manual(
        session, compliant, "certification", holder_name=COMPLIANT, number=cert.number, status="撤销"
    )
    item = _items(session, compliant.id)[f"certification:{cert.id}"]
    assert item.status == "contradicted" and "撤销" in item.reason("zh")


def test_a_certificate_status_outside_the_register_is_refused_naming_the_field(session, compliant):
    with pytest.raises(InvalidInput) as caught:
        _record_manual(
            session, compliant, "certification", holder_name=COMPLIANT, number="X-1", status="valid"
        )
    assert [error.field for error in caught.value.errors] == ["status"]


def test_an_automatic_lookup_cannot_be_started_for_a_manual_only_kind(session, compliant):
    from app.credentials import lookups

    with pytest.raises(InvalidInput) as caught:
        lookups.parse_kind("psb", automatic=True)
    assert caught.value.errors[0].field == "kind"
    assert lookups.parse_kind("psb") == LookupKind.psb


def test_a_footer_recorded_by_hand_is_read_like_a_scrape_and_clears_the_footer(session, compliant):
    evidence = footer_manual.record_footer(
        session,
        provider_id=compliant.id,
        values={"url": "https://xinghe-compute.example", "footer_text": FOOTER_TEXT, "looked_at": LOOKED_AT},
        screenshot=png_bytes(),
        user=None,
    )
    assert evidence.method == "MANUAL" and evidence.content_type == "image/png"
    numbers = {item["normalized"] for item in evidence.extracted["identifiers"]}
    assert numbers == {"京ICP备2025099901号-1", "京公网安备11010802099901号", "京B1.B2-20259901"}
    assert evidence.extracted["company_name"] == COMPLIANT
    item = _items(session, compliant.id)["footer"]
    assert item.status == "verified_by_hand" and item.evidence_id == evidence.id
    assert "footer" not in verdicts.verdict_of(session, compliant.id).unverified
    audit = session.exec(select(AuditEntry).where(AuditEntry.entity == "footer_record")).one()
    assert audit.entity_id == evidence.id and audit.changes["sha256"][1] == evidence.sha256


def test_a_footer_showing_another_filing_contradicts_the_footer(session, compliant):
    footer_manual.record_footer(
        session,
        provider_id=compliant.id,
        values={"footer_text": "© 2025 示例星河算力科技有限公司 京ICP备2099000001号", "looked_at": LOOKED_AT},
        screenshot=png_bytes(),
        user=None,
    )
    item = _items(session, compliant.id)["footer"]
    assert item.status == "contradicted" and item.finding_rule.startswith("footer.")


def test_a_footer_record_names_each_bad_field(session, compliant):
    with pytest.raises(InvalidInput) as caught:
        footer_manual.record_footer(
            session,
            provider_id=compliant.id,
            values={"url": "javascript:alert(1)", "footer_text": "", "looked_at": "tomorrow"},
            screenshot=b"<html>",
            user=None,
        )
    assert {error.field for error in caught.value.errors} == {"url", "footer_text", "looked_at", "screenshot"}
    assert session.exec(select(Evidence).where(Evidence.method == "MANUAL")).first() is None


def _post_footer(client, provider_id, data, screenshot=None):
    form = {**data, "screenshot": (io.BytesIO(screenshot or png_bytes()), "footer.png")}
    return client.post(
        f"/providers/{provider_id}/evidence/footer/manual", data=form, content_type="multipart/form-data"
    )


def test_the_footer_form_records_it_and_the_credentials_page_shows_it(login, session, compliant):
    client = login("analyst")
    form = client.get(f"/providers/{compliant.id}/evidence/footer/manual")
    assert form.status_code == 200 and 'id="footer-manual-form"' in form.get_data(as_text=True)
    bad = _post_footer(client, compliant.id, {"footer_text": "", "looked_at": LOOKED_AT})
    assert bad.status_code == 422 and 'id="footer_text-error"' in bad.get_data(as_text=True)
    done = _post_footer(client, compliant.id, {"footer_text": FOOTER_TEXT, "looked_at": LOOKED_AT})
    assert done.status_code == 302 and done.headers["Location"].endswith(
        f"/providers/{compliant.id}/credentials"
    )
    page = client.get(f"/providers/{compliant.id}/credentials").get_data(as_text=True)
    assert 'id="footer-manual-note"' in page and "京公网安备11010802099901号" in page
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "网站页脚 未核查" not in text
    assert login("viewer").post(f"/providers/{compliant.id}/evidence/footer/manual").status_code == 403


def test_verifications_of_a_page_take_a_constant_number_of_statements(session, compliant):
    import sqlalchemy as sa

    ids = list(session.exec(select(Provider.id)).all())
    engine = session.get_bind()
    counted: list[str] = []

    def count(_conn, _cursor, statement, *_args):
        counted.append(statement)

    def statements(provider_ids):
        counted.clear()
        sa.event.listen(engine, "before_cursor_execute", count)
        try:
            verification.verifications_of(session, provider_ids)
        finally:
            sa.event.remove(engine, "before_cursor_execute", count)
        return len(counted)

    assert statements(ids) == statements(ids[:1]) and len(ids) >= 10


def test_the_report_shows_each_items_verification_in_both_languages(session, compliant):
    from app.credentials import report_exports as reports

    _record_manual(
        session,
        compliant,
        "psb",
        holder_name=COMPLIANT,
        number="京公网安备11010802099901号",
        domain="a.example",
    )
    author = reports.Author(None, "测试")
    zh = reports.provider_report_html(session, provider_id=compliant.id, language="zh", author=author)
    en = reports.provider_report_html(session, provider_id=compliant.id, language="en", author=author)
    licences = re.search(r'<table id="licences">.*?</table>', zh, re.S).group(0)
    assert 'class="small verification v-unverified"' in licences and "未经官方查询" in licences
    filings = re.search(r'<table id="filings">.*?</table>', en, re.S).group(0)
    assert "v-verified_by_hand" in filings and "an official lookup recorded by hand" in filings


def test_api_lists_every_items_verification_and_records_a_footer_by_hand(app, session, compliant, token_for):
    client, analyst, viewer = app.test_client(), token_for("analyst"), token_for("viewer")
    listed = client.get(f"/api/v1/providers/{compliant.id}/verification", headers=viewer)
    assert listed.status_code == 200
    statuses = {item["subject"]: item["status"] for item in listed.get_json()["items"]}
    assert (
        statuses["footer"] == "unverified" and statuses[f"licence:{compliant.licences[0].id}"] == "unverified"
    )
    url = f"/api/v1/providers/{compliant.id}/footer/manual"
    form = {
        "footer_text": FOOTER_TEXT,
        "looked_at": LOOKED_AT,
        "screenshot": (io.BytesIO(png_bytes()), "f.png"),
    }
    made = client.post(url, data=form, headers=analyst, content_type="multipart/form-data")
    assert made.status_code == 201, made.get_data(as_text=True)
    body = made.get_json()
    assert body["company_name"] == COMPLIANT and body["manual"]["looked_at"].startswith("2026-12-01T02:15")
    after = client.get(f"/api/v1/providers/{compliant.id}/verification", headers=analyst).get_json()
    assert {item["subject"]: item["status"] for item in after["items"]}["footer"] == "verified_by_hand"
    bad = {"footer_text": "", "looked_at": LOOKED_AT, "screenshot": (io.BytesIO(b"hello"), "f.png")}
    refused = client.post(url, data=bad, headers=analyst, content_type="multipart/form-data")
    assert refused.status_code == 422
    assert {error["field"] for error in refused.get_json()["errors"]} == {"footer_text", "screenshot"}
    assert client.post(url, json={"footer_text": "x"}, headers=analyst).status_code == 415
    assert client.post(url, headers=viewer).status_code == 403
    assert client.get("/api/v1/providers/999999/verification", headers=analyst).status_code == 404
