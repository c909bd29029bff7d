"""The registry's offers as advice reads them, kept per process and refreshed from what changed.

Reading and tabulating 20,000 offers takes several times as long as ranking them. The registry_version
counter (moved by database triggers on every table advice reads, app.models.registry_version) says when a
kept table is out of date; reading it is one statement. The same triggers stamp each changed provider with
the counter (provider_version), so an out-of-date table is refreshed by reading again only the providers
changed since it was read; many changes at once (an import) read everything again. The counter is read
before the offers, so a change committed in between only makes the next request read that provider again.
A transaction that wrote to the database itself neither uses nor fills the cache: its own changes are not
counted until it commits.
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
from app.cases import registry_facts  # read as a module attribute, so that tests can replace offer_facts
from app.models.registry_version import ROW_ID, ProviderVersion, RegistryVersion
from benchmarks.gc_pause import without_gc

KEEP = 2  # tables kept per process (one per database, day and kind of links, newest first)
# Read everything again when more than REREAD_SHARE of the providers (and more than REREAD_AFTER) changed
# at once, or once the offers refreshed since the last full read outnumber the table (their codes' gaps
# then cost more than a read).
REREAD_SHARE = 1 / 8
REREAD_AFTER = 16
_LOCK = threading.Lock()
_KEPT: OrderedDict[tuple[Any, ...], tuple[int, OfferTable]] = OrderedDict()
_VERSION = RegistryVersion.__table__
_STAMPS = ProviderVersion.__table__
Links = Callable[[int], str | None] | None


def offer_table(
    session: Session, *, today: date, check_link: Links = None, run_link: Links = None
) -> OfferTable:
    """Every offer's facts and columns (registry_facts.offer_facts), kept while the registry is unchanged and
    refreshed from the providers changed since."""
    version = registry_version(session)
    if version is None:
        return _read(session, today, check_link, run_link)
    key = (session.connection().engine.url.render_as_string(), today, check_link, run_link)
    with _LOCK:
        found = _KEPT.get(key)
        if found is not None:
            _KEPT.move_to_end(key)
    if found is not None and found[0] >= version:  # another request may have kept a newer one meanwhile
        return found[1]
    if found is None:
        table = _read(session, today, check_link, run_link)
    else:
        table = _refreshed(session, found, today, check_link, run_link)
    with _LOCK:
        newer = _KEPT.get(key)
        if newer is None or newer[0] < version:
            _KEPT[key] = (version, table)
            _KEPT.move_to_end(key)
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


def _read(session: Session, today: date, check_link: Links, run_link: Links) -> OfferTable:
    facts = registry_facts.offer_facts(session, today=today, check_link=check_link, run_link=run_link)
    with without_gc():
        return OfferTable(facts).prepare(columns_read())


def _refreshed(
    session: Session, kept: tuple[int, OfferTable], today: date, check_link: Links, run_link: Links
) -> OfferTable:
    """The kept table with the offers of the providers changed since it was read, read again."""
    version, table = kept
    stamps = sa.select(_STAMPS.c.provider_id).where(_STAMPS.c.n > version)
    changed = set(session.connection().execute(stamps).scalars())
    many = len(changed) > max(REREAD_AFTER, len(table.providers) * REREAD_SHARE)
    if many or table.replaced > table.size:
        return _read(session, today, check_link, run_link)
    fresh = registry_facts.offer_facts(
        session, today=today, check_link=check_link, run_link=run_link, providers=changed
    )
    with without_gc():
        return table.replacing(changed, fresh).prepare(columns_read())
