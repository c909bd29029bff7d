"""PAdES signatures on PDFs with the organisation's key (or one self-signed key made once), via pyHanko.

pyHanko is imported when a signer is first made: pages and commands that never sign do not load it.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import logging
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from app.core.config import read_or_create_secret
from app.core.signing_keys import SigningKey, configured_key, new_self_signed_pkcs12, open_pkcs12
from app.reports.pdf import RenderedPdf

logger = logging.getLogger(__name__)

SELF_SIGNED_FILE = "signing_self_signed.p12"  # under the instance folder, mode 0600, no passphrase
FIELD_NAME = "gpuvet"
DIGEST = "sha256"
SELF_SIGNED_NOTE = "self-signed certificate, not issued by a certificate authority"


def self_signed_key(instance_path: Path) -> SigningKey:
    """The installation's self-signed key: made once into the instance folder (0600), then reused."""
    path = Path(instance_path) / SELF_SIGNED_FILE
    return open_pkcs12(read_or_create_secret(path, new_self_signed_pkcs12), None, source=str(path))


def _pyhanko_signer(key: SigningKey) -> Any:
    """A pyHanko SimpleSigner that signs with the key already loaded.

    pyHanko's own sign_raw reads the key back from DER for every signature, which for RSA re-checks the
    primes (about 0.15 s); RSA PKCS#1 v1.5 and ECDSA signatures here use the loaded key instead.
    """
    from cryptography.hazmat.primitives.asymmetric.ec import ECDSA
    from cryptography.hazmat.primitives.asymmetric.padding import PKCS1v15
    from pyhanko.keys.internal import (
        translate_pyca_cryptography_cert_to_asn1,
        translate_pyca_cryptography_key_to_asn1,
    )
    from pyhanko.sign.signers import SimpleSigner
    from pyhanko_certvalidator.registry import SimpleCertificateStore
    from pyhanko_certvalidator.util import get_pyca_cryptography_hash

    class LoadedKeySigner(SimpleSigner):
        def sign_raw(self, data: bytes, digest_algorithm: str) -> bytes:
            mechanism = self.get_signature_mechanism_for_digest(digest_algorithm).signature_algo
            digest = get_pyca_cryptography_hash(digest_algorithm)
            if mechanism == "rsassa_pkcs1v15":
                return key.private_key.sign(data, PKCS1v15(), digest)
            if mechanism == "ecdsa":
                return key.private_key.sign(data, ECDSA(digest))
            return super().sign_raw(data, digest_algorithm)

    registry = SimpleCertificateStore()
    registry.register_multiple(translate_pyca_cryptography_cert_to_asn1(cert) for cert in key.chain)
    return LoadedKeySigner(
        signing_cert=translate_pyca_cryptography_cert_to_asn1(key.certificate),
        signing_key=translate_pyca_cryptography_key_to_asn1(key.private_key),
        cert_registry=registry,
    )


class PdfSigner:
    """Adds one invisible PAdES signature (ETSI.CAdES.detached) to a PDF; knows whether it is self-signed."""

    def __init__(self, key: SigningKey) -> None:
        self.self_signed = key.self_signed
        self.subject = key.certificate.subject.rfc4514_string()
        self._signer = _pyhanko_signer(key)

    def reason(self, purpose: str) -> str:
        """The signature's stated reason: `purpose`, plus that the certificate is self-signed where it is."""
        return f"{purpose} ({SELF_SIGNED_NOTE})" if self.self_signed else purpose

    def sign(self, data: bytes, *, purpose: str) -> bytes:
        """`data` (a PDF) with the signature appended as an incremental update."""
        from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
        from pyhanko.sign.fields import SigSeedSubFilter
        from pyhanko.sign.signers import PdfSignatureMetadata, sign_pdf

        meta = PdfSignatureMetadata(
            field_name=FIELD_NAME,
            reason=self.reason(purpose),
            md_algorithm=DIGEST,
            subfilter=SigSeedSubFilter.PADES,
        )
        writer = IncrementalPdfFileWriter(io.BytesIO(data))
        return sign_pdf(writer, meta, signer=self._signer).getvalue()


@functools.lru_cache(maxsize=4)
def signer_for(pkcs12: Path | None, passphrase: SecretStr | None, instance_path: Path) -> PdfSigner:
    """The signer for a configured PKCS#12 file, or the instance folder's self-signed key (once a process)."""
    key = configured_key(pkcs12, passphrase) if pkcs12 else self_signed_key(instance_path)
    signer = PdfSigner(key)
    logger.info("PDF signing key: %s%s", signer.subject, " (self-signed)" if signer.self_signed else "")
    return signer


def signer_for_settings(settings: Any) -> PdfSigner:
    """The signer the settings name: GPUVET_SIGNING_PKCS12 (with its passphrase), else the self-signed key."""
    passphrase = settings.signing_pkcs12_passphrase
    return signer_for(settings.signing_pkcs12, passphrase, Path(settings.instance_path))


def report_signer(*, always: bool = False) -> PdfSigner | None:
    """The signer for report exports where the app's GPUVET_SIGN_REPORTS is on (or `always`: decision
    documents); None otherwise."""
    from flask import current_app, has_app_context

    settings = current_app.config.get("GPUVET_SETTINGS") if has_app_context() else None
    wanted = settings is not None and (always or settings.sign_reports)
    return signer_for_settings(settings) if wanted else None


def sign_report(pdf: RenderedPdf, number: str, *, always: bool = False) -> RenderedPdf:
    """The rendered report, signed where report signing is on or `always` (unchanged otherwise)."""
    signer = report_signer(always=always)
    if signer is None:
        return pdf
    return dataclasses.replace(pdf, data=signer.sign(pdf.data, purpose=f"gpuvet report {number}"))
