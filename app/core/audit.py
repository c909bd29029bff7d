"""Audit trail written inside every flush, so no code path can change data unrecorded."""

from __future__ import annotations

import enum
from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.orm import Session as OrmSession

from app.core import clock
from app.models import AuditEntry, Provider

# Bookkeeping columns and secrets are never copied into the audit trail; a table adds its own
# with `__audit_skip__`. A table is audited when its class sets `__audited__ = True`.
SKIPPED = {"version", "updated_at", "created_at", "password_hash"}


def is_audited(obj: Any) -> bool:
    """Whether changes to this object are recorded (its class sets `__audited__`)."""
    return bool(getattr(type(obj), "__audited__", False))


def set_actor(session: OrmSession, *, user_id: int | None, name: str) -> None:
    """Record on the session who is making its changes."""
    session.info["actor"] = (user_id, name)


def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _columns(obj: Any) -> list[str]:
    skipped = SKIPPED | set(getattr(type(obj), "__audit_skip__", ()))
    return [attr.key for attr in sa.inspect(obj).mapper.column_attrs if attr.key not in skipped]


def _snapshot(obj: Any) -> dict[str, list[Any]]:
    """Column values of an object as [None, value] pairs, leaving out empty ones."""
    state = sa.inspect(obj)
    values = {key: _plain(state.attrs[key].loaded_value) for key in _columns(obj)}
    return {key: [None, value] for key, value in values.items() if value not in (None, [], "")}


def row_creation_changes(model: type, row: dict[str, Any]) -> dict[str, list[Any]]:
    """What a 'create' entry records for a row inserted without the ORM (as _snapshot does for objects)."""
    skipped = SKIPPED | set(getattr(model, "__audit_skip__", ()))
    changes = {}
    for key, value in row.items():
        if key not in skipped and (plain := _plain(value)) not in (None, [], ""):
            changes[key] = [None, plain]
    return changes


def _changes(obj: Any) -> dict[str, list[Any]]:
    state = sa.inspect(obj)
    changes = {}
    for key in _columns(obj):
        history = state.attrs[key].history
        if not history.has_changes():
            continue
        before = history.deleted[0] if history.deleted else None
        after = history.added[0] if history.added else None
        if _plain(before) != _plain(after):
            changes[key] = [_plain(before), _plain(after)]
    return changes


def _provider_id(obj: Any) -> int | None:
    if isinstance(obj, Provider):
        return obj.id
    return getattr(obj, "provider_id", None)


def _entry(obj: Any, action: str, changes: dict, actor: tuple[int | None, str]) -> dict:
    return {
        "at": clock.now(),
        "actor_id": actor[0],
        "actor_name": actor[1],
        "action": action,
        "entity": obj.__tablename__,
        "entity_id": obj.id,
        "provider_id": _provider_id(obj),
        "changes": changes,
    }


@event.listens_for(OrmSession, "after_flush")
def _record(session: OrmSession, _flush_context: Any) -> None:
    """Write one audit row per created, changed or deleted audited object."""
    actor = session.info.get("actor", (None, "system"))
    rows = []
    for obj in session.new:
        if is_audited(obj):
            rows.append(_entry(obj, "create", _snapshot(obj), actor))
    for obj in session.dirty:
        if is_audited(obj) and (changes := _changes(obj)):
            rows.append(_entry(obj, "update", changes, actor))
    for obj in session.deleted:
        if is_audited(obj):
            before = {key: [value, None] for key, (_, value) in _snapshot(obj).items()}
            rows.append(_entry(obj, "delete", before, actor))
    if rows:
        session.connection().execute(sa.insert(AuditEntry.__table__), rows)
