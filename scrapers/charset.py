"""Decode fetched bytes the way a browser would: BOM, HTTP charset, <meta charset>, then detection."""

from __future__ import annotations

import codecs
import logging
import re
from email.message import Message

import charset_normalizer

logger = logging.getLogger(__name__)

# Labels that browsers treat as a wider encoding (WHATWG Encoding Standard): GB2312/GBK pages often
# contain characters only GB18030 defines, and "latin-1" pages are really windows-1252.
_SUPERSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "cp936": "gb18030",
    "gb_2312-80": "gb18030",
    "csgb2312": "gb18030",
    "euc-cn": "gb18030",
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "big5": "big5hkscs",
}
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_META_WINDOW = 4096
_META_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_DETECT_WINDOW = 256 * 1024


def canonical_encoding(label: str | None) -> str | None:
    """Return the Python codec name to decode with for a charset label, or None if unknown."""
    if not label:
        return None
    label = label.strip().strip("\"'").lower()
    label = _SUPERSETS.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def header_charset(content_type: str | None) -> str | None:
    """Return the charset parameter of a Content-Type header value, if any."""
    if not content_type:
        return None
    message = Message()
    message["content-type"] = content_type
    charset = message.get_param("charset")
    return charset if isinstance(charset, str) else None


def mime_type(content_type: str | None) -> str:
    """Return the bare, lower-case media type of a Content-Type header value ("" when absent)."""
    if not content_type:
        return ""
    return content_type.split(";", 1)[0].strip().lower()


def meta_charset(body: bytes) -> str | None:
    """Return the charset a page declares in <meta charset> or <meta http-equiv> near its start."""
    match = _META_CHARSET.search(body[:_META_WINDOW])
    return match.group(1).decode("ascii", "ignore") if match else None


def _strict(body: bytes, encoding: str | None) -> str | None:
    if encoding is None:
        return None
    try:
        return body.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        logger.debug("declared encoding %s does not decode the body", encoding)
        return None


def _detected(body: bytes) -> str | None:
    best = charset_normalizer.from_bytes(body[:_DETECT_WINDOW]).best()
    return canonical_encoding(best.encoding) if best is not None else None


def decode(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """Return (text, encoding) for a body, trying BOM, header, meta charset, detection, then UTF-8."""
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body.decode(encoding, errors="replace"), encoding
    candidates = [canonical_encoding(header_charset(content_type))]
    if mime_type(content_type) in ("", "text/html", "application/xhtml+xml", "text/plain"):
        candidates.append(canonical_encoding(meta_charset(body)))
    candidates.append("utf-8")
    for encoding in dict.fromkeys(candidates):
        text = _strict(body, encoding)
        if text is not None:
            return text, encoding or "utf-8"
    detected = _detected(body)
    text = _strict(body, detected)
    if text is not None and detected is not None:
        return text, detected
    fallback = next((encoding for encoding in candidates if encoding), "utf-8")
    return body.decode(fallback, errors="replace"), fallback
