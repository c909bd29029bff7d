"""Login throttling per account and per client address, counted in the database so every worker agrees."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session, select

from app.localtime import aware
from app.models import LoginFailure

WINDOW = timedelta(minutes=15)
ACCOUNT_LIMIT = 5  # failed logins per account name within WINDOW
ADDRESS_LIMIT = 20  # failed logins per client address within WINDOW


@dataclass(frozen=True)
class Attempt:
    """A login attempt admitted for a password check (already counted as a failure until it succeeds)."""

    username: str
    address: str


class Throttled(Exception):
    """Too many failed logins: `retry_after` seconds until the next attempt is allowed."""

    def __init__(self, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(f"retry after {retry_after} s")


def _key(username: str, address: str) -> tuple[str, str]:
    return (username or "").strip()[:60], (address or "-")[:64]


def _wait(session: Session, condition: sa.ColumnElement[bool], limit: int, mine: int, now: datetime) -> int:
    """Seconds until fewer than `limit` other failures match `condition` within the window."""
    times = session.exec(
        select(LoginFailure.failed_at)
        .where(condition, LoginFailure.id != mine, LoginFailure.failed_at > now - WINDOW)
        .order_by(LoginFailure.failed_at.desc())
        .limit(limit)
    ).all()
    if len(times) < limit:
        return 0
    return max(1, math.ceil((aware(times[-1]) + WINDOW - now).total_seconds()))


def admit(session: Session, *, username: str, address: str) -> Attempt:
    """Record the attempt as a failure, then raise Throttled when its account or address is over the limit."""
    # Recording before checking lets parallel attempts in several workers see each other, so no burst gets
    # past the limit; a refused attempt removes its own row, and a successful login clears the account's.
    username, address = _key(username, address)
    now = datetime.now(UTC)
    _forget_old(session, now)
    row = LoginFailure(username=username, address=address, failed_at=now)
    session.add(row)
    session.commit()
    wait = max(
        _wait(session, LoginFailure.username == username, ACCOUNT_LIMIT, row.id, now),
        _wait(session, LoginFailure.address == address, ADDRESS_LIMIT, row.id, now),
    )
    if wait:
        session.delete(row)
        session.commit()
        raise Throttled(wait)
    return Attempt(username, address)


def _forget_old(session: Session, now: datetime) -> None:
    session.connection().execute(sa.delete(LoginFailure).where(LoginFailure.failed_at <= now - WINDOW))


def succeeded(session: Session, attempt: Attempt) -> None:
    """A good password: forget the account's failures (the address keeps the failures on other accounts)."""
    session.connection().execute(sa.delete(LoginFailure).where(LoginFailure.username == attempt.username))
    session.commit()
