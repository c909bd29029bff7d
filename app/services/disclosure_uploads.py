"""Scans and diagrams uploaded with the questionnaire: checked, kept as immutable evidence, served.

Only PDF, PNG and JPEG are accepted, told apart by their bytes (never by the name). A file is refused when it
is too large, is of another type, is a PDF that carries JavaScript or automatic actions, is a picture that
does not decode or carries extra bytes, or is a polyglot (a picture that also holds a PDF header or HTML or
script, or a PDF that holds HTML or script). Accepted files become Evidence (purpose "disclosure") with
their SHA-256 and are served only as attachments or as a re-encoded thumbnail, under a sandboxing CSP.
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass
from typing import Any

from flask import Response
from flask_babel import gettext as _
from sqlmodel import Session, select

from app.models.disclosure import DisclosureUpload, Invitation
from app.models.evidence import Evidence
from app.services.errors import InvalidInput

PURPOSE = "disclosure"
METHOD = "UPLOAD"
PNG, JPEG, PDF = "image/png", "image/jpeg", "application/pdf"
ACCEPTED = (PDF, PNG, JPEG)
SANDBOX_CSP = "sandbox; default-src 'none'"
THUMBNAIL_CSP = "sandbox; default-src 'none'; img-src 'self'"
THUMBNAIL_SIZE = (320, 320)
MAX_PIXELS = 60_000_000  # a picture larger than this is refused (decompression bombs)
MAX_PDF_OBJECTS = 200_000

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"
_PDF_MAGIC = b"%PDF-"
# Markup or script a browser (or a PHP server) would run if it were ever asked to read the bytes as a page.
# Patterns of five or more bytes, so compressed data matches one by chance about once in 10^4 files of 10 MB.
_MARKUP = re.compile(
    rb"<\s*(?:script|html|body|iframe|object|embed|meta|link|style|form)\b|<(?:svg|img)\s|<!doctype|<\?php"
    rb"|javascript:",
    re.IGNORECASE,
)
# Stream contents are compressed bytes: scanned by pypdf's object walk, not by the patterns.
_PDF_STREAM = re.compile(rb"stream\r?\n.*?endstream", re.DOTALL)
# PDF names that run code or act by themselves; names may spell a character as #xx (/J#53 is /JS).
_PDF_ACTIVE = re.compile(rb"/(?:JS|JavaScript|AA|Launch|RichMedia|XFA)(?![A-Za-z0-9])")
_PDF_NAME_ESCAPE = re.compile(rb"#([0-9A-Fa-f]{2})")
_ACTIVE_KEYS = {"/JS", "/JavaScript", "/AA", "/RichMedia", "/XFA"}
_ACTIVE_ACTIONS = {"/JavaScript", "/Launch", "/ImportData", "/SubmitForm", "/Rendition"}


@dataclass(frozen=True)
class Checked:
    """An accepted file: its bytes and detected media type."""

    body: bytes
    media_type: str


def sniff(data: bytes) -> str | None:
    """PDF, PNG or JPEG from the first bytes; None for anything else."""
    if data.startswith(_PNG_MAGIC):
        return PNG
    if data.startswith(_JPEG_MAGIC):
        return JPEG
    if data.startswith(_PDF_MAGIC):
        return PDF
    return None


def _refuse(field: str, message: str) -> InvalidInput:
    return InvalidInput(message, field=field)


def _polyglot(field: str) -> InvalidInput:
    return _refuse(
        field, _("文件同时含有其他格式的内容（多格式混合文件），出于安全原因不接受；请重新导出后上传")
    )


def _check_picture(data: bytes, media_type: str, field: str) -> None:
    from PIL import Image, UnidentifiedImageError

    if _PDF_MAGIC in data or _MARKUP.search(data):
        raise _polyglot(field)
    if media_type == PNG:
        end = data.rfind(b"IEND")
        if end < 0 or end + 8 != len(data):  # "IEND" + 4-byte CRC must be the last bytes
            raise _polyglot(field)
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.width * image.height > MAX_PIXELS:
                raise _refuse(field, _("图片尺寸过大（超过 %(n)s 百万像素）", n=MAX_PIXELS // 1_000_000))
            image.verify()
    except InvalidInput:
        raise
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, Image.DecompressionBombError):
        raise _refuse(field, _("图片已损坏或无法读取，请重新导出后上传")) from None


def _pdf_active(reader: Any) -> bool:
    """Whether an object reachable from the trailer runs code or acts by itself (object streams too)."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject

    stack: list[Any] = [reader.trailer]
    seen: set[tuple[int, int]] = set()
    while stack:
        if len(seen) > MAX_PDF_OBJECTS:
            return True
        obj = stack.pop()
        if isinstance(obj, IndirectObject):
            key = (obj.idnum, obj.generation)
            if key in seen:
                continue
            seen.add(key)
            obj = obj.get_object()
        if isinstance(obj, DictionaryObject):
            if _ACTIVE_KEYS & set(obj.keys()) or obj.get("/S") in _ACTIVE_ACTIONS:
                return True
            stack.extend(obj.values())
        elif isinstance(obj, ArrayObject):
            stack.extend(obj)
    return False


def _active_pdf() -> str:
    return _(
        "PDF 含有 JavaScript 或自动执行的动作（/JS、/OpenAction、/AA 等），不接受；请打印为普通 PDF 后上传"
    )


def _check_pdf(data: bytes, field: str) -> None:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    structure = _PDF_STREAM.sub(b"stream endstream", data)
    unescaped = _PDF_NAME_ESCAPE.sub(lambda match: bytes([int(match.group(1), 16)]), structure)
    if _PDF_ACTIVE.search(unescaped):
        raise _refuse(field, _active_pdf())
    if _MARKUP.search(structure) or data.find(_PDF_MAGIC, 1) >= 0:
        raise _polyglot(field)
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise _refuse(field, _("PDF 已加密，请上传未加密的文件"))
        active = _pdf_active(reader)
    except InvalidInput:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, RecursionError, NotImplementedError):
        raise _refuse(field, _("PDF 已损坏或无法读取，请重新导出后上传")) from None
    if active:
        raise _refuse(field, _active_pdf())


def check(data: bytes, *, field: str, max_bytes: int) -> Checked:
    """The file's bytes and type, or InvalidInput on `field` saying why it was refused."""
    if not data:
        raise _refuse(field, _("文件为空"))
    if len(data) > max_bytes:
        raise _refuse(field, _("文件过大：最大 %(mb)s MB", mb=max_bytes // (1024 * 1024)))
    media_type = sniff(data)
    if media_type is None:
        raise _refuse(field, _("只接受 PDF、PNG 或 JPEG 文件（按文件内容识别，与文件名无关）"))
    if media_type == PDF:
        _check_pdf(data, field)
    else:
        _check_picture(data, media_type, field)
    return Checked(data, media_type)


def store(
    session: Session, invitation: Invitation, *, field: str, filename: str, checked: Checked
) -> DisclosureUpload:
    """Keep an accepted file as immutable Evidence tied to the invitation's form field (not committed)."""
    name = (filename or "").replace("\\", "/").rsplit("/", 1)[-1][:200]
    where = f"disclosure:invitation/{invitation.id}/{field}"
    evidence = Evidence(
        provider_id=invitation.provider_id,
        purpose=PURPOSE,
        method=METHOD,
        url=where,
        final_url=where,
        content_type=checked.media_type,
        sha256=hashlib.sha256(checked.body).hexdigest(),
        size=len(checked.body),
        body=checked.body,
        extracted={"invitation_id": invitation.id, "field": field, "filename": name},
        triggered_by_name=f"invitation:{invitation.id}",
    )
    session.add(evidence)
    session.flush()
    upload = DisclosureUpload(
        invitation_id=invitation.id,
        evidence_id=evidence.id,
        field=field[:80],
        filename=name,
        media_type=checked.media_type,
        size=len(checked.body),
    )
    session.add(upload)
    session.flush()
    return upload


def uploads(session: Session, invitation_id: int) -> dict[int, DisclosureUpload]:
    """The invitation's uploads by id."""
    rows = session.exec(select(DisclosureUpload).where(DisclosureUpload.invitation_id == invitation_id)).all()
    return {row.id: row for row in rows}


def body(session: Session, upload: DisclosureUpload) -> bytes:
    """The stored bytes of an upload."""
    evidence = session.get(Evidence, upload.evidence_id)
    return evidence.body if evidence is not None else b""


def _locked(response: Response, csp: str) -> Response:
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = csp
    response.headers["Cache-Control"] = "private, no-store"
    return response


def attachment(upload: DisclosureUpload, data: bytes) -> Response:
    """The bytes as a download (never shown by the browser), under a sandboxing CSP."""
    extension = {PDF: "pdf", PNG: "png", JPEG: "jpg"}.get(upload.media_type, "bin")
    response = Response(data, mimetype="application/octet-stream")
    name = f"disclosure-{upload.invitation_id}-{upload.id}.{extension}"
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return _locked(response, SANDBOX_CSP)


def thumbnail_bytes(data: bytes) -> bytes | None:
    """A small PNG re-encoded from a picture (only its pixels survive), or None for a PDF."""
    from PIL import Image

    if sniff(data) not in (PNG, JPEG):
        return None
    with Image.open(io.BytesIO(data)) as image:
        image.thumbnail(THUMBNAIL_SIZE)
        out = io.BytesIO()
        image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB").save(out, format="PNG")
    return out.getvalue()


def thumbnail(data: bytes) -> Response | None:
    """The thumbnail as an image response under a sandboxing CSP, or None when there is none."""
    png = thumbnail_bytes(data)
    if png is None:
        return None
    return _locked(Response(png, mimetype=PNG), THUMBNAIL_CSP)
