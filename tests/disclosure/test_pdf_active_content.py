"""What the upload check calls active content in a PDF is refused, and ordinary PDFs still pass.

Every PDF here is built in the test with pypdf (or Pillow for a scanned picture), small and real.
"""

from __future__ import annotations

import io

import pytest
from PIL import Image
from pypdf import PdfWriter
from pypdf.generic import (
    ArrayObject,
    DecodedStreamObject,
    DictionaryObject,
    FloatObject,
    NameObject,
    TextStringObject,
)

from app.core.errors import InvalidInput
from app.disclosure import uploads as disclosure_uploads
from tests.disclosure import samples

LIMIT = 10 * 1024 * 1024
FIELD = "licences.0.scan_upload_id"


def refusal(data: bytes) -> str:
    """The message a refused file gets (fails the test when the file is accepted)."""
    with pytest.raises(InvalidInput) as caught:
        disclosure_uploads.check(data, field=FIELD, max_bytes=LIMIT)
    assert caught.value.errors[0].field == FIELD
    return caught.value.errors[0].message


def accepted(data: bytes) -> bool:
    """Whether the check accepts the file."""
    return disclosure_uploads.check(data, field=FIELD, max_bytes=LIMIT).media_type == "application/pdf"


def pdf_with_page_content(content: bytes, *, compress: bool) -> bytes:
    """A one-page PDF whose content stream holds `content`, Flate-compressed or as plain bytes."""
    writer = PdfWriter()
    page = writer.add_blank_page(200, 200)
    stream = DecodedStreamObject()
    stream.set_data(content)
    page[NameObject("/Contents")] = writer._add_object(stream)
    if compress:
        page.compress_content_streams()
    return samples.pdf(writer)


def pdf_with_link_action(kind: str) -> bytes:
    """A page with a link annotation whose action is of type `kind` (/Launch, /SubmitForm, /GoTo ...)."""
    writer = PdfWriter()
    page = writer.add_blank_page(200, 200)
    action = DictionaryObject({NameObject("/S"): NameObject(kind), NameObject("/F"): TextStringObject("x")})
    annotation = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Annot"),
            NameObject("/Subtype"): NameObject("/Link"),
            NameObject("/Rect"): ArrayObject([FloatObject(side) for side in (0, 0, 50, 50)]),
            NameObject("/A"): action,
        }
    )
    page[NameObject("/Annots")] = ArrayObject([writer._add_object(annotation)])
    return samples.pdf(writer)


def test_script_in_an_uncompressed_stream_is_refused():
    data = pdf_with_page_content(b"BT (x) Tj ET\n<script>alert(1)</script>\n", compress=False)
    assert b"<script>" in data
    assert "多格式混合" in refusal(data)  # the raw bytes are what a browser would sniff


def test_script_in_a_compressed_stream_is_refused_once_decompressed():
    data = pdf_with_page_content(b"BT (x) Tj ET\n<SCRIPT src=//x></SCRIPT>\n" * 20, compress=True)
    assert b"SCRIPT" not in data  # only the decompressed contents show it
    assert "<script>" in refusal(data)


def test_an_embedded_file_is_refused():
    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer.add_attachment("readme.txt", b"plain words")
    assert "内嵌了其他文件" in refusal(samples.pdf(writer))


@pytest.mark.parametrize("kind", ["/Launch", "/SubmitForm", "/ImportData", "/JavaScript"])
def test_actions_that_act_by_themselves_or_reach_outside_are_refused(kind):
    assert "JavaScript" in refusal(pdf_with_link_action(kind))


def test_ordinary_pdfs_pass():
    assert accepted(pdf_with_link_action("/GoTo"))  # an internal link is no active content
    text = b"BT /F1 12 Tf 20 100 Td (a < b and 3 > 2, html 5 body) Tj ET\n"
    assert accepted(pdf_with_page_content(text, compress=True))
    assert accepted(pdf_with_page_content(text, compress=False))
    writer = PdfWriter()
    writer.add_blank_page(200, 200)
    writer._root_object[NameObject("/OpenAction")] = ArrayObject(
        [writer.pages[0].indirect_reference, NameObject("/Fit")]
    )
    assert accepted(samples.pdf(writer))  # opening on the first page is no action


def test_a_scanned_picture_saved_as_pdf_passes():
    scan = io.BytesIO()
    Image.effect_noise((600, 400), 80).convert("RGB").save(scan, format="PDF", resolution=150)
    assert accepted(scan.getvalue())


def test_a_pdf_too_large_to_decompress_is_refused(monkeypatch):
    data = pdf_with_page_content(b"0 0 m 10 10 l S\n" * 5000, compress=True)
    assert accepted(data)
    monkeypatch.setattr(disclosure_uploads, "MAX_PDF_DECODED_BYTES", 40_000)
    assert "解压后内容过大" in refusal(data)


def test_the_byte_checks_take_time_in_proportion_to_the_file():
    import time

    unterminated = b"%PDF-1.4\n" + b"1 0 obj << >>\nstream\n" * 100_000  # no stream ever ends
    angles = b"%PDF-1.4\n" + b"<" * 2_000_000
    for data in (unterminated, angles):
        start = time.perf_counter()
        disclosure_uploads._check_pdf_bytes(data, FIELD)
        assert time.perf_counter() - start < 2
