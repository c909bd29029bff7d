"""The registry's offers as advice reads them, kept per process until the registry changes.

Reading and tabulating 20,000 offers takes several times as long as ranking them. The registry_version
counter (moved by database triggers on every table advice reads, app.models.registry_version) says when a
kept table is out of date; reading it is one statement. The counter is read before the offers, so a change
committed in between only makes the next request read them again. A transaction that wrote to the database
itself neither uses nor fills the cache: its own changes are not counted until it commits.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import date
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session

from app.advice.deciding import columns_read
from app.advice.offer_table import OfferTable
from app.models.registry_version import ROW_ID, RegistryVersion
from app.services import cases  # cases advises through this module: only its functions are read here
from benchmarks.gc_pause import without_gc

KEEP = 2  # tables kept per process (one per database, day and kind of links, newest first)
_LOCK = threading.Lock()
_KEPT: OrderedDict[tuple[Any, ...], OfferTable] = OrderedDict()
_VERSION = RegistryVersion.__table__


def offer_table(
    session: Session,
    *,
    today: date,
    check_link: Callable[[int], str | None] | None = None,
    run_link: Callable[[int], str | None] | None = None,
) -> OfferTable:
    """Every offer's facts and columns (cases.offer_facts), from the cache while the registry is unchanged."""
    version = registry_version(session)
    if version is None:
        return _read(session, today, check_link, run_link)
    key = (session.connection().engine.url.render_as_string(), version, today, check_link, run_link)
    with _LOCK:
        kept = _KEPT.get(key)
        if kept is not None:
            _KEPT.move_to_end(key)
            return kept
    table = _read(session, today, check_link, run_link)
    with _LOCK:
        _KEPT[key] = table
        while len(_KEPT) > KEEP:
            _KEPT.popitem(last=False)
    return table


def registry_version(session: Session) -> int | None:
    """The counter, or None when it cannot vouch for a kept table (no counter row, or this transaction
    has written)."""
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        wrote = sa.func.pg_current_xact_id_if_assigned().is_not(None)
        row = connection.execute(sa.select(_VERSION.c.n, wrote).where(_VERSION.c.id == ROW_ID)).first()
        return None if row is None or row[1] else int(row[0])
    # pysqlite opens a transaction only before a write: one open means this session wrote
    if connection.connection.dbapi_connection.in_transaction:  # type: ignore[union-attr]
        return None
    found = connection.execute(sa.select(_VERSION.c.n).where(_VERSION.c.id == ROW_ID)).scalar()
    return None if found is None else int(found)


def clear() -> None:
    """Forget every kept table."""
    with _LOCK:
        _KEPT.clear()


def _read(
    session: Session,
    today: date,
    check_link: Callable[[int], str | None] | None,
    run_link: Callable[[int], str | None] | None,
) -> OfferTable:
    facts = cases.offer_facts(session, today=today, check_link=check_link, run_link=run_link)
    with without_gc():
        return OfferTable(facts).prepare(columns_read())
