"""Login throttling, counted in the database so every worker agrees.

Failed logins are stored one row each (account name, client address, time). An attempt is refused (429)
when, not counting itself:

* this account from this address failed PAIR_LIMIT times within WINDOW (someone guessing one password);
* this address failed ADDRESS_LIMIT times within WINDOW, on any accounts (one client trying many names);
* the account failed ACCOUNT_CEILING times within CEILING_WINDOW from all addresses together (guessing
  spread over many addresses), *and* this address failed on this account within CEILING_WINDOW, *and*
  the account has not logged in from this address within KNOWN_FOR. An address without a failure on the
  account is still admitted, so the owner is never locked out by others; an address the owner logged in
  from before keeps the PAIR_LIMIT allowance (typos at home), and each other guessing address gets one
  try an hour instead of PAIR_LIMIT every WINDOW.

So failures made elsewhere never keep the owner out: a correct password from an address that has not
failed on the account is always checked. A good password clears that account's failures from that address
only, so the owner logging in resets nothing for an attacker elsewhere, and notes the address as known.

Each attempt is recorded as a failure *before* the password is checked, so parallel attempts in several
workers see each other and no burst gets past a limit; a refused attempt removes its own row (waiting out a
lockout does not extend it). The owner hears of a burst in the inbox: once an account collects NOTICE_AFTER
failures within WINDOW, one notice, and at most one per NOTICE_INTERVAL (app/accounts/users.py).

The client address is the one Werkzeug sees: behind a reverse proxy set GPUVET_PROXY_HOPS (ProxyFix), or
every client shares the proxy's address. When the database refuses the write (disk full, read-only, gone),
`Unavailable` is raised and the login answers 503.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session, col, func, select

from app.accounts import users
from app.core import clock
from app.core.clock import aware
from app.core.db import insert_new_rows
from app.models import LoginFailure
from app.models.user import LoginAddress

log = logging.getLogger(__name__)

WINDOW = timedelta(minutes=15)
PAIR_LIMIT = 5  # failed logins per account from one address within WINDOW
ADDRESS_LIMIT = 20  # failed logins per client address, on any accounts, within WINDOW
CEILING_WINDOW = timedelta(hours=1)
ACCOUNT_CEILING = 50  # failed logins per account from all addresses within CEILING_WINDOW
NOTICE_AFTER = PAIR_LIMIT  # failures on an account within WINDOW that make an inbox notice
KNOWN_FOR = timedelta(days=30)  # an address the account logged in from counts as known this long


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


class Unavailable(Exception):
    """The database refused to record the attempt (disk full, read-only): no password is checked."""


def _key(username: str, address: str) -> tuple[str, str]:
    return (username or "").strip()[:60], (address or "-")[:64]


def _wait(
    session: Session,
    condition: sa.ColumnElement[bool],
    limit: int,
    window: timedelta,
    mine: int,
    now: datetime,
) -> int:
    """Seconds until fewer than `limit` other failures match `condition` within `window` (0: now)."""
    times = session.exec(
        select(LoginFailure.failed_at)
        .where(condition, LoginFailure.id != mine, LoginFailure.failed_at > now - window)
        .order_by(col(LoginFailure.failed_at).desc())
        .limit(limit)
    ).all()
    if len(times) < limit:
        return 0
    return max(1, math.ceil((aware(times[-1]) + window - now).total_seconds()))


def _known(session: Session, attempt: Attempt, now: datetime) -> bool:
    """Whether the account logged in from this address within KNOWN_FOR."""
    found = select(LoginAddress.id).where(
        LoginAddress.username == attempt.username,
        LoginAddress.address == attempt.address,
        LoginAddress.last_success_at > now - KNOWN_FOR,
    )
    return session.exec(found).first() is not None


def _ceiling_wait(session: Session, attempt: Attempt, mine: int, now: datetime) -> int:
    """Seconds this address waits under the account's ceiling: 0 when under it, never failed here or known."""
    account = LoginFailure.username == attempt.username
    full = _wait(session, account, ACCOUNT_CEILING, CEILING_WINDOW, mine, now)
    if not full or _known(session, attempt, now):
        return 0
    own = _wait(session, account & (LoginFailure.address == attempt.address), 1, CEILING_WINDOW, mine, now)
    return min(full, own)


def _record(session: Session, attempt: Attempt, now: datetime) -> int:
    """Store the attempt as a failure (and drop expired ones); the row's id. Unavailable if it cannot."""
    try:
        session.connection().execute(
            sa.delete(LoginFailure).where(LoginFailure.failed_at <= now - CEILING_WINDOW)
        )
        row = LoginFailure(username=attempt.username, address=attempt.address, failed_at=now)
        session.add(row)
        session.commit()
    except sa.exc.OperationalError as exc:
        session.rollback()
        log.error("login attempt for %r not recorded: %s", attempt.username, exc.orig)
        raise Unavailable from exc
    return row.id


def admit(session: Session, *, username: str, address: str) -> Attempt:
    """Record the attempt as a failure, then raise Throttled when a limit (see the module) refuses it."""
    attempt = Attempt(*_key(username, address))
    now = clock.now()
    mine = _record(session, attempt, now)
    pair = (LoginFailure.username == attempt.username) & (LoginFailure.address == attempt.address)
    wait = max(
        _wait(session, pair, PAIR_LIMIT, WINDOW, mine, now),
        _wait(session, LoginFailure.address == attempt.address, ADDRESS_LIMIT, WINDOW, mine, now),
        _ceiling_wait(session, attempt, mine, now),
    )
    if wait:
        _forget(session, LoginFailure.id == mine)
        raise Throttled(wait)
    return attempt


def _forget(session: Session, condition: sa.ColumnElement[bool]) -> None:
    """Delete the matching failures; a database that refuses is only logged (nothing depends on it)."""
    try:
        session.connection().execute(sa.delete(LoginFailure).where(condition))
        session.commit()
    except sa.exc.OperationalError as exc:
        session.rollback()
        log.warning("login failures not cleared: %s", exc.orig)


def succeeded(session: Session, attempt: Attempt) -> None:
    """A good password: forget this account's failures from this address (others' stay counted), know it."""
    _forget(session, (LoginFailure.username == attempt.username) & (LoginFailure.address == attempt.address))
    try:
        _note_known(session, attempt, clock.now())
    except sa.exc.OperationalError as exc:
        session.rollback()
        log.warning("login address not noted: %s", exc.orig)


def _note_known(session: Session, attempt: Attempt, now: datetime) -> None:
    """Store (or refresh) the account's login from this address; forget addresses unused for KNOWN_FOR."""
    table = LoginAddress.__table__
    session.execute(sa.delete(table).where(table.c.last_success_at <= now - KNOWN_FOR))
    mine = (table.c.username == attempt.username) & (table.c.address == attempt.address)
    if not session.execute(sa.update(table).where(mine).values(last_success_at=now)).rowcount:
        row = {"username": attempt.username, "address": attempt.address, "last_success_at": now}
        insert_new_rows(session, table, [row], unique=["username", "address"])
    session.commit()


def failed(session: Session, attempt: Attempt) -> None:
    """A wrong password (the attempt stays counted): a burst of them tells the owner."""
    since = clock.now() - WINDOW
    recent = (LoginFailure.username == attempt.username) & (LoginFailure.failed_at > since)
    failures, addresses = session.exec(
        select(func.count(), func.count(sa.distinct(LoginFailure.address))).where(recent)
    ).one()
    if failures >= NOTICE_AFTER:
        users.notify_failed_logins(
            session,
            username=attempt.username,
            failures=failures,
            addresses=addresses,
            latest=attempt.address,
            minutes=int(WINDOW.total_seconds() // 60),
        )
