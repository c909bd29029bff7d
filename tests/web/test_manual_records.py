"""The manual-record pages (lookups, credit, footer) store a posted record through one helper."""

from __future__ import annotations

import io

from app.core.errors import FieldError, InvalidInput
from app.web.manual_records import record_by_hand


def test_record_by_hand_passes_the_screenshot_and_names_each_bad_field(app):
    posted = {"screenshot": (io.BytesIO(b"\x89PNG shot"), "shot.png")}
    with app.test_request_context(method="POST", data=posted, content_type="multipart/form-data"):
        assert record_by_hand(lambda data, name: (data, name)) == ((b"\x89PNG shot", "shot.png"), {}, 200)

        def refuse(data: bytes, name: str | None) -> None:
            raise InvalidInput([FieldError("looked_at", "bad time"), FieldError("found", "say what")])

        assert record_by_hand(refuse) == (None, {"looked_at": "bad time", "found": "say what"}, 422)
    with app.test_request_context(method="POST", data={}, content_type="multipart/form-data"):
        assert record_by_hand(lambda data, name: (data, name)) == ((b"", None), {}, 200)
