"""Fact sources: named functions that give the vetting rules what the registry alone does not hold.

A source is `fn(session, provider) -> Any`, registered with @fact_source("name") in any module of
the domain packages (footer scrape results, official lookups, benchmark summaries ...). Sources read what is
already stored; they never fetch from the network, so a check run stays fast and repeatable. A source
with nothing to say returns None; the key is then left out of the facts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sqlmodel import Session

from app.core.plugins import register_once

logger = logging.getLogger(__name__)

FactFunction = Callable[[Session, Any], Any]
FACT_SOURCES: dict[str, FactFunction] = {}


def fact_source(name: str) -> Callable[[FactFunction], FactFunction]:
    """Register `fn(session, provider)` as the source of fact `name`; a duplicate name raises."""

    def decorator(fn: FactFunction) -> FactFunction:
        register_once(FACT_SOURCES, name, fn, "fact source")
        return fn

    return decorator


def load_fact_sources() -> dict[str, FactFunction]:
    """Import every service module (so their sources register) and return the registry."""
    from app.core.plugins import import_domains

    import_domains()
    return FACT_SOURCES


def gather_facts_with_errors(session: Session, provider: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """Facts from every source, plus the error of each source that failed (it is left out)."""
    facts: dict[str, Any] = {}
    errors: dict[str, str] = {}
    # On PostgreSQL a failed statement aborts the transaction: each source runs in a savepoint there.
    # (SQLite keeps the transaction usable, and pysqlite's savepoints would end it early.)
    savepoints = session.get_bind().dialect.name == "postgresql"
    for name, source in sorted(load_fact_sources().items()):
        try:
            if savepoints:
                with session.begin_nested():
                    value = source(session, provider)
            else:
                value = source(session, provider)
        except Exception as exc:  # one broken source must not stop the whole check
            logger.exception("fact source %s failed for provider %s", name, getattr(provider, "id", None))
            errors[name] = f"{type(exc).__name__}: {exc}"[:500]
            continue
        if value is not None:
            facts[name] = value
    return facts, errors


def gather_facts(session: Session, provider: Any) -> dict[str, Any]:
    """Facts from every registered source, by name (sources that fail or return None are left out)."""
    return gather_facts_with_errors(session, provider)[0]
