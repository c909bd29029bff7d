"""Signing keys in PKCS#12 files: open the organisation's (settings check it at start-up), or make one.

cryptography is imported inside the functions: start-up loads it only where a PKCS#12 file is configured.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from flask_babel import gettext as _
from pydantic import SecretStr

from app.core import clock

PKCS12_SETTING = "GPUVET_SIGNING_PKCS12"
PASSPHRASE_SETTING = "GPUVET_SIGNING_PKCS12_PASSPHRASE"
SELF_SIGNED_NAME = "gpuvet report signing (self-signed)"
SELF_SIGNED_YEARS = 10
SELF_SIGNED_KEY_BITS = 3072


class SigningKeyError(RuntimeError):
    """A signing key that cannot be used; the message names the setting or file, never the passphrase."""


@dataclass(frozen=True)
class SigningKey:
    """A private key and its certificate (cryptography objects); whether the certificate is self-signed."""

    private_key: Any
    certificate: Any
    chain: tuple[Any, ...]
    self_signed: bool


def read_pkcs12(path: Path) -> bytes:
    """The bytes of the configured PKCS#12 file; a SigningKeyError naming the setting when unreadable."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise SigningKeyError(
            _(
                "%(setting)s：无法读取 PKCS#12 文件 %(path)s（%(reason)s）",
                setting=PKCS12_SETTING,
                path=path,
                reason=exc.strerror or type(exc).__name__,
            )
        ) from None


def open_pkcs12(data: bytes, passphrase: SecretStr | None, *, source: str) -> SigningKey:
    """The key and certificate in PKCS#12 `data`; a SigningKeyError naming `source` if they cannot be had."""
    from cryptography.hazmat.primitives.serialization import pkcs12

    secret = passphrase.get_secret_value().encode() if passphrase else None
    try:
        key, certificate, chain = pkcs12.load_key_and_certificates(data, secret)
    except (ValueError, TypeError):
        raise SigningKeyError(
            _(
                "%(setting)s 打不开 %(source)s：口令错误，或不是 PKCS#12 文件",
                setting=PASSPHRASE_SETTING,
                source=source,
            )
        ) from None
    if key is None or certificate is None:
        raise SigningKeyError(_("%(source)s 中没有私钥和证书", source=source))
    return SigningKey(
        private_key=key,
        certificate=certificate,
        chain=tuple(chain),
        self_signed=certificate.issuer == certificate.subject,
    )


def configured_key(path: Path, passphrase: SecretStr | None) -> SigningKey:
    """The key in the PKCS#12 file the settings name (GPUVET_SIGNING_PKCS12 and its passphrase)."""
    return open_pkcs12(read_pkcs12(path), passphrase, source=f"{PKCS12_SETTING} ({path})")


def new_self_signed_pkcs12() -> bytes:
    """A new RSA key with a self-signed certificate for document signatures, as an unencrypted PKCS#12."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.hazmat.primitives.serialization import pkcs12
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=SELF_SIGNED_KEY_BITS)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, SELF_SIGNED_NAME)])
    now = clock.now()
    usage = x509.KeyUsage(
        digital_signature=True,
        content_commitment=True,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=False,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1))
        .not_valid_after(now + timedelta(days=365 * SELF_SIGNED_YEARS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(usage, critical=True)
        .sign(key, hashes.SHA256())
    )
    return pkcs12.serialize_key_and_certificates(
        b"gpuvet", key, certificate, None, serialization.NoEncryption()
    )
