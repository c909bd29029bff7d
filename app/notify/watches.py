"""Watches, notification settings and the in-app inbox of each user (issue 12, notifications).

A user watches single providers (ProviderWatch rows) or every provider (NotifySettings.watch_all); each
change event stored for a watched provider lands in the watcher's inbox, and goes out by e-mail and webhook
(app/notify/dispatch.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from email_validator import EmailNotValidError, validate_email
from flask_babel import gettext as _
from sqlmodel import Session, col, func, select

from app.core import clock
from app.core.db import insert_new_rows
from app.core.errors import InvalidInput, NotFound
from app.core.records import get_or_404
from app.models.notify import InboxItem, NotifySettings, ProviderWatch
from app.models.provider import Provider
from app.models.watch import ChangeEvent

BACKFILL_DAYS = 7  # a user's first look at the inbox shows the changes of this many days


# ---------------------------------------------------------------- settings
def _stored(session: Session, user_id: int) -> NotifySettings | None:
    return session.exec(select(NotifySettings).where(NotifySettings.user_id == user_id)).first()


def settings_of(session: Session, user_id: int) -> NotifySettings:
    """The user's notification settings; a user who never saved any watches every provider (the default
    for new users; users of before it have a stored row saying what they had)."""
    return _stored(session, user_id) or NotifySettings(user_id=user_id, watch_all=True)


def ensure_settings(session: Session, user_id: int) -> NotifySettings:
    """The user's stored settings; the first time (a new user's first visit), the defaults are stored and
    the changes of the last BACKFILL_DAYS days of what they watch are put into their inbox."""
    found = _stored(session, user_id)
    if found is not None:
        return found
    current = settings_of(session, user_id)
    session.add(current)
    try:
        session.commit()
    except sa.exc.IntegrityError:  # a second tab at the same moment stored it first
        session.rollback()
        return settings_of(session, user_id)
    backfill(session, user_id, days=BACKFILL_DAYS)
    return current


def backfill(session: Session, user_id: int, *, days: int, now: Any = None) -> int:
    """Put the change events of the last `days` days of the providers the user watches into their inbox
    (unread; those there already stay as they are); returns how many were added."""
    since = (now or clock.now()) - timedelta(days=days)
    statement = select(ChangeEvent.id, ChangeEvent.created_at).where(col(ChangeEvent.created_at) >= since)
    if not settings_of(session, user_id).watch_all:
        watched = select(ProviderWatch.provider_id).where(ProviderWatch.user_id == user_id)
        statement = statement.where(col(ChangeEvent.provider_id).in_(watched))
    rows = [
        {"user_id": user_id, "event_id": event_id, "created_at": created_at}
        for event_id, created_at in session.exec(statement).all()
    ]
    table = InboxItem.__table__
    added = insert_new_rows(session, table, rows, unique=["user_id", "event_id"]) if rows else []
    session.commit()
    return len(added)


def _checked_email(email: str | None) -> str | None:
    email = (email or "").strip()
    if not email:
        return None
    try:
        return validate_email(email, check_deliverability=False).normalized
    except EmailNotValidError as exc:
        raise InvalidInput(_("邮箱地址无效：%(detail)s", detail=exc), field="email") from None


def save_settings(
    session: Session, user_id: int, *, watch_all: bool, email_enabled: bool, email: str | None
) -> NotifySettings:
    """Store watch-all and the e-mail choice; e-mail on needs an address."""
    address = _checked_email(email)
    if email_enabled and not address:
        raise InvalidInput(_("开启邮件通知须填写邮箱地址"), field="email")
    current = ensure_settings(session, user_id)
    current.watch_all, current.email_enabled, current.email = bool(watch_all), bool(email_enabled), address
    current.updated_at = clock.now()
    session.add(current)
    session.commit()
    return current


def set_watch_all(session: Session, user_id: int, watch_all: bool) -> NotifySettings:
    """Watch every provider (or stop), leaving the e-mail choice as it is."""
    current = ensure_settings(session, user_id)
    current.watch_all = bool(watch_all)
    current.updated_at = clock.now()
    session.add(current)
    session.commit()
    return current


# ---------------------------------------------------------------- watches
def _provider(session: Session, provider_id: int) -> Provider:
    return get_or_404(
        session, Provider, provider_id, _("供应商 %(id)s 不存在", id=provider_id), field="provider_id"
    )


def is_watching(session: Session, user_id: int, provider_id: int) -> bool:
    """Whether the user watches this provider by name (watch-all aside)."""
    statement = select(ProviderWatch.id).where(
        ProviderWatch.user_id == user_id, ProviderWatch.provider_id == provider_id
    )
    return session.exec(statement).first() is not None


def watch(session: Session, user_id: int, provider_id: int) -> bool:
    """Watch a provider; returns False when it was watched already."""
    _provider(session, provider_id)
    if is_watching(session, user_id, provider_id):
        return False
    session.add(ProviderWatch(user_id=user_id, provider_id=provider_id))
    try:
        session.commit()
    except sa.exc.IntegrityError:  # a second click at the same moment: watched either way
        session.rollback()
        return False
    return True


def unwatch(session: Session, user_id: int, provider_id: int) -> bool:
    """Stop watching a provider; returns False when it was not watched."""
    _provider(session, provider_id)
    found = session.exec(
        select(ProviderWatch).where(
            ProviderWatch.user_id == user_id, ProviderWatch.provider_id == provider_id
        )
    ).first()
    if found is None:
        return False
    session.delete(found)
    session.commit()
    return True


def watched_providers(session: Session, user_id: int) -> list[tuple[ProviderWatch, Provider]]:
    """The providers a user watches by name, by name."""
    statement = (
        select(ProviderWatch, Provider)
        .join(Provider, col(Provider.id) == ProviderWatch.provider_id)
        .where(ProviderWatch.user_id == user_id)
        .order_by(col(Provider.legal_name))
    )
    return list(session.exec(statement).all())


# ---------------------------------------------------------------- inbox
@dataclass(frozen=True)
class InboxEntry:
    """An inbox row with its event and the provider's name."""

    item: InboxItem
    event: ChangeEvent
    provider_name: str


def unread_count(session: Session, user_id: int) -> int:
    """How many inbox items the user has not read."""
    statement = (
        select(func.count())
        .select_from(InboxItem)
        .where(InboxItem.user_id == user_id, col(InboxItem.read_at).is_(None))
    )
    return session.exec(statement).one()


def inbox(
    session: Session, user_id: int, *, unread_only: bool = False, limit: int = 50, offset: int = 0
) -> tuple[list[InboxEntry], int]:
    """The user's inbox newest first (one page) and how many items match in all."""
    where: list[Any] = [InboxItem.user_id == user_id]
    if unread_only:
        where.append(col(InboxItem.read_at).is_(None))
    total = session.exec(select(func.count()).select_from(InboxItem).where(*where)).one()
    statement = (
        select(InboxItem, ChangeEvent, Provider.short_name, Provider.legal_name)
        .join(ChangeEvent, col(ChangeEvent.id) == InboxItem.event_id)
        .join(Provider, col(Provider.id) == ChangeEvent.provider_id)
        .where(*where)
        .order_by(col(InboxItem.id).desc())
        .offset(offset)
        .limit(limit)
    )
    rows = [
        InboxEntry(item, event, short or legal) for item, event, short, legal in session.exec(statement).all()
    ]
    return rows, total


def mark_read(session: Session, user_id: int, item_ids: list[int] | None = None) -> int:
    """Mark the given items (None: every item) of the user read; returns how many changed."""
    table = InboxItem.__table__
    statement = (
        sa.update(table)
        .where(table.c.user_id == user_id, table.c.read_at.is_(None))
        .values(read_at=clock.now())
    )
    if item_ids is not None:
        if not item_ids:
            return 0
        statement = statement.where(table.c.id.in_(item_ids))
    changed = session.execute(statement).rowcount
    session.commit()
    return changed


def open_item(session: Session, user_id: int, item_id: int) -> InboxItem:
    """The user's inbox item, marked read (NotFound for someone else's)."""
    item = session.get(InboxItem, item_id)
    if item is None or item.user_id != user_id:
        raise NotFound(_("收件箱条目 %(id)s 不存在", id=item_id), field="item_id")
    if item.read_at is None:
        mark_read(session, user_id, [item_id])
        session.refresh(item)
    return item


def event_of(session: Session, item: InboxItem) -> ChangeEvent:
    """The change event an inbox item points to."""
    event = session.get(ChangeEvent, item.event_id)
    assert event is not None  # the item is deleted with its event
    return event
