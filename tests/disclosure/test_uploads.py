"""Questionnaire uploads: real PDF/PNG/JPEG only, no scripts or polyglots; kept as evidence, served safely."""

from __future__ import annotations

import hashlib

import pytest
from sqlmodel import Session, select

from app.core.errors import InvalidInput
from app.disclosure import uploads as disclosure_uploads
from app.models.disclosure import DisclosureUpload, InvitationEvent
from app.models.evidence import Evidence, EvidenceImmutable
from tests.disclosure import samples

# Storage matters in only some tests; the others run on SQLite alone (PostgreSQL adds seconds per test).
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

LIMIT = 10 * 1024 * 1024


def refusal(data: bytes) -> str:
    """The message a refused file gets (fails the test when the file is accepted)."""
    with pytest.raises(InvalidInput) as caught:
        disclosure_uploads.check(data, field="licences.0.scan_upload_id", max_bytes=LIMIT)
    assert caught.value.errors[0].field == "licences.0.scan_upload_id"
    return caught.value.errors[0].message


@pytest.mark.parametrize(
    ("make", "media_type"),
    [(samples.png, "image/png"), (samples.jpeg, "image/jpeg"), (samples.pdf, "application/pdf")],
)
def test_real_files_are_accepted_by_their_content(make, media_type):
    assert disclosure_uploads.check(make(), field="f", max_bytes=LIMIT).media_type == media_type


def test_a_wrong_type_renamed_to_pdf_is_refused_by_content():
    html = b"<!doctype html><html><body><script>alert(1)</script></body></html>"
    assert "只接受 PDF、PNG 或 JPEG" in refusal(html)
    assert "只接受 PDF、PNG 或 JPEG" in refusal(b"GIF89a" + b"\x00" * 64)  # a GIF is no scan we accept
    assert "只接受 PDF、PNG 或 JPEG" in refusal(b"MZ\x90\x00" + b"\x00" * 64)  # a Windows program


def test_an_oversized_file_is_refused_before_anything_else():
    big = samples.png() + b"\x00" * 64
    with pytest.raises(InvalidInput) as caught:
        disclosure_uploads.check(big, field="f", max_bytes=len(big) - 1)
    assert "文件过大" in caught.value.errors[0].message


@pytest.mark.parametrize(
    "make",
    [
        samples.pdf_with_open_action_js,  # /OpenAction -> /S /JavaScript
        samples.pdf_with_page_aa,  # a page's /AA launching a program
        samples.pdf_with_escaped_js,  # /J#61vaScript spelled with # escapes
        samples.pdf_with_js_in_object_stream,  # the script inside a compressed object stream
    ],
)
def test_pdfs_with_javascript_or_automatic_actions_are_refused(make):
    assert "JavaScript" in refusal(make())


def test_the_object_stream_script_is_found_by_walking_the_objects_not_by_a_byte_search():
    data = samples.pdf_with_js_in_object_stream()
    assert b"/JavaScript" not in data and b"/JS" not in data
    assert "JavaScript" in refusal(data)


@pytest.mark.parametrize(
    "data",
    [
        samples.png() + b"%PDF-1.4\n1 0 obj << >> endobj\n%%EOF",  # a PNG that is also a PDF
        samples.jpeg() + b"<html><script>alert(1)</script></html>",  # a JPEG carrying a page
        samples.pdf().replace(b"%%EOF", b"<script>alert(1)</script>\n%%EOF"),  # a PDF carrying a script
        samples.png() + b"trailing bytes after IEND",  # anything after a PNG's end
    ],
)
def test_polyglots_are_refused(data):
    message = refusal(data)
    assert "多格式混合" in message


def test_a_picture_that_does_not_decode_is_refused():
    broken = samples.png()[:40] + b"\x00" * 40 + samples.png()[-12:]
    assert "图片已损坏" in refusal(broken)


def test_thumbnails_are_re_encoded_pngs_of_the_pixels_only():
    thumb = disclosure_uploads.thumbnail_bytes(samples.jpeg((1200, 800)))
    assert thumb is not None and thumb.startswith(b"\x89PNG")
    assert disclosure_uploads.thumbnail_bytes(samples.pdf()) is None


def _post(client, token: str, files: dict[str, tuple[bytes, str]], **fields: str):
    import io

    data: dict[str, object] = {"identity.legal_name": "示例披露算力科技有限公司", "action": "save", **fields}
    for key, (content, name) in files.items():
        data[key + "__file"] = (io.BytesIO(content), name)
    return client.post(f"/d/{token}", data=data, content_type="multipart/form-data")


def test_an_upload_becomes_immutable_evidence_served_only_as_an_attachment(app, client_for_uploads):
    client, session, _invitation, token = client_for_uploads
    scan = samples.png()
    response = _post(client, token, {"licences.0.scan_upload_id": (scan, "../../许可证.png")})
    assert response.status_code == 200
    upload = session.exec(select(DisclosureUpload)).one()
    evidence = session.get(Evidence, upload.evidence_id)
    assert (evidence.purpose, evidence.content_type, evidence.size) == ("disclosure", "image/png", len(scan))
    assert evidence.sha256 == hashlib.sha256(scan).hexdigest() and evidence.body == scan
    assert upload.field == "licences.0.scan_upload_id" and upload.filename == "许可证.png"
    assert f'name="licences.0.scan_upload_id" value="{upload.id}"' in response.get_data(as_text=True)

    download = client.get(f"/d/{token}/files/{upload.id}")
    assert download.status_code == 200 and download.data == scan
    assert download.headers["Content-Disposition"].startswith("attachment;")
    assert download.mimetype == "application/octet-stream"
    assert download.headers["Content-Security-Policy"] == "sandbox; default-src 'none'"
    assert download.headers["X-Content-Type-Options"] == "nosniff"
    thumb = client.get(f"/d/{token}/files/{upload.id}/thumb")
    assert thumb.mimetype == "image/png" and thumb.data.startswith(b"\x89PNG")
    assert thumb.headers["Content-Security-Policy"] == "sandbox; default-src 'none'; img-src 'self'"

    evidence.body = b"changed"
    with pytest.raises(EvidenceImmutable):
        session.commit()
    session.rollback()


@SQLITE_ONLY
def test_a_refused_upload_is_named_next_to_its_field_and_stores_nothing(app, client_for_uploads):
    client, session, _invitation, token = client_for_uploads
    response = _post(
        client, token, {"topology.diagram_upload_id": (samples.pdf_with_open_action_js(), "拓扑.pdf")}
    )
    html = response.get_data(as_text=True)
    assert 'id="topology-diagram_upload_id-error">PDF 含有 JavaScript' in html
    assert session.exec(select(Evidence)).first() is None
    kinds = [event.kind for event in session.exec(select(InvitationEvent)).all()]
    assert "upload_refused" in kinds


@SQLITE_ONLY
def test_files_are_served_only_to_their_own_invitation(app, client_for_uploads):
    client, session, _invitation, token = client_for_uploads
    _post(client, token, {"licences.0.scan_upload_id": (samples.pdf(), "scan.pdf")})
    upload = session.exec(select(DisclosureUpload)).one()
    _other, other_token = samples.invite(session, legal_name="另一家算力有限公司")
    assert client.get(f"/d/{other_token}/files/{upload.id}").status_code == 404
    assert client.get(f"/d/not-a-token/files/{upload.id}").status_code == 404
    assert client.get(f"/d/{token}/files/{upload.id}/thumb").status_code == 404  # a PDF has no thumbnail


@pytest.fixture
def client_for_uploads(app):
    """A test client, a session, and a fresh invitation with its token."""
    with Session(app.extensions["gpuvet.engine"], expire_on_commit=False) as session:
        with app.app_context():  # not kept: requests must get their own context (locale, g)
            invitation, token = samples.invite(session)
        yield app.test_client(), session, invitation, token
