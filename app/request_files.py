"""Files a request uploads, read once the same way by pages and API."""

from __future__ import annotations

from flask import request


def uploaded_file(field: str, limit: int) -> tuple[bytes | None, str | None]:
    """(bytes, name) of the file sent as `field`, read to limit + 1 bytes so an oversize one is still seen;
    (None, None) when no file was chosen."""
    upload = request.files.get(field)
    if upload is None or not upload.filename:
        return None, None
    return upload.read(limit + 1), upload.filename
