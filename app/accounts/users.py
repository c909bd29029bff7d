"""Accounts: create users, check passwords, end sessions, issue, list, revoke and resolve API tokens;
notices to a user about their own account (failed logins)."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import secrets
from collections.abc import Iterator
from datetime import datetime, timedelta

import sqlalchemy as sa
from flask_babel import gettext as _
from sqlmodel import Session, select

from app.accounts import passwords
from app.core import clock
from app.core.clock import aware
from app.core.db import insert_new_rows
from app.core.errors import Conflict, InvalidInput, NotFound, not_one_of
from app.models import ApiToken, User
from app.models.enums import Role
from app.models.user import AccountNotice

log = logging.getLogger(__name__)

# last_used_at is written at most this often per token, so API reads need no write lock.
TOKEN_TOUCH_INTERVAL = timedelta(minutes=1)
# How long the last-use note waits for a database lock before giving up (the request goes on regardless).
TOUCH_LOCK_WAIT_MS = 100
MAX_TOKEN_DAYS = 3650
# At most one notice about failed logins per account within this time (one per burst, not per failure).
NOTICE_INTERVAL = timedelta(hours=1)
LOGIN_FAILURES = "login_failures"


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_user(session: Session, *, username: str, password: str, role: str) -> User:
    """Create an account with a hashed password."""
    username = (username or "").strip()
    if not 2 <= len(username) <= 60:
        raise InvalidInput(_("用户名须为 2-60 个字符"), field="username")
    if role not in {r.value for r in Role}:
        raise InvalidInput([not_one_of("role", Role)])
    passwords.check_policy(password, username=username)
    if session.exec(select(User).where(User.username == username)).first():
        raise Conflict(_("用户 %(name)s 已存在", name=username), field="username")
    user = User(username=username, password_hash=passwords.hash_password(password), role=Role(role))
    session.add(user)
    session.commit()
    return user


def get_user(session: Session, *, username: str) -> User:
    """Find an account by name, or raise NotFound."""
    user = session.exec(select(User).where(User.username == username)).first()
    if user is None:
        raise NotFound(_("用户 %(name)s 不存在", name=username), field="username")
    return user


def authenticate(session: Session, *, username: str, password: str) -> User | None:
    """Return the active user whose password matches, else None; unknown users cost the same hash check."""
    user = session.exec(select(User).where(User.username == (username or "").strip()[:60])).first()
    matches = passwords.verify(user.password_hash if user is not None else None, password)
    if user is None or not matches or not user.active:
        return None
    return user


def end_sessions(user: User) -> None:
    """Invalidate every login session of `user` (their stored session version no longer matches)."""
    user.session_version = (user.session_version or 0) + 1


def revoke_all_tokens(session: Session, user: User) -> None:
    """Revoke every API token of `user` for good (reactivating the account does not bring one back)."""
    session.execute(
        sa.update(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=clock.now())
    )


def end_access(session: Session, user: User) -> None:
    """End every way in that the old password or account state gave: login sessions and API tokens."""
    end_sessions(user)
    revoke_all_tokens(session, user)


def logout(session: Session, *, user_id: int) -> None:
    """Logging out ends all of the user's sessions, so a copied session cookie stops working too."""
    user = session.get(User, user_id)
    if user is not None:
        end_sessions(user)
        session.commit()


def token_state(api_token: ApiToken, now: datetime | None = None) -> str:
    """'active', 'expired' or 'revoked'."""
    if api_token.revoked_at is not None:
        return "revoked"
    expires = aware(api_token.expires_at)
    if expires is not None and expires <= (now or clock.now()):
        return "expired"
    return "active"


def _expiry(expires_days: int | None) -> datetime | None:
    if expires_days is None:
        return None
    if isinstance(expires_days, bool) or not 1 <= expires_days <= MAX_TOKEN_DAYS:
        raise InvalidInput(_("有效天数须为 1-%(most)s", most=MAX_TOKEN_DAYS), field="expires_days")
    return clock.now() + timedelta(days=expires_days)


def issue_token(session: Session, *, username: str, expires_days: int | None = None) -> str:
    """Create a new API token for a user, optionally expiring after some days; only its hash is stored."""
    user = get_user(session, username=username)
    expires_at = _expiry(expires_days)
    token = "gv_" + secrets.token_urlsafe(32)
    session.add(ApiToken(user_id=user.id, token_hash=_token_hash(token), expires_at=expires_at))
    session.commit()
    return token


def list_tokens(session: Session, *, user_id: int | None = None) -> list[tuple[ApiToken, str]]:
    """Tokens with their owner's name, newest first; all users' when `user_id` is None."""
    query = select(ApiToken, User.username).join(User, User.id == ApiToken.user_id)
    if user_id is not None:
        query = query.where(ApiToken.user_id == user_id)
    return [(token, name) for token, name in session.exec(query.order_by(ApiToken.id.desc())).all()]


def revoke_token(session: Session, *, token_id: int, owner_id: int | None = None) -> ApiToken:
    """Revoke a token (kept, marked revoked); with `owner_id`, only that user's own tokens are found."""
    api_token = session.get(ApiToken, token_id)
    if api_token is None or (owner_id is not None and api_token.user_id != owner_id):
        raise NotFound(_("令牌 %(id)s 不存在", id=token_id), field="id")
    if api_token.revoked_at is None:
        api_token.revoked_at = clock.now()
        session.commit()
    return api_token


def user_for_token(session: Session, *, token: str) -> User | None:
    """Resolve a bearer token to its active user; expired or revoked tokens resolve to nobody."""
    api_token = session.exec(select(ApiToken).where(ApiToken.token_hash == _token_hash(token))).first()
    if api_token is None or token_state(api_token) != "active":
        return None
    user = session.get(User, api_token.user_id)
    if user is None or not user.active:
        return None
    note_token_use(session.get_bind(), api_token)
    return user


@contextlib.contextmanager
def _short_lock_wait(connection: sa.Connection) -> Iterator[None]:
    """Wait only briefly for locks on this connection; SQLite's pooled busy timeout is put back after."""
    if connection.dialect.name != "sqlite":
        connection.exec_driver_sql(f"SET LOCAL lock_timeout = '{TOUCH_LOCK_WAIT_MS}ms'")
        yield
        return
    before = connection.exec_driver_sql("PRAGMA busy_timeout").scalar()
    connection.exec_driver_sql(f"PRAGMA busy_timeout = {TOUCH_LOCK_WAIT_MS}")
    try:
        yield
    finally:
        connection.rollback()
        connection.exec_driver_sql(f"PRAGMA busy_timeout = {int(before)}")


def note_token_use(engine: sa.Engine, api_token: ApiToken) -> None:
    """Write last_used_at at most once a minute, on its own connection; a locked database is only logged."""
    # The caller's session is never written, so an API read never needs the write lock.
    now = clock.now()
    last = aware(api_token.last_used_at)
    if last is not None and now - last < TOKEN_TOUCH_INTERVAL:
        return
    stale = sa.or_(ApiToken.last_used_at.is_(None), ApiToken.last_used_at < now - TOKEN_TOUCH_INTERVAL)
    statement = sa.update(ApiToken).where(ApiToken.id == api_token.id, stale).values(last_used_at=now)
    try:
        with engine.connect() as connection, _short_lock_wait(connection):
            connection.execute(statement)
            connection.commit()
    except sa.exc.DBAPIError as exc:
        log.warning("api token %s: last use not recorded (%s)", api_token.id, exc.orig)


def list_users(session: Session) -> list[User]:
    """Every account, by name."""
    return list(session.exec(select(User).order_by(User.username)).all())


def _active_admins(session: Session) -> int:
    return len(session.exec(select(User).where(User.role == Role.admin, User.active)).all())


def update_user(
    session: Session, *, user_id: int, role: str | None = None, active: bool | None = None, acting_id: int
) -> User:
    """Change an account's role or active flag; the last active admin and one's own account are protected."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(_("用户 %(name)s 不存在", name=user_id), field="id")
    if role is not None and role not in {r.value for r in Role}:
        raise InvalidInput([not_one_of("role", Role)])
    demotes = role is not None and role != Role.admin and user.role == Role.admin
    deactivates = active is False and user.active
    if (demotes or deactivates) and user.id == acting_id:
        raise InvalidInput(_("不能降低自己的角色或停用自己"), field="role")
    if (demotes or deactivates) and user.role == Role.admin and _active_admins(session) <= 1:
        raise Conflict(_("至少要保留一名启用的管理员"), field="role")
    if role is not None:
        user.role = Role(role)
    if active is not None:
        user.active = active
    if deactivates:
        end_access(session, user)  # after the changes above, so they are flushed (and audited) as one
    session.commit()
    return user


def set_password(session: Session, *, user_id: int, password: str) -> User:
    """Replace an account's password; every session and API token of the account ends."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(_("用户 %(name)s 不存在", name=user_id), field="id")
    passwords.check_policy(password, username=user.username)
    user.password_hash = passwords.hash_password(password)
    end_access(session, user)
    session.commit()
    return user


def notify_failed_logins(
    session: Session, *, username: str, failures: int, addresses: int, latest: str, minutes: int
) -> bool:
    """Tell the owner of `username` (inbox) of `failures` failed logins within `minutes`.

    At most one notice per NOTICE_INTERVAL. True when a notice was stored; an unknown name, or a database
    that refuses the write, stores none.
    """
    user = session.exec(select(User).where(User.username == username)).first()
    if user is None:
        return False
    now = clock.now()
    recent = select(AccountNotice.id).where(
        AccountNotice.user_id == user.id,
        AccountNotice.kind == LOGIN_FAILURES,
        AccountNotice.created_at > now - NOTICE_INTERVAL,
    )
    row = {
        "user_id": user.id,
        "kind": LOGIN_FAILURES,
        "dedupe_key": f"{LOGIN_FAILURES}:{user.id}:{now:%Y%m%d%H}",
        "details": {
            "failures": failures,
            "addresses": addresses,
            "latest_address": latest,
            "minutes": minutes,
        },
        "created_at": now,
    }
    try:
        if session.exec(recent).first() is not None:
            return False
        stored = insert_new_rows(session, AccountNotice.__table__, [row], unique=["dedupe_key"])
        session.commit()
    except sa.exc.OperationalError as exc:
        session.rollback()
        log.warning("notice about failed logins for %s not stored (%s)", username, exc.orig)
        return False
    return bool(stored)


def unread_notices(session: Session, user_id: int) -> list[AccountNotice]:
    """The user's unread account notices, newest first."""
    query = select(AccountNotice).where(AccountNotice.user_id == user_id, AccountNotice.read_at.is_(None))
    return list(session.exec(query.order_by(AccountNotice.id.desc())).all())


def unread_notice_count(session: Session, user_id: int) -> int:
    """How many account notices the user has not read."""
    query = select(sa.func.count()).where(AccountNotice.user_id == user_id, AccountNotice.read_at.is_(None))
    return session.exec(query).one()


def mark_notices_read(session: Session, user_id: int) -> int:
    """Mark every account notice of the user read; how many changed."""
    statement = (
        sa.update(AccountNotice)
        .where(AccountNotice.user_id == user_id, AccountNotice.read_at.is_(None))
        .values(read_at=clock.now())
    )
    changed = session.execute(statement).rowcount
    session.commit()
    return changed
