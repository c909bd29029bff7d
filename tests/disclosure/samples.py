"""Files and invitations for the disclosure tests: real PNG/JPEG/PDF bytes and hostile variants."""

from __future__ import annotations

import io
import zlib
from typing import Any

from PIL import Image
from pypdf import PdfWriter
from pypdf.generic import DictionaryObject, NameObject, TextStringObject
from sqlmodel import Session

from app.disclosure import invitations

VALID_USCC = "91110000802100433B"
FULL_WIDTH_USCC = "９１１１００００８０２１００４３３Ｂ"


def png(size: tuple[int, int] = (40, 30), colour: str = "teal") -> bytes:
    """A real PNG picture."""
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format="PNG")
    return out.getvalue()


def jpeg(size: tuple[int, int] = (40, 30)) -> bytes:
    """A real JPEG picture."""
    out = io.BytesIO()
    Image.new("RGB", size, "navy").save(out, format="JPEG")
    return out.getvalue()


def pdf(writer: PdfWriter | None = None) -> bytes:
    """A one-page PDF (from `writer` when given)."""
    if writer is None:
        writer = PdfWriter()
        writer.add_blank_page(200, 200)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pdf_with_open_action_js() -> bytes:
    """A PDF whose /OpenAction runs JavaScript."""
    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    action = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Action"),
            NameObject("/S"): NameObject("/JavaScript"),
            NameObject("/JS"): TextStringObject("app.alert('hi')"),
        }
    )
    writer._root_object[NameObject("/OpenAction")] = writer._add_object(action)
    return pdf(writer)


def pdf_with_page_aa() -> bytes:
    """A hand-written PDF whose page has an /AA (additional action) that runs when it opens."""
    return (
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
        b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
        b"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /AA << /O 4 0 R >> >> endobj\n"
        b"4 0 obj << /S /Launch /F (calc.exe) >> endobj\n"
        b"trailer << /Root 1 0 R >>\n%%EOF\n"
    )


def pdf_with_escaped_js() -> bytes:
    """A hand-written PDF that spells /JavaScript as /J#61vaScript to dodge a plain byte search."""
    body = (
        b"%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >> endobj\n"
        b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n"
        b"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >> endobj\n"
        b"4 0 obj << /S /J#61vaScript /J#53 (app.alert(1)) >> endobj\n"
        b"trailer << /Root 1 0 R >>\n%%EOF\n"
    )
    return body


def pdf_with_js_in_object_stream() -> bytes:
    """A PDF whose /OpenAction script sits in a compressed object stream (invisible to a byte search)."""
    inner = b"<< /S /JavaScript /JS (app.alert(1)) >>"
    header = b"4 0 "
    packed = zlib.compress(header + inner)
    objects = [
        b"1 0 obj << /Type /Catalog /Pages 2 0 R /OpenAction 4 0 R >> endobj\n",
        b"2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj\n",
        b"3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >> endobj\n",
        b"5 0 obj << /Type /ObjStm /N 1 /First %d /Filter /FlateDecode /Length %d >>\nstream\n"
        % (len(header), len(packed))
        + packed
        + b"\nendstream endobj\n",
    ]
    out = bytearray(b"%PDF-1.5\n")
    offsets = []
    for obj in objects:
        offsets.append(len(out))
        out += obj
    xref_at = len(out)
    rows = [(0, 0, 65535), (1, offsets[0], 0), (1, offsets[1], 0), (1, offsets[2], 0), (2, 5, 0)]
    rows += [(1, offsets[3], 0), (1, xref_at, 0)]
    table = zlib.compress(b"".join(kind.to_bytes(1) + a.to_bytes(4) + b.to_bytes(2) for kind, a, b in rows))
    out += (
        b"6 0 obj << /Type /XRef /Size 7 /W [1 4 2] /Root 1 0 R /Filter /FlateDecode /Length %d >>\n"
        % len(table)
    )
    out += b"stream\n" + table + b"\nendstream endobj\n"
    out += b"startxref\n%d\n%%%%EOF\n" % xref_at
    return bytes(out)


def invite(session: Session, **data: Any) -> tuple[Any, str]:
    """A new invitation (for a new provider unless provider_id is given) and its token."""
    if "provider_id" not in data:
        data.setdefault("legal_name", "示例披露算力科技有限公司")
    created = invitations.create(session, data=data)
    return created.invitation, created.token
