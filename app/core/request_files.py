"""Files a request uploads, read once the same way by pages and API."""

from __future__ import annotations

import unicodedata

from flask import request

MAX_FILENAME = 200
FALLBACK_FILENAME = "upload"
# Unicode categories never kept in a file name: controls (C0, C1), format characters (bidirectional
# overrides that disguise an extension, zero-width characters), line and paragraph separators, unassigned.
_DROPPED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def clean_filename(name: str | None) -> str:
    """The last path part of a client's file name, NFC, without control or invisible characters, at most
    MAX_FILENAME characters (keeping the extension); FALLBACK_FILENAME when nothing is left."""
    text = unicodedata.normalize("NFC", name or "").replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(char for char in text if unicodedata.category(char) not in _DROPPED_CATEGORIES)
    text = " ".join(text.split()).strip(" .")
    if len(text) > MAX_FILENAME:
        stem, dot, extension = text.rpartition(".")
        keep = f"{dot}{extension}" if dot and stem and len(extension) <= 10 else ""
        text = text[: MAX_FILENAME - len(keep)].rstrip(" .") + keep
    return text or FALLBACK_FILENAME


def uploaded_file(field: str, limit: int) -> tuple[bytes | None, str | None]:
    """(bytes, cleaned name) of the file sent as `field`, read to limit + 1 bytes so an oversize one is still
    seen; (None, None) when no file was chosen."""
    upload = request.files.get(field)
    if upload is None or not upload.filename:
        return None, None
    return upload.read(limit + 1), clean_filename(upload.filename)
