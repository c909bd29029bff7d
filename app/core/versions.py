"""Version numbers sent by clients, and the 409 that names who saved the record in between."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from app.core.errors import Conflict, InvalidInput, NotFound
from app.core.limits import MAX_ID
from app.models import AuditEntry

MAX_VERSION = MAX_ID  # versions live in the same INTEGER columns as ids
StaleDataError = sa.orm.exc.StaleDataError


@dataclass(frozen=True)
class VersionedKind:
    """A versioned table, how people call it, and where its edits are audited."""

    table: Any
    noun_zh: str
    noun_en: str
    audit_filter: Callable[[int], Any]


def expected_version(value: Any, *, noun_en: str = "record") -> int:
    """Parse the version a client says it edited: a positive integer (not a boolean), else 422."""
    if value is None or (isinstance(value, str) and value.strip() == ""):
        raise InvalidInput(f"缺少版本号 (version is required to change a {noun_en})", field="version")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise InvalidInput("版本号须为整数，如 3 (version must be an integer, e.g. 3)", field="version")
    text = str(value).strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 10 or int(text) > MAX_VERSION:
        raise InvalidInput(
            f"版本号须为 0-{MAX_VERSION} 的整数 (version must be an integer from 0 to {MAX_VERSION})",
            field="version",
        )
    return int(text)


def _conflict(session: Session, kind: VersionedKind, record_id: int, current: int, expected: int) -> Conflict:
    last = session.exec(
        select(AuditEntry).where(kind.audit_filter(record_id)).order_by(col(AuditEntry.id).desc())
    ).first()
    who = f"{last.actor_name} 于 {last.at:%Y-%m-%d %H:%M}" if last else "他人"
    return Conflict(
        f"该{kind.noun_zh}已被 {who} 修改（当前版本 {current}，你编辑的是版本 {expected}）。"
        "请重新打开页面，核对后再保存。"
        f" (Someone else saved this {kind.noun_en} after you opened it: now version {current},"
        f" yours {expected}. Reload and re-apply your change.)",
        field="version",
    )


def check_version(session: Session, kind: VersionedKind, record: Any, expected: Any) -> int:
    """Refuse a change made to another version than the one loaded (the database re-checks at flush)."""
    wanted = expected_version(expected, noun_en=kind.noun_en)
    if wanted != record.version:
        raise _conflict(session, kind, record.id, record.version, wanted)
    return wanted


def commit_versioned(
    session: Session, kind: VersionedKind, record_id: int | None, expected: int | None
) -> None:
    """Commit; when the versioned UPDATE/DELETE matched no row, another writer won: 409 (or 404 if gone)."""
    try:
        session.commit()
    except StaleDataError:
        session.rollback()
        current = session.exec(select(kind.table.version).where(kind.table.id == record_id)).first()
        if current is None:
            raise NotFound(
                f"该{kind.noun_zh}已被删除 (this {kind.noun_en} was deleted meanwhile)", field="id"
            ) from None
        raise _conflict(session, kind, record_id, current, expected or 0) from None
