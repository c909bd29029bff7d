"""A button's action on a record: run it, flash how it went, go back to the record's page."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import flash, redirect

from app.core.errors import Conflict


def act_and_return(action: Callable[[], object], done: str, back: str) -> Any:
    """Run `action`; a Conflict is flashed as a warning, success as `done`; then redirect to `back`."""
    try:
        action()
    except Conflict as exc:
        flash(exc.errors[0].message, "warning")
    else:
        flash(done, "info")
    return redirect(back)
