"""Questionnaire uploads are kept once: a field's new file replaces its old one, the same bytes are stored
once per invitation, and an invitation keeps at most a quota of files and bytes."""

from __future__ import annotations

import io

import pytest
from sqlmodel import Session, func, select

from app.core.errors import InvalidInput
from app.disclosure import uploads as disclosure_uploads
from app.models.disclosure import DisclosureUpload
from app.models.evidence import Evidence
from tests.disclosure import samples

# Storage matters in only some tests; the others run on SQLite alone (PostgreSQL adds seconds per test).
SQLITE_ONLY = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

LICENCE = "licences.0.scan_upload_id"
CERTIFICATE = "certifications.0.scan_upload_id"
DIAGRAM = "topology.diagram_upload_id"


@pytest.fixture
def invited(app):
    """A test client, a session, and a fresh invitation with its token."""
    with Session(app.extensions["gpuvet.engine"], expire_on_commit=False) as session:
        with app.app_context():  # not kept: requests must get their own context (locale, g)
            invitation, token = samples.invite(session)
        yield app.test_client(), session, invitation, token


def save(client, token: str, files: dict[str, bytes], **fields: str):
    """Save the draft with these files (field -> bytes) and fields."""
    data: dict[str, object] = {"identity.legal_name": "示例披露算力科技有限公司", "action": "save", **fields}
    for key, content in files.items():
        data[key + "__file"] = (io.BytesIO(content), "scan.png")
    response = client.post(f"/d/{token}", data=data, content_type="multipart/form-data")
    assert response.status_code == 200
    return response


def stored(session: Session) -> tuple[int, int, int]:
    """(uploads, evidence rows, evidence bytes) in the database."""
    session.expire_all()
    uploads = session.exec(select(func.count()).select_from(DisclosureUpload)).one()
    evidence, size = session.exec(select(func.count(), func.coalesce(func.sum(Evidence.size), 0))).one()
    return uploads, evidence, size


def test_saving_the_same_file_again_and_again_keeps_one_copy(invited):
    client, session, _invitation, token = invited
    scan = samples.png((300, 200))
    for _ in range(12):
        save(client, token, {LICENCE: scan})
    assert stored(session) == (1, 1, len(scan))


@SQLITE_ONLY
def test_bytes_already_kept_are_not_checked_again(invited, monkeypatch):
    client, session, _invitation, token = invited
    scan = samples.png((300, 200))
    save(client, token, {LICENCE: scan})

    def no_second_check(*args, **kwargs):
        raise AssertionError("checked again")

    monkeypatch.setattr(disclosure_uploads, "check", no_second_check)
    html = save(client, token, {LICENCE: scan, CERTIFICATE: scan}).get_data(as_text=True)
    assert "checked again" not in html
    assert stored(session) == (2, 1, len(scan))


def test_a_new_file_for_a_field_replaces_the_old_one_and_its_bytes(invited):
    client, session, _invitation, token = invited
    save(client, token, {LICENCE: samples.png(colour="teal")})
    old_id = session.exec(select(DisclosureUpload.id)).one()
    newer = samples.png(colour="orange")
    html = save(client, token, {LICENCE: newer}, **{LICENCE: str(old_id)}).get_data(as_text=True)
    upload = session.exec(select(DisclosureUpload)).one()
    assert upload.id != old_id and f'name="{LICENCE}" value="{upload.id}"' in html
    assert stored(session) == (1, 1, len(newer))
    assert client.get(f"/d/{token}/files/{old_id}").status_code == 404
    assert client.get(f"/d/{token}/files/{upload.id}").data == newer


@SQLITE_ONLY
def test_the_same_bytes_in_two_fields_are_stored_once(invited):
    client, session, _invitation, token = invited
    scan = samples.png()
    save(client, token, {LICENCE: scan, CERTIFICATE: scan})
    assert stored(session) == (2, 1, len(scan))
    save(client, token, {LICENCE: samples.jpeg()})  # the certificate still points at the bytes
    assert stored(session)[:2] == (2, 2)
    certificate = session.exec(select(DisclosureUpload).where(DisclosureUpload.field == CERTIFICATE)).one()
    assert client.get(f"/d/{token}/files/{certificate.id}").data == scan


def test_uploads_stop_at_the_file_quota_with_a_message_at_the_field(app, invited):
    client, session, _invitation, token = invited
    settings = app.config["GPUVET_SETTINGS"]
    app.config["GPUVET_SETTINGS"] = settings.model_copy(update={"disclosure_upload_max_files": 2})
    save(client, token, {LICENCE: samples.png(colour="red"), CERTIFICATE: samples.png(colour="blue")})
    html = save(client, token, {DIAGRAM: samples.png(colour="green")}).get_data(as_text=True)
    assert 'id="topology-diagram_upload_id-error">已达到本问卷的上传上限（最多 2 个文件' in html
    assert stored(session)[:2] == (2, 2)
    save(client, token, {LICENCE: samples.png(colour="white")})  # replacing stays within the quota
    assert stored(session)[:2] == (2, 2)


@SQLITE_ONLY
def test_the_byte_quota_counts_distinct_files_and_what_a_replacement_frees(app, session):
    first, second = samples.png(colour="red"), samples.png((80, 60), colour="blue")
    quota = disclosure_uploads.Quota(files=10, total_bytes=len(first) + len(second) - 1)

    def keep(invitation, field: str, data: bytes) -> DisclosureUpload:
        checked = disclosure_uploads.check(data, field=field, max_bytes=1 << 20)
        return disclosure_uploads.store(
            session, invitation, field=field, filename="x.png", checked=checked, quota=quota
        )

    with app.app_context():
        invitation, _token = samples.invite(session)
        keep(invitation, LICENCE, first)
        keep(invitation, CERTIFICATE, first)  # the same bytes again cost nothing
        for field in (DIAGRAM, LICENCE):  # the certificate still holds the first file
            with pytest.raises(InvalidInput) as caught:
                keep(invitation, field, second)
            assert caught.value.errors[0].field == field
        other, _token = samples.invite(session, legal_name="另一家算力有限公司")
        keep(other, LICENCE, first)
        keep(other, LICENCE, second)  # the replaced file's bytes no longer count
        session.commit()
    assert stored(session) == (3, 2, len(first) + len(second))
