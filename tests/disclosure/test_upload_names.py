"""File names sent with uploads are cleaned (controls, invisible characters, paths, length) on every path."""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session, select

from app.core.request_files import MAX_FILENAME, clean_filename
from app.models.disclosure import DisclosureUpload
from app.models.uploads import ImportUpload
from tests.disclosure import samples

BOUNDARY = "gpuvet-test-boundary"
# A raw CR or LF would end the multipart header itself; browsers escape them (see the cases below).
HOSTILE = "许可证\x00扫描\x1b件\u202egnp.exe\u2028.png"


def multipart(fields: dict[str, str], field: str, filename: str, content: bytes) -> bytes:
    """A multipart body with the file name written byte for byte (a test client would clean it first)."""
    parts = [
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    head = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{field}"; filename="{filename}"\r\n'
    parts.append(head.encode() + b"Content-Type: application/octet-stream\r\n\r\n" + content + b"\r\n")
    return b"".join(parts) + f"--{BOUNDARY}--\r\n".encode()


def post(client, url: str, body: bytes):
    return client.post(url, data=body, content_type=f"multipart/form-data; boundary={BOUNDARY}")


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("C:\\scans\\许可证.pdf", "许可证.pdf"),
        ("../../etc/passwd", "passwd"),
        ("a\x00b\x7f\x85c.png", "abc.png"),
        ("line\r\nbreak\u2028.png", "linebreak.png"),
        ("invoice\u202efdp.exe", "invoicefdp.exe"),  # the right-to-left override that disguises .exe
        ("  spaced \t name  .png ", "spaced name .png"),
        ("\x00\x01", "upload"),
        ("", "upload"),
        (None, "upload"),
    ],
)
def test_clean_filename(sent, kept):
    assert clean_filename(sent) == kept


def test_a_long_name_is_cut_keeping_its_extension():
    cleaned = clean_filename("扫" * 500 + ".jpeg")
    assert len(cleaned) == MAX_FILENAME and cleaned.endswith("扫.jpeg")


def test_a_questionnaire_upload_with_control_characters_in_its_name_is_kept_cleaned(app):
    with Session(app.extensions["gpuvet.engine"], expire_on_commit=False) as session:
        with app.app_context():
            _invitation, token = samples.invite(session)
        fields = {"identity.legal_name": "示例披露算力科技有限公司", "action": "save"}
        body = multipart(fields, "licences.0.scan_upload_id__file", HOSTILE, samples.png())
        response = post(app.test_client(), f"/d/{token}", body)
        assert response.status_code == 200
        assert session.exec(select(DisclosureUpload.filename)).one() == "许可证扫描件gnp.exe.png"


def test_an_import_file_with_control_characters_in_its_name_is_kept_cleaned(login, session):
    rows = [{"legal_name": "示例名称清理算力有限公司"}]
    body = multipart({}, "file", "providers\x00\x1f.json", json.dumps(rows).encode())
    response = post(login("analyst"), "/transfer/import", body)
    assert response.status_code == 200
    assert session.exec(select(ImportUpload.filename)).one() == "providers.json"
