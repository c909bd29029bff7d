"""Load one record by its id, or raise the NotFound that pages, API and CLI answer as 404."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlmodel import Session

from app.core.errors import NotFound

Record = TypeVar("Record")


def get_or_404(
    session: Session, model: type[Record], record_id: Any, message: str, *, field: str, **options: Any
) -> Record:
    """The `model` row with this id (session.get `options` passed on), or NotFound(message) naming `field`."""
    record = session.get(model, record_id, **options)
    if record is None:
        raise NotFound(message, field=field)
    return record
