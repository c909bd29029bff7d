"""The `when_iso` template filter: an ISO timestamp stored as text, shown like the `when` filter."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.core import clock as localtime
from app.web import bp


@bp.app_template_filter("when_iso")
def when_iso(text: Any, seconds: bool = False) -> str:
    """'2026-03-01T02:05:00+00:00' as '2026-03-01 10:05 UTC+8'; text that is not a time stays as it is."""
    if isinstance(text, datetime):
        return localtime.when(text, seconds=seconds)
    if not text:
        return ""
    try:
        return localtime.when(datetime.fromisoformat(str(text)), seconds=seconds)
    except ValueError:
        return str(text)
