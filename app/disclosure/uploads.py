"""Scans and diagrams uploaded with the questionnaire: checked, kept as immutable evidence, served.

Only PDF, PNG and JPEG are accepted, told apart by their bytes (never by the name). A file is refused when it
is too large, is of another type, is a picture that does not decode or carries extra bytes, is a polyglot (a
picture that also holds a PDF header, or any file whose bytes hold HTML or script a browser would run), or is
a PDF with active content:

- JavaScript: a /JS or /JavaScript entry or action anywhere (names spelled with #xx escapes too);
- actions that run by themselves or reach outside the document: additional actions (/AA), and actions of
  type Launch, ImportData, SubmitForm or Rendition wherever they are (an /OpenAction that only opens a page
  is fine); rich media (/RichMedia) and XFA forms;
- embedded files (/EmbeddedFiles, /EF, file attachment annotations);
- HTML or script (`<script>`, `<html>`, `javascript:` ...) in the raw bytes, stream contents included, and
  in every stream after decompression (image data excepted: pixels are never run).

Accepted files become Evidence (purpose "disclosure") with their SHA-256, kept once per invitation: the same
bytes sent again (another save, another field) point at the stored copy. A new file for a field replaces that
field's earlier one, whose bytes are deleted when nothing else points at them (a draft's discarded file is no
evidence of anything). An invitation keeps at most a set number of files and bytes (Quota). Files are served
only as attachments or as a re-encoded thumbnail, under a sandboxing CSP.
"""

from __future__ import annotations

import hashlib
import io
import re
from dataclasses import dataclass
from typing import Any

from flask import Response
from flask_babel import gettext as _
from sqlmodel import Session, col, delete, select

from app.core.errors import InvalidInput
from app.core.request_files import clean_filename
from app.models.disclosure import DisclosureUpload, Invitation
from app.models.evidence import Evidence

PURPOSE = "disclosure"
METHOD = "UPLOAD"
PNG, JPEG, PDF = "image/png", "image/jpeg", "application/pdf"
ACCEPTED = (PDF, PNG, JPEG)
SANDBOX_CSP = "sandbox; default-src 'none'"
THUMBNAIL_CSP = "sandbox; default-src 'none'; img-src 'self'"
THUMBNAIL_SIZE = (320, 320)
MAX_PIXELS = 60_000_000  # a picture larger than this is refused (decompression bombs)
MAX_PDF_OBJECTS = 200_000
MAX_PDF_DECODED_BYTES = 128 * 1024 * 1024  # decompressed stream contents read in all, per PDF
MB = 1024 * 1024

_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_JPEG_MAGIC = b"\xff\xd8\xff"
_PDF_MAGIC = b"%PDF-"
# Markup or script a browser (or a PHP server) would run if it were ever asked to read the bytes as a page,
# searched in lowered bytes. Patterns of five or more bytes, so compressed data matches one only by rare
# chance; each starts with "<" (or is "javascript:"), which the engine finds without trying every byte.
_TAG = re.compile(
    rb"<(?:\s*(?:script|html|body|iframe|object|embed|meta|link|style|form)\b|(?:svg|img)\s|!doctype|\?php)"
)
_SCRIPT_URL = b"javascript:"
# A stream's contents are compressed bytes where a short PDF name would match by chance: names are looked for
# outside them (and in every object by pypdf's walk).
_STREAM_OPEN = re.compile(rb"stream\r?\n")
_STREAM_END = b"endstream"
# PDF names that run code, act by themselves or embed files; #xx spells a character (/J#53 is /JS).
_PDF_ACTIVE = re.compile(rb"/(?:JS|JavaScript|AA|Launch|RichMedia|XFA)(?![A-Za-z0-9])")
_PDF_EMBEDDED = re.compile(rb"/(?:EmbeddedFiles?|EF|FileAttachment)(?![A-Za-z0-9])")
_PDF_NAME_ESCAPE = re.compile(rb"#([0-9A-Fa-f]{2})")
_ACTIVE_KEYS = {"/JS", "/JavaScript", "/AA", "/RichMedia", "/XFA"}
_ACTIVE_ACTIONS = {"/JavaScript", "/Launch", "/ImportData", "/SubmitForm", "/Rendition"}
_EMBEDDED_KEYS = {"/EmbeddedFiles", "/EF"}
_EMBEDDED_TYPES = {"/EmbeddedFile", "/FileAttachment"}
ACTIVE, EMBEDDED, MARKUP, TOO_LARGE = "active", "embedded", "markup", "too_large"


@dataclass(frozen=True)
class Checked:
    """An accepted file: its bytes and detected media type."""

    body: bytes
    media_type: str

    @property
    def sha256(self) -> str:
        """SHA-256 hex of the bytes."""
        return hashlib.sha256(self.body).hexdigest()


@dataclass(frozen=True)
class Quota:
    """What one invitation may keep: files, and bytes of distinct files."""

    files: int
    total_bytes: int

    @classmethod
    def from_settings(cls, settings: Any) -> Quota:
        """The quota of GPUVET_DISCLOSURE_UPLOAD_MAX_FILES and GPUVET_DISCLOSURE_UPLOAD_QUOTA_MB."""
        return cls(settings.disclosure_upload_max_files, settings.disclosure_upload_quota_mb * MB)


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


def _has_markup(data: bytes) -> bool:
    """Whether the bytes hold HTML or script (any case)."""
    lowered = data.lower()
    return _SCRIPT_URL in lowered or _TAG.search(lowered) is not None


def _outside_streams(data: bytes) -> bytes:
    """The PDF's bytes with every stream's contents left out ("stream endstream" in their place)."""
    kept, position = [], 0
    while (start := data.find(b"stream", position)) >= 0:
        opening = _STREAM_OPEN.match(data, start)
        if opening is None:
            kept.append(data[position : start + 6])
            position = start + 6
            continue
        end = data.find(_STREAM_END, opening.end())
        if end < 0:
            break  # no stream ends after this one: the rest is structure
        kept.append(data[position:start] + b"stream endstream")
        position = end + len(_STREAM_END)
    kept.append(data[position:])
    return b"".join(kept)


def _check_picture(data: bytes, media_type: str, field: str) -> None:
    from PIL import Image, UnidentifiedImageError

    if _PDF_MAGIC in data or _has_markup(data):
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


def _dictionary_finding(obj: Any) -> str | None:
    """ACTIVE or EMBEDDED when a PDF dictionary runs code, acts by itself or embeds a file."""
    keys = set(obj.keys())
    if _ACTIVE_KEYS & keys or obj.get("/S") in _ACTIVE_ACTIONS:
        return ACTIVE
    if _EMBEDDED_KEYS & keys or obj.get("/Type") in _EMBEDDED_TYPES or obj.get("/Subtype") in _EMBEDDED_TYPES:
        return EMBEDDED
    return None


class _Decoded:
    """Decompressed stream contents read so far, bounded by MAX_PDF_DECODED_BYTES."""

    def __init__(self) -> None:
        self.total = 0

    def finding(self, stream: Any) -> str | None:
        """MARKUP when a stream (not an image) holds HTML or script decompressed; TOO_LARGE past the bound."""
        if stream.get("/Subtype") == "/Image":
            return None
        contents = stream.get_data()
        self.total += len(contents)
        if self.total > MAX_PDF_DECODED_BYTES:
            return TOO_LARGE
        return MARKUP if _has_markup(contents) else None


def _pdf_finding(reader: Any) -> str | None:
    """What is wrong with the objects reachable from the trailer (object streams too), or None."""
    from pypdf.generic import ArrayObject, DictionaryObject, IndirectObject, StreamObject

    stack: list[Any] = [reader.trailer]
    seen: set[tuple[int, int]] = set()
    decoded = _Decoded()
    while stack:
        if len(seen) > MAX_PDF_OBJECTS:
            return TOO_LARGE
        obj = stack.pop()
        if isinstance(obj, IndirectObject):
            key = (obj.idnum, obj.generation)
            if key in seen:
                continue
            seen.add(key)
            obj = obj.get_object()
        if isinstance(obj, DictionaryObject):
            finding = _dictionary_finding(obj)
            if finding is None and isinstance(obj, StreamObject):
                finding = decoded.finding(obj)
            if finding is not None:
                return finding
            stack.extend(obj.values())
        elif isinstance(obj, ArrayObject):
            stack.extend(obj)
    return None


def _pdf_refusal(finding: str, field: str) -> InvalidInput:
    messages = {
        ACTIVE: _(
            "PDF 含有 JavaScript 或自动执行、调用外部的动作（/JS、/AA、/Launch 等），不接受；"
            "请打印为普通 PDF 后上传"
        ),
        EMBEDDED: _("PDF 内嵌了其他文件（附件），不接受；请只上传扫描件本身"),
        MARKUP: _("PDF 的内容中含有网页标记或脚本（如 <script>），不接受；请打印为普通 PDF 后上传"),
        TOO_LARGE: _("PDF 结构过于复杂或解压后内容过大，无法检查；请打印为普通 PDF 后上传"),
    }
    return _refuse(field, messages[finding])


def _check_pdf_bytes(data: bytes, field: str) -> None:
    """Refuse by the raw bytes: active names or embedded files outside streams, markup anywhere."""
    structure = _outside_streams(data)
    unescaped = _PDF_NAME_ESCAPE.sub(lambda match: bytes([int(match.group(1), 16)]), structure)
    if _PDF_ACTIVE.search(unescaped):
        raise _pdf_refusal(ACTIVE, field)
    if _PDF_EMBEDDED.search(unescaped):
        raise _pdf_refusal(EMBEDDED, field)
    if _has_markup(data) or data.find(_PDF_MAGIC, 1) >= 0:
        raise _polyglot(field)


def _check_pdf(data: bytes, field: str) -> None:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    _check_pdf_bytes(data, field)
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            raise _refuse(field, _("PDF 已加密，请上传未加密的文件"))
        finding = _pdf_finding(reader)
    except InvalidInput:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError, RecursionError, NotImplementedError):
        raise _refuse(field, _("PDF 已损坏或无法读取，请重新导出后上传")) from None
    if finding is not None:
        raise _pdf_refusal(finding, field)


def check(data: bytes, *, field: str, max_bytes: int) -> Checked:
    """The file's bytes and type, or InvalidInput on `field` saying why it was refused."""
    if not data:
        raise _refuse(field, _("文件为空"))
    if len(data) > max_bytes:
        raise _refuse(field, _("文件过大：最大 %(mb)s MB", mb=max_bytes // MB))
    media_type = sniff(data)
    if media_type is None:
        raise _refuse(field, _("只接受 PDF、PNG 或 JPEG 文件（按文件内容识别，与文件名无关）"))
    if media_type == PDF:
        _check_pdf(data, field)
    else:
        _check_picture(data, media_type, field)
    return Checked(data, media_type)


# ---------------------------------------------------------------- keeping
def _kept_evidence(session: Session, invitation_id: int, sha256: str) -> int | None:
    """The id of this invitation's stored copy of the bytes with this SHA-256, or None."""
    return session.exec(
        select(DisclosureUpload.evidence_id)
        .join(Evidence, col(Evidence.id) == DisclosureUpload.evidence_id)
        .where(DisclosureUpload.invitation_id == invitation_id, Evidence.sha256 == sha256)
        .limit(1)
    ).first()


def kept_copy(session: Session, invitation_id: int, data: bytes) -> Checked | None:
    """The bytes as accepted before when this invitation already keeps them (no need to check them again)."""
    evidence_id = _kept_evidence(session, invitation_id, hashlib.sha256(data).hexdigest())
    if evidence_id is None:
        return None
    media_type = session.exec(select(Evidence.content_type).where(Evidence.id == evidence_id)).one()
    return Checked(data, media_type)


def _check_quota(
    kept: list[DisclosureUpload], replaced: list[DisclosureUpload], new_bytes: int, quota: Quota, field: str
) -> None:
    """Refuse on `field` when keeping one more file (of `new_bytes` new bytes) would pass the quota."""
    staying = [upload for upload in kept if upload not in replaced]
    sizes = {upload.evidence_id: upload.size for upload in staying}
    if len(staying) + 1 > quota.files or sum(sizes.values()) + new_bytes > quota.total_bytes:
        raise _refuse(
            field,
            _(
                "已达到本问卷的上传上限（最多 %(files)s 个文件，共 %(mb)s MB），此文件未保存；"
                "在已上传文件的栏目重新上传即可替换原文件",
                files=quota.files,
                mb=quota.total_bytes // MB,
            ),
        )


def _new_evidence(session: Session, invitation: Invitation, field: str, name: str, checked: Checked) -> int:
    where = f"disclosure:invitation/{invitation.id}/{field}"
    evidence = Evidence(
        provider_id=invitation.provider_id,
        purpose=PURPOSE,
        method=METHOD,
        url=where,
        final_url=where,
        content_type=checked.media_type,
        sha256=checked.sha256,
        size=len(checked.body),
        body=checked.body,
        extracted={"invitation_id": invitation.id, "field": field, "filename": name},
        triggered_by_name=f"invitation:{invitation.id}",
    )
    session.add(evidence)
    session.flush()
    return evidence.id


def _discard(session: Session, replaced: list[DisclosureUpload]) -> None:
    """Delete replaced uploads, and their bytes when no other upload points at them."""
    for upload in replaced:
        session.delete(upload)
    session.flush()
    for evidence_id in {upload.evidence_id for upload in replaced}:
        still_used = select(DisclosureUpload.id).where(DisclosureUpload.evidence_id == evidence_id)
        if session.exec(still_used.limit(1)).first() is None:
            # A bulk delete: the immutability hook guards loaded evidence, not a draft's discarded file.
            session.exec(delete(Evidence).where(col(Evidence.id) == evidence_id))


def store(
    session: Session,
    invitation: Invitation,
    *,
    field: str,
    filename: str,
    checked: Checked,
    quota: Quota | None = None,
) -> DisclosureUpload:
    """Keep an accepted file for the invitation's form field, replacing the field's earlier file (not
    committed). Bytes already kept for the invitation are not stored again; InvalidInput past the quota."""
    name = clean_filename(filename)
    kept = list(uploads(session, invitation.id).values())
    replaced = [upload for upload in kept if upload.field == field[:80]]
    evidence_id = _kept_evidence(session, invitation.id, checked.sha256)
    unchanged = next((upload for upload in replaced if upload.evidence_id == evidence_id), None)
    if unchanged is not None:
        return unchanged  # the field's own file sent again
    if quota is not None:
        _check_quota(kept, replaced, 0 if evidence_id else len(checked.body), quota, field)
    if evidence_id is None:
        evidence_id = _new_evidence(session, invitation, field, name, checked)
    upload = DisclosureUpload(
        invitation_id=invitation.id,
        evidence_id=evidence_id,
        field=field[:80],
        filename=name,
        media_type=checked.media_type,
        size=len(checked.body),
    )
    session.add(upload)
    session.flush()
    _discard(session, replaced)
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
