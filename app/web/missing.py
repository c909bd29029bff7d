"""A page's record that is not there answers the plain 404 page, as a wrong address does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask import abort

from app.core.db import get_session
from app.core.errors import NotFound

Record = TypeVar("Record")


def or_404(find: Callable[..., Record], **keys: Any) -> Record:
    """find(session, **keys) on the request's session; its NotFound becomes the plain 404 page."""
    try:
        return find(get_session(), **keys)
    except NotFound:
        abort(404)
