"""Lookups recorded by hand: screenshot checks, immutable evidence, the manual mark, rules, API and CLI."""

from __future__ import annotations

import hashlib
import io
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from PIL import Image
from sqlmodel import select

from app.core.errors import InvalidInput
from app.credentials import checks, manual_lookups
from app.credentials import lookups as service
from app.models import AuditEntry
from app.models.evidence import Evidence, EvidenceImmutable, Lookup, LookupKind, LookupState
from app.vetting.rules._sources import texts
from tests.credentials.lookups.conftest import LEGAL_NAME

LOOKED_AT = "2026-11-30T10:15"  # display zone (Asia/Shanghai): 02:15 UTC


def png_bytes(size: tuple[int, int] = (64, 40)) -> bytes:
    """A real PNG picture, as a screenshot would be."""
    buffer = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buffer, format="PNG")
    return buffer.getvalue()


def jpeg_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), (10, 120, 10)).save(buffer, format="JPEG")
    return buffer.getvalue()


PDF = b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
LICENCE_FOUND = {
    "kind": "licence",
    "found": "yes",
    "holder_name": LEGAL_NAME,
    "number": "B1-20190001",
    "status": "正常",
    "items": "B11-互联网数据中心业务（含互联网资源协作服务）、B14-互联网接入服务业务",
    "coverage": "北京、上海",
    "issue_date": "2019-05-20",
    "expiry_date": "2029-05-20",
    "looked_at": LOOKED_AT,
    "note": "官方系统连接被拒绝，在浏览器中查询",
}


def _post(client, provider_id, data, screenshot, name="shot.png"):
    form = {**data, "screenshot": (io.BytesIO(screenshot), name)}
    return client.post(
        f"/providers/{provider_id}/lookups/manual", data=form, content_type="multipart/form-data"
    )


# ------------------------------------------------------------------------------------------------ content
def test_the_screenshot_type_comes_from_the_bytes_not_the_name():
    assert manual_lookups.sniff_screenshot(png_bytes()) == "image/png"
    assert manual_lookups.sniff_screenshot(jpeg_bytes()) == "image/jpeg"
    assert manual_lookups.sniff_screenshot(PDF) == "application/pdf"
    assert manual_lookups.sniff_screenshot(b"<html><script>alert(1)</script>") is None
    assert manual_lookups.sniff_screenshot(b"GIF89a......") is None  # images other than PNG/JPEG: no
    with pytest.raises(InvalidInput) as empty:
        manual_lookups.check_screenshot(b"")
    assert empty.value.errors[0].field == "screenshot"
    with pytest.raises(InvalidInput) as large:
        manual_lookups.check_screenshot(png_bytes() + b"\0" * manual_lookups.MAX_SCREENSHOT_BYTES)
    assert "最大 5 MB" in large.value.errors[0].message


# ------------------------------------------------------------------------------------------------ pages
def test_png_upload_is_stored_as_evidence_and_shown_as_manual(lookup_app, login, session, provider):
    analyst = login("analyst", "liwei")
    form = analyst.get(f"/providers/{provider.id}/lookups/manual?kind=licence").get_data(as_text=True)
    assert 'enctype="multipart/form-data"' in form and 'name="screenshot"' in form and "UTC+8" in form
    picture = png_bytes()
    response = _post(analyst, provider.id, LICENCE_FOUND, picture)
    assert response.status_code == 302, response.get_data(as_text=True)[:800]

    lookup = session.exec(select(Lookup).where(Lookup.provider_id == provider.id)).one()
    assert lookup.state == LookupState.manual and lookup.created_by_name == "liwei"
    assert lookup.records[0]["licenceNo"] == "B1-20190001"
    assert lookup.records[0]["businessItems"] == ["B11", "B14"]
    evidence = session.get(Evidence, lookup.result_evidence_id)
    assert evidence.purpose == "lookup_manual" and evidence.method == "MANUAL"
    assert evidence.body == picture and evidence.sha256 == hashlib.sha256(picture).hexdigest()
    assert evidence.content_type == "image/png" and evidence.size == len(picture)
    assert evidence.triggered_by_name == "liwei" and evidence.lookup_id == lookup.id
    assert evidence.extracted["found"] is True and evidence.extracted["filename"] == "shot.png"
    assert evidence.extracted["looked_at"] == "2026-11-30T02:15:00+00:00"
    evidence.body = b"tampered"
    session.add(evidence)
    with pytest.raises(EvidenceImmutable):
        session.commit()
    session.rollback()

    audit = session.exec(select(AuditEntry).where(AuditEntry.entity == "lookup")).one()
    assert audit.entity_id == lookup.id and audit.actor_name == "liwei"
    assert audit.changes["sha256"] == [None, evidence.sha256] and audit.changes["found"] == [None, True]

    page = analyst.get(f"/lookups/{lookup.id}").get_data(as_text=True)
    mark = re.search(r'id="manual-mark"[^>]*>(.*?)</div>', page, re.S).group(1)
    assert "人工记录" in mark and "由 liwei 于 2026-11-30 10:15 UTC+8" in mark
    assert "B1-20190001" in page and "许可证号" in page and "licenceNo" not in page
    assert f'src="/evidence/{evidence.id}/image"' in page and "官方系统连接被拒绝，在浏览器中查询" in page

    image = analyst.get(f"/evidence/{evidence.id}/image")
    assert image.mimetype == "image/png" and image.data == picture
    assert image.headers["X-Content-Type-Options"] == "nosniff"
    assert image.headers["Content-Security-Policy"] == "sandbox; default-src 'none'; img-src 'self'"
    download = analyst.get(f"/evidence/{evidence.id}/download")
    assert download.mimetype == "application/octet-stream"
    assert download.headers["Content-Disposition"].startswith("attachment;")
    detail = analyst.get(f"/evidence/{evidence.id}").get_data(as_text=True)
    assert 'id="evidence-image"' in detail and evidence.sha256 in detail and "人工查询截图" in detail

    lists = analyst.get(f"/providers/{provider.id}/lookups").get_data(as_text=True)
    assert "人工记录" in lists
    tab = analyst.get(f"/providers/{provider.id}/credentials").get_data(as_text=True)
    assert "人工记录" in tab

    analyst.get("/lang/en")
    page = analyst.get(f"/lookups/{lookup.id}").get_data(as_text=True)
    mark = re.search(r'id="manual-mark"[^>]*>(.*?)</div>', page, re.S).group(1)
    assert "Recorded by hand by liwei, who looked at the official site on 2026-11-30 10:15 UTC+8" in mark
    assert "Licence number" in page and "由 liwei" not in page and "人工记录" not in page
    form = analyst.get(f"/providers/{provider.id}/lookups/manual?kind=icp").get_data(as_text=True)
    assert "Operator name" in form and "Filing number" in form and "主办单位名称" not in form


def test_a_text_file_named_png_is_refused_with_a_named_error(lookup_app, login, session, provider):
    analyst = login("analyst")
    data = {**LICENCE_FOUND}
    response = _post(analyst, provider.id, data, b"just some text, not a picture\n", name="result.png")
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    error = re.search(r'id="screenshot-error"[^>]*>([^<]*)<', page).group(1)
    assert "截图须为 PNG、JPEG 图片或 PDF 文件" in error and "与文件名无关" in error
    assert 'value="B1-20190001"' in page  # what was entered is kept
    html = _post(analyst, provider.id, data, b"<html><script>alert(1)</script></html>", name="x.jpg")
    assert html.status_code == 422
    assert session.exec(select(Evidence)).all() == [] and session.exec(select(Lookup)).all() == []

    analyst.get("/lang/en")
    page = _post(analyst, provider.id, data, b"plain text", name="a.png").get_data(as_text=True)
    error = re.search(r'id="screenshot-error"[^>]*>([^<]*)<', page).group(1)
    assert "must be a PNG or JPEG image or a PDF file" in error and "截图" not in error


def test_missing_and_bad_fields_are_named(lookup_app, login, session, provider):
    analyst = login("analyst")
    future = (datetime.now(UTC) + timedelta(days=2)).strftime("%Y-%m-%dT%H:%M")
    data = {"kind": "licence", "found": "maybe", "looked_at": "yesterday"}
    page = _post(analyst, provider.id, data, png_bytes()).get_data(as_text=True)
    for field in ("found", "looked_at"):
        assert f'id="{field}-error"' in page, field
    data = {**LICENCE_FOUND, "holder_name": "", "looked_at": future, "status": "良好"}
    data["expiry_date"] = "2029-13-01"
    response = _post(analyst, provider.id, data, png_bytes())
    page = response.get_data(as_text=True)
    assert response.status_code == 422
    assert re.search(r'id="holder_name-error"[^>]*>必填项<', page)
    assert "查询时间不能晚于现在" in page and "取值无效，可选：正常、撤销" in page
    assert re.search(r'id="expiry_date-error"[^>]*>须为日期，格式 YYYY-MM-DD<', page)
    assert session.exec(select(Lookup)).all() == []


def test_a_pdf_print_is_accepted_and_not_shown_as_a_picture(lookup_app, login, session, provider):
    analyst = login("analyst")
    data = {"kind": "icp", "found": "no", "looked_at": LOOKED_AT}
    response = _post(analyst, provider.id, data, PDF, name="beian.pdf")
    assert response.status_code == 302, response.get_data(as_text=True)[:800]
    lookup = session.exec(select(Lookup)).one()
    evidence = session.get(Evidence, lookup.result_evidence_id)
    assert evidence.content_type == "application/pdf" and lookup.records == []
    page = analyst.get(f"/lookups/{lookup.id}").get_data(as_text=True)
    assert "分析员记录：官方网站没有查到任何记录。" in page and "PDF 打印件" in page
    assert f"/evidence/{evidence.id}/image" not in page
    assert analyst.get(f"/evidence/{evidence.id}/image").status_code == 404  # never served inline
    download = analyst.get(f"/evidence/{evidence.id}/download")
    assert download.mimetype == "application/octet-stream" and download.data == PDF
    assert "sandbox" in download.headers["Content-Security-Policy"]


def test_a_failed_lookup_offers_to_record_by_hand(lookup_app, login, session, provider, fake):
    analyst = login("analyst")
    fake.delays["icp_auth"] = 4.0  # the official system does not answer
    analyst.post(f"/providers/{provider.id}/lookups", data={"kind": "icp"})
    failed = session.exec(select(Lookup)).one()
    assert failed.state == LookupState.failed
    page = analyst.get(f"/lookups/{failed.id}").get_data(as_text=True)
    link = f"/providers/{provider.id}/lookups/manual?kind=icp&amp;replaces={failed.id}"
    assert link in page
    form = analyst.get(link.replace("&amp;", "&")).get_data(as_text=True)
    assert f'name="replaces" value="{failed.id}"' in form and 'id="manual-form-icp"' in form
    data = {
        "kind": "icp",
        "found": "yes",
        "holder_name": LEGAL_NAME,
        "number": "京ICP备19012345号-1",
        "items": "北辰算力",
        "domain": "beichen-gpu.example.cn",
        "looked_at": LOOKED_AT,
        "replaces": str(failed.id),
    }
    assert _post(analyst, provider.id, data, jpeg_bytes(), name="a.jpg").status_code == 302
    manual = session.exec(select(Lookup).where(Lookup.state == LookupState.manual)).one()
    assert manual.captcha_extra["manual"]["replaces"] == failed.id
    assert session.get(Lookup, failed.id).state == LookupState.failed  # the failed one stays as it was
    assert "网站名称" in analyst.get(f"/lookups/{manual.id}").get_data(as_text=True)
    viewer = login("viewer")
    assert viewer.get(f"/providers/{provider.id}/lookups/manual").status_code == 403
    assert _post(viewer, provider.id, data, jpeg_bytes()).status_code == 403


# ------------------------------------------------------------------------------------------------ rules
def _findings(session, provider_id):
    evaluation = checks.evaluate(session, provider_id=provider_id)
    return {finding.rule_id: finding for finding in evaluation.findings}


def test_a_manual_not_found_raises_the_same_red_flag_marked_manual(lookup_app, session, provider, analyst):
    with lookup_app.test_request_context():
        assert "lookup.icp_not_found" not in _findings(session, provider.id)
        manual_lookups.record_manual(
            session,
            provider_id=provider.id,
            kind="icp",
            values={"found": "no", "looked_at": LOOKED_AT},
            screenshot=png_bytes(),
            user=analyst,
        )
        finding = _findings(session, provider.id)["lookup.icp_not_found"]
    # The same rule and severity an automatic "not found" gets (sources.yaml), only marked as manual.
    assert finding.severity.value == texts()["rules"]["lookup.icp_not_found"]["severity"]
    assert "人工记录：analyst1 于 2026-11-30 10:15 UTC+8" in finding.message_zh
    assert "recorded by hand by analyst1 on 2026-11-30 10:15 UTC+8" in finding.message_en
    assert finding.evidence[0]["evidence_id"] is not None
    stored = checks.latest_check(session, provider_id=provider.id)  # the record re-checked the provider
    assert stored is not None and stored.blockers + stored.warnings >= 1


def test_an_automatic_lookup_outranks_a_manual_one(lookup_app, session, provider, analyst, fake):
    with lookup_app.test_request_context():
        manual_lookups.record_manual(
            session,
            provider_id=provider.id,
            kind="icp",
            values={"found": "no", "looked_at": LOOKED_AT},
            screenshot=png_bytes(),
            user=analyst,
        )
        fact = service.lookup_facts(session, provider_id=provider.id, kind=LookupKind.icp)
        assert fact["records"] == [] and fact["manual"]["by"] == "analyst1"
        lookup = service.start_lookup(
            session, provider_id=provider.id, kind="icp", user=analyst, max_failures=3
        )
        session.refresh(lookup)
        service.submit_answer(
            session, lookup_id=lookup.id, answer=str(fake.icp_answer(lookup.captcha_uuid)), user=analyst
        )
        fact = service.lookup_facts(session, provider_id=provider.id, kind=LookupKind.icp)
        assert fact["records"] and "manual" not in fact
        assert "lookup.icp_not_found" not in _findings(session, provider.id)


# ------------------------------------------------------------------------------------------------ API, CLI
def test_api_records_a_lookup_by_hand(lookup_app, session, provider, token_for):
    client = lookup_app.test_client()
    headers = token_for("analyst")
    form = {**LICENCE_FOUND, "screenshot": (io.BytesIO(png_bytes()), "s.png")}
    response = client.post(
        f"/api/v1/providers/{provider.id}/lookups/manual",
        data=form,
        headers=headers,
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.get_data(as_text=True)
    body = response.get_json()
    assert body["state"] == "manual" and body["manual"]["by"] == "api-analyst"
    assert body["records"][0]["licenceNo"] == "B1-20190001"
    assert response.headers["Location"].endswith(f"/api/v1/lookups/{body['id']}")
    assert client.get(response.headers["Location"], headers=headers).get_json()["id"] == body["id"]
    listed = client.get(f"/api/v1/providers/{provider.id}/lookups", headers=headers).get_json()
    assert [item["id"] for item in listed["items"]] == [body["id"]]

    bad = {**LICENCE_FOUND, "screenshot": (io.BytesIO(b"hello"), "s.png")}
    refused = client.post(
        f"/api/v1/providers/{provider.id}/lookups/manual",
        data=bad,
        headers=headers,
        content_type="multipart/form-data",
    )
    assert refused.status_code == 422
    assert refused.get_json()["errors"][0]["field"] == "screenshot"
    as_json = client.post(
        f"/api/v1/providers/{provider.id}/lookups/manual", json=LICENCE_FOUND, headers=headers
    )
    assert as_json.status_code == 415
    viewer = token_for("viewer")
    assert client.post(f"/api/v1/providers/{provider.id}/lookups/manual", headers=viewer).status_code == 403


def test_cli_records_a_lookup_by_hand(lookup_app, session, provider, analyst, tmp_path):
    shot = tmp_path / "licence.png"
    shot.write_bytes(png_bytes())
    runner = lookup_app.test_cli_runner()
    args = ["lookup", "record", str(provider.id), "--kind", "licence", "--not-found"]
    args += ["--screenshot", str(shot), "--looked-at", "2026-11-30 10:15", "--by", "analyst1"]
    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["state"] == "manual" and body["records"] == [] and body["manual"]["by"] == "analyst1"
    evidence = session.get(Evidence, body["result_evidence_id"])
    assert evidence.sha256 == hashlib.sha256(shot.read_bytes()).hexdigest()

    text = tmp_path / "fake.png"
    text.write_text("not a picture")
    bad = runner.invoke(args=[*args[:7], str(text), *args[8:]])
    assert bad.exit_code == 1 and "error: screenshot:" in bad.output


def test_the_report_marks_findings_from_a_manual_lookup(lookup_app, session, provider, analyst):
    from app.credentials import report_exports as reports

    with lookup_app.test_request_context():
        manual_lookups.record_manual(
            session,
            provider_id=provider.id,
            kind="icp",
            values={"found": "no", "looked_at": LOOKED_AT},
            screenshot=png_bytes(),
            user=analyst,
        )
        zh = reports.provider_report_html(
            session, provider_id=provider.id, language="zh", author=reports.Author(None, "测试")
        )
        en = reports.provider_report_html(
            session, provider_id=provider.id, language="en", author=reports.Author(None, "test")
        )
    assert "人工记录：analyst1 于 2026-11-30 10:15 UTC+8" in zh
    assert "recorded by hand by analyst1 on 2026-11-30 10:15 UTC+8" in en and "人工记录" not in en


def test_a_manual_lookup_counts_as_looked_up_for_the_numbers_it_lists(lookup_app, session, provider, analyst):
    from app.credentials.verdicts import verdict_of

    with lookup_app.test_request_context():
        assert "lookup" in verdict_of(session, provider.id).unverified
        # a licence lookup says nothing about the ICP filing: it stays unverified (issue 24)
        manual_lookups.record_manual(
            session,
            provider_id=provider.id,
            kind="licence",
            values={"found": "no", "looked_at": LOOKED_AT},
            screenshot=png_bytes(),
            user=analyst,
        )
        assert "lookup" in verdict_of(session, provider.id).unverified
        manual_lookups.record_manual(
            session,
            provider_id=provider.id,
            kind="icp",
            values={
                "found": "yes",
                "holder_name": LEGAL_NAME,
                "number": "京ICP备19012345号",
                "nature": "企业",
                "looked_at": LOOKED_AT,
            },
            screenshot=png_bytes(),
            user=analyst,
        )
        verdict = verdict_of(session, provider.id)
        assert [item.kind for item in verdict.unverified_items if item.kind != "footer"] == ["credit"]
        (filing,) = [item for item in verdict.items if item.kind == "icp_filing"]
        assert filing.status == "verified_by_hand" and filing.by == "analyst1"


def test_a_nul_character_is_a_field_error_not_a_database_error(lookup_app, login, session, provider):
    analyst = login("analyst")
    data = {**LICENCE_FOUND, "holder_name": "某\x00公司", "note": "a\x00b"}
    response = _post(analyst, provider.id, data, png_bytes())
    assert response.status_code == 422
    page = response.get_data(as_text=True)
    assert re.search(r'id="holder_name-error"[^>]*>不能包含空字符（NUL）<', page)
    assert re.search(r'id="note-error"[^>]*>不能包含空字符（NUL）<', page)
    assert session.exec(select(Lookup)).all() == []
