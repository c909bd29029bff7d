"""What the pages that record a credential by hand share: the form page and storing the posted record."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask import flash, redirect, render_template, request

from app.core.db import get_session
from app.core.errors import InvalidInput
from app.core.request_files import uploaded_file
from app.credentials import manual_lookups
from app.models import Provider

T = TypeVar("T")


def render_manual_page(
    template: str,
    provider: Provider,
    form: Any,
    *,
    errors: dict[str, str] | None = None,
    status: int = 200,
    **values: Any,
) -> tuple[str, int]:
    """A manual-record form with its errors, the screenshot size limit and the zone times are read in."""
    html = render_template(
        template,
        provider=provider,
        form=form,
        errors=errors or {},
        max_mb=manual_lookups.MAX_SCREENSHOT_BYTES // (1024 * 1024),
        zone=manual_lookups.zone_label(),
        **values,
    )
    return html, status


def record_by_hand(store: Callable[[bytes, str | None], T]) -> tuple[T | None, dict[str, str], int]:
    """(record, {}, 200) once `store(screenshot, filename)` has stored the posted record; on bad input the
    change is rolled back and (None, each bad field's message, status) comes back for the form."""
    data, filename = uploaded_file("screenshot", manual_lookups.MAX_SCREENSHOT_BYTES)
    try:
        return store(data or b"", filename), {}, 200
    except InvalidInput as exc:
        get_session().rollback()
        return None, {error.field: error.message for error in exc.errors}, exc.status


def store_by_hand(
    store: Callable[[bytes, str | None], object], form_again: Callable[..., Any], done: str, back: str
) -> Any:
    """Store the posted record (record_by_hand), flash `done`, go `back`; bad input shows the form again."""
    _record, errors, status = record_by_hand(store)
    if errors:
        return form_again(request.form, errors=errors, status=status)
    flash(done, "success")
    return redirect(back)
