"""The signed decision document (采购决定书): what it prints (chosen provider, hashes, conditions, the
comparison), that it is always signed (pdfsig and pyHanko: valid, broken after one changed byte), that it
says when the certificate is self-signed, and that a download of an unchanged decision gives the same file."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from app.cases import decision_document as document
from app.cases import decisions as service
from app.core.errors import InvalidInput, NotFound
from app.credentials.report_exports import Author
from app.models.reports import ExportRecord
from app.reports.assemble import snapshot_sha256
from app.reports.pdf import renderer_for_settings
from tests.cases.test_decisions import NAMES, actor, body, quote, world  # noqa: F401 - fixture (arranged)
from tests.reports.conftest import needs_poppler, pdf_text, requires_poppler  # noqa: F401 - fixture
from tests.reports.test_signing import (
    assert_signed_and_tamper_evident,
    pdfsig,
    requires_pdfsig,  # noqa: F401 - fixture
    self_signed_certificate,
)

pytestmark = [needs_poppler, pytest.mark.usefixtures("requires_pdfsig")]

AUTHOR = Author(id=None, name="审计员")


@pytest.fixture
def arranged(request) -> dict[str, Any]:
    """tests.cases.test_decisions' world: a case, three providers with one offer each, people of each role."""
    return request.getfixturevalue("world")


def decided(
    session, arranged: dict[str, Any], chosen: int, *, approve: bool = True, comment: str = ""
) -> Any:
    """Three quotes; the analyst proposes provider `chosen`'s offer; the approver approves it if `approve`."""
    for index, price in enumerate((9.5, 12.0, 14.0)):
        quote(session, arranged, index, price=price)
    data = body(arranged, chosen)
    decision = service.propose(session, case_id=arranged["case"].id, data=data, actor=arranged["analyst"])
    if not approve:
        return decision
    approver = actor(arranged, "approver")
    return service.approve(session, decision_id=decision.id, actor=approver, comment=comment)


@pytest.fixture
def approved(session, arranged) -> Any:
    """The first provider's offer, proposed and approved with a comment."""
    return decided(session, arranged, 0, comment="同意，按条件执行")


def export(app, session, decision_id: int, language: str = "zh") -> ExportRecord:
    renderer = renderer_for_settings(app.config["GPUVET_SETTINGS"])
    with app.app_context():
        return document.export_decision(
            session, decision_id=decision_id, language=language, author=AUTHOR, renderer=renderer
        )


def test_the_document_names_the_chosen_provider_and_the_snapshot_hash(app, session, arranged, approved):
    record = export(app, session, approved.id)
    text = pdf_text(record.pdf_bytes)
    flat = "".join(text.split())  # pdftotext breaks long hashes and names across lines
    assert len(approved.snapshot_sha256) == 64 and approved.snapshot_sha256 in flat
    assert record.number in flat and NAMES[0] in flat
    assert "交付后30天内复测内网带宽" in flat and "2027-03-01" in flat  # the condition and its due date
    assert "approver-user" in flat and "analyst-user" in flat  # approver and proposer
    assert "同意，按条件执行" in flat and "已批准" in flat
    # the comparison: all three quoting providers, the chosen one marked
    assert all(name in flat for name in NAMES) and "✔选定" in flat
    assert "自签名证书" in flat  # the self-signed key (no PKCS#12 configured) is said to be self-signed
    assert record.kind == "decision" and record.subject_id == approved.id
    assert record.sha256 == hashlib.sha256(record.pdf_bytes).hexdigest()
    assert record.inputs_sha256 == snapshot_sha256(record.inputs_json["inputs"])


def test_the_english_document_is_in_english(app, session, arranged, approved):
    flat = "".join(pdf_text(export(app, session, approved.id, "en").pdf_bytes).split())
    assert "GPUProcurementDecision" in flat and "Approvedby" in flat and "Self-signedcertificate" in flat
    assert "Evidencesnapshot" in flat and approved.snapshot_sha256 in flat
    assert "已批准" not in flat and "提出人" not in flat


def test_the_document_is_signed_even_with_report_signing_off(app, session, arranged, approved, tmp_path):
    assert not app.config["GPUVET_SETTINGS"].sign_reports
    record = export(app, session, approved.id)
    report = pdfsig(record.pdf_bytes, tmp_path)
    assert "Signature is Valid." in report, report
    instance = Path(app.config["GPUVET_SETTINGS"].instance_path)
    assert_signed_and_tamper_evident(
        record.pdf_bytes, self_signed_certificate(instance), tmp_path, self_signed=True
    )


def test_a_proposed_decision_says_it_is_not_approved(app, session, arranged):
    decision = decided(session, arranged, 1, approve=False)
    flat = "".join(pdf_text(export(app, session, decision.id).pdf_bytes).split())
    assert "本决定尚未批准" in flat and "尚未审批" in flat and NAMES[1] in flat


def test_downloading_again_gives_the_same_numbered_file_until_the_decision_changes(app, session, arranged):
    decision = decided(session, arranged, 2, approve=False)
    renderer = renderer_for_settings(app.config["GPUVET_SETTINGS"])

    def download(language: str = "zh") -> ExportRecord:
        with app.app_context():
            return document.decision_pdf(
                session, decision_id=decision.id, language=language, author=AUTHOR, renderer=renderer
            )

    first = download()
    assert download().number == first.number  # unchanged: the same signed file
    assert download("en").number != first.number  # another language is its own document
    service.approve(session, decision_id=decision.id, actor=actor(arranged, "approver"))
    after = download()
    assert after.number != first.number  # approved since: a new document
    assert "approver-user" in "".join(pdf_text(after.pdf_bytes).split())
    assert len(session.exec(select(ExportRecord)).all()) == 3


def test_a_missing_decision_or_a_bad_language_is_refused(app, session, arranged, approved):
    with pytest.raises(NotFound):
        export(app, session, 999_999)
    with pytest.raises(InvalidInput) as excinfo:
        export(app, session, approved.id, "fr")
    assert excinfo.value.errors[0].field == "lang"
