"""Signed report PDFs (PAdES, pyHanko): pdfsig and pyHanko's validator both find the signature valid, and
broken after one changed byte; the self-signed key is made once (0600) and reused; a PKCS#12 file that does
not open stops start-up, naming the setting and never the passphrase. Both databases."""

from __future__ import annotations

import hashlib
import io
import shutil
import stat
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from app.core.config import Settings
from app.core.signing_keys import SigningKeyError, open_pkcs12
from app.credentials import report_exports as service
from app.models.reports import ExportRecord
from app.registry.providers import create_provider
from app.reports.assemble import snapshot_sha256
from app.reports.render import render_pdf
from app.reports.signing import SELF_SIGNED_FILE, SELF_SIGNED_NOTE, signer_for_settings
from tests.conftest import missing_tool
from tests.registry.conftest import awkward
from tests.reports.conftest import make_inputs, make_meta, needs_poppler, pdf_text

pytestmark = [needs_poppler, pytest.mark.usefixtures("requires_pdfsig")]

AUTHOR = service.Author(id=None, name="审计员")
NOW = datetime(2026, 3, 2, 6, 30, tzinfo=UTC)
VALID = "Signature Validation: Signature is Valid."
BROKEN = "Signature Validation: Digest Mismatch."
PASSPHRASE = "correct horse 电池 staple"
USAGES = (
    "digital_signature",
    "content_commitment",
    "key_encipherment",
    "data_encipherment",
    "key_agreement",
    "key_cert_sign",
    "crl_sign",
    "encipher_only",
    "decipher_only",
)


@pytest.fixture
def requires_pdfsig() -> None:
    """poppler-utils' pdfsig checks the signatures; scripts/install.sh installs poppler-utils."""
    if not shutil.which("pdfsig"):
        missing_tool("poppler-utils (pdfsig) is not installed")


@pytest.fixture
def signing_app(app):
    """The app with GPUVET_SIGN_REPORTS on and no PKCS#12 configured (the self-signed key)."""
    app.config["GPUVET_SETTINGS"] = app.config["GPUVET_SETTINGS"].model_copy(update={"sign_reports": True})
    return app


def pdfsig(data: bytes, folder: Path) -> str:
    """What `pdfsig` says about the PDF's signatures."""
    path = folder / "signed.pdf"
    path.write_bytes(data)
    done = subprocess.run(["pdfsig", str(path)], capture_output=True, text=True, timeout=60, check=False)
    return done.stdout + done.stderr


def pyhanko_status(data: bytes, root: Any) -> Any:
    """pyHanko's validation of the PDF's one signature, trusting `root` (a cryptography certificate)."""
    from asn1crypto import x509
    from cryptography.hazmat.primitives.serialization import Encoding
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko_certvalidator import ValidationContext

    signatures = PdfFileReader(io.BytesIO(data)).embedded_signatures
    assert len(signatures) == 1
    trusted = x509.Certificate.load(root.public_bytes(Encoding.DER))
    status = validate_pdf_signature(signatures[0], ValidationContext(trust_roots=[trusted]))
    return status, signatures[0]


def one_byte_changed(data: bytes) -> bytes:
    """The PDF with one byte of its first content stream (inside the signed range) changed."""
    position = data.index(b"stream\n") + len(b"stream\n") + 20
    changed = bytearray(data)
    changed[position] ^= 0x01
    return bytes(changed)


def assert_signed_and_tamper_evident(data: bytes, root: Any, folder: Path, *, self_signed: bool) -> None:
    """pdfsig and pyHanko: valid and covering the whole file; after one changed byte, both say broken."""
    report = pdfsig(data, folder)
    assert VALID in report, report
    assert "Signature Type: ETSI.CAdES.detached" in report and "Total document signed" in report, report
    status, signature = pyhanko_status(data, root)
    assert status.intact and status.valid and status.trusted and status.bottom_line
    assert status.coverage.name == "ENTIRE_FILE"
    assert (SELF_SIGNED_NOTE in str(signature.sig_object["/Reason"])) is self_signed

    changed = one_byte_changed(data)
    report = pdfsig(changed, folder)
    assert BROKEN in report and VALID not in report, report
    status, _signature = pyhanko_status(changed, root)
    assert not status.intact and not status.bottom_line


def self_signed_certificate(instance: Path) -> Any:
    return open_pkcs12((instance / SELF_SIGNED_FILE).read_bytes(), None, source="test").certificate


def test_exported_report_downloads_signed_and_a_changed_byte_breaks_it(signing_app, login, session, tmp_path):
    provider = create_provider(session, data=awkward())
    analyst = login("analyst")
    assert analyst.post(f"/providers/{provider.id}/reports", data={"lang": "zh"}).status_code in (302, 303)
    record = session.exec(select(ExportRecord)).one()
    download = analyst.get(f"/reports/{record.id}.pdf")
    assert download.status_code == 200 and download.data == record.pdf_bytes
    assert (
        record.sha256 == hashlib.sha256(record.pdf_bytes).hexdigest() == download.headers["X-Report-SHA256"]
    )
    assert record.size_bytes == len(record.pdf_bytes) and record.inputs_sha256 == snapshot_sha256(
        record.inputs_json["inputs"]
    )
    assert record.number in pdf_text(record.pdf_bytes, first=1, last=1)

    instance = Path(signing_app.config["GPUVET_SETTINGS"].instance_path)
    assert signer_for_settings(signing_app.config["GPUVET_SETTINGS"]).self_signed
    report = pdfsig(record.pdf_bytes, tmp_path)
    assert "Signer Certificate Common Name: gpuvet report signing (self-signed)" in report, report
    assert_signed_and_tamper_evident(
        record.pdf_bytes, self_signed_certificate(instance), tmp_path, self_signed=True
    )


def test_self_signed_key_is_made_once_private_and_reused_for_the_case_report(
    signing_app, session, renderer, tmp_path
):
    provider = create_provider(session, data=awkward())
    unsigned = service.export_provider_report(
        session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
    )
    instance = Path(signing_app.config["GPUVET_SETTINGS"].instance_path)
    key_file = instance / SELF_SIGNED_FILE
    assert pdfsig(unsigned.pdf_bytes, tmp_path).count("Signature #") == 0  # outside the app: unsigned
    assert not key_file.exists()

    with signing_app.app_context():
        signed = service.export_provider_report(
            session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
        )
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    key_bytes = key_file.read_bytes()
    assert signed.inputs_sha256 == unsigned.inputs_sha256  # the snapshot's hash is the same, signed or not
    assert signed.sha256 == hashlib.sha256(signed.pdf_bytes).hexdigest() and service.verify_export(signed)
    assert VALID in pdfsig(signed.pdf_bytes, tmp_path)

    if not service.cases_available():
        return
    from app.cases import cases
    from tests.cases.conftest import example

    case = cases.create_case(session, answers=example("interactive_inference"), owner=cases.Actor(None, "t"))
    with signing_app.app_context():
        case_record = service.export_case_report(
            session, case_id=case.id, language="en", author=AUTHOR, renderer=renderer, now=NOW
        )
    assert key_file.read_bytes() == key_bytes  # reused, not made again
    certificate = self_signed_certificate(instance)
    _status, first = pyhanko_status(signed.pdf_bytes, certificate)
    _status, second = pyhanko_status(case_record.pdf_bytes, certificate)
    assert first.signer_cert.dump() == second.signer_cert.dump()
    assert_signed_and_tamper_evident(case_record.pdf_bytes, certificate, tmp_path, self_signed=True)


def organisation_pkcs12(passphrase: str) -> tuple[bytes, Any]:
    """A PKCS#12 file (encrypted with `passphrase`) for a certificate a test CA issued; and that CA."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12
    from cryptography.x509.oid import NameOID

    def name(text: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])

    now = datetime.now(UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())

    def certificate(subject: str, public_key: Any, ca: bool) -> x509.Certificate:
        usage = dict.fromkeys(USAGES, False) | {"key_cert_sign": ca, "crl_sign": ca}
        usage |= {"digital_signature": not ca, "content_commitment": not ca}
        return (
            x509.CertificateBuilder()
            .subject_name(name(subject))
            .issuer_name(name("Test Root CA"))
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(days=1))
            .not_valid_after(now + timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(**usage), critical=True)
            .sign(ca_key, hashes.SHA256())
        )

    root = certificate("Test Root CA", ca_key.public_key(), True)
    leaf = certificate("示例采购部 Procurement", key.public_key(), False)
    data = pkcs12.serialize_key_and_certificates(
        b"org", key, leaf, [root], BestAvailableEncryption(passphrase.encode())
    )
    return data, root


def test_organisation_certificate_signs_a_report_and_is_not_self_signed(renderer, tmp_path, caplog):
    data, root = organisation_pkcs12(PASSPHRASE)
    path = tmp_path / "org.p12"
    path.write_bytes(data)
    settings = Settings(
        GPUVET_INSTANCE_PATH=tmp_path / "instance",
        GPUVET_SIGNING_PKCS12=path,
        GPUVET_SIGNING_PKCS12_PASSPHRASE=PASSPHRASE,
    )
    caplog.set_level("DEBUG")
    signer = signer_for_settings(settings)
    assert not signer.self_signed and not (tmp_path / "instance" / SELF_SIGNED_FILE).exists()
    pdf = render_pdf(renderer, "provider", make_inputs(), make_meta(), "zh")
    signed = signer.sign(pdf.data, purpose="gpuvet report GV-2026-000123")
    assert signed.startswith(pdf.data)  # an incremental update: the report's own bytes stay as rendered
    assert "示例采购部 Procurement" in pdfsig(signed, tmp_path)
    assert_signed_and_tamper_evident(signed, root, tmp_path, self_signed=False)
    assert PASSPHRASE not in caplog.text


def test_a_pkcs12_that_does_not_open_stops_start_up_naming_the_setting(tmp_path):
    data, _root = organisation_pkcs12(PASSPHRASE)
    path = tmp_path / "org.p12"
    path.write_bytes(data)
    instance = tmp_path / "instance"
    cases = {
        "GPUVET_SIGNING_PKCS12_PASSPHRASE": dict(GPUVET_SIGNING_PKCS12_PASSPHRASE="wrong " + PASSPHRASE),
        "GPUVET_SIGNING_PKCS12_PASSPHRASE ": {},  # a passphrase is needed and none is set
        "GPUVET_SIGNING_PKCS12：": dict(GPUVET_SIGNING_PKCS12=tmp_path / "missing.p12"),
    }
    for setting, overrides in cases.items():
        values = {"GPUVET_INSTANCE_PATH": instance, "GPUVET_SIGNING_PKCS12": path, **overrides}
        with pytest.raises(SigningKeyError) as raised:
            Settings(**values)
        message = str(raised.value)
        assert message.startswith(setting.strip()), message
        assert PASSPHRASE not in message and "wrong" not in message

    not_pkcs12 = tmp_path / "cert.pem"
    not_pkcs12.write_bytes(b"-----BEGIN CERTIFICATE-----\nnot one\n-----END CERTIFICATE-----\n")
    with pytest.raises(SigningKeyError, match=r"GPUVET_SIGNING_PKCS12_PASSPHRASE .*cert\.pem"):
        Settings(GPUVET_INSTANCE_PATH=instance, GPUVET_SIGNING_PKCS12=not_pkcs12)
    assert not instance.exists()  # nothing was made: start-up stopped first


def test_wrong_passphrase_stops_flask_start_up(tmp_path):
    data, _root = organisation_pkcs12(PASSPHRASE)
    path = tmp_path / "org.p12"
    path.write_bytes(data)
    env = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "GPUVET_INSTANCE_PATH": str(tmp_path / "instance"),
        "GPUVET_SIGNING_PKCS12": str(path),
        "GPUVET_SIGNING_PKCS12_PASSPHRASE": "not the passphrase",
    }
    done = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "report", "--help"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert (
        "SigningKeyError: GPUVET_SIGNING_PKCS12_PASSPHRASE" in output and "not the passphrase" not in output
    )
