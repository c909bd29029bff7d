"""provider.latest_check_run_id: each provider's newest check run, kept in the transaction that stores a run.

The pointer only moves forward (UPDATE ... WHERE pointer IS NULL OR pointer < new id), so two writers storing
runs of one provider at once leave it on the newer run whichever commits first: PostgreSQL re-checks the
condition on the row the other writer committed. Every CheckRun added through a session advances it (the
after_insert hook below: run_check, tests); bulk inserts call `advance_many`; whoever deletes runs calls
`recompute` (the foreign key first sets a pointer to a deleted run to NULL, so it never dangles).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event

from app.models.checks import CheckRun
from app.models.provider import Provider

PROVIDER = Provider.__table__
POINTER = PROVIDER.c.latest_check_run_id


def latest_run_ids(provider_ids: Iterable[int] | None = None) -> Any:
    """Select of each provider's latest check run id (of `provider_ids` only, when given): its pointer."""
    statement = sa.select(POINTER).where(POINTER.is_not(None))
    if provider_ids is not None:
        statement = statement.where(PROVIDER.c.id.in_(sorted(set(provider_ids))))
    return statement


def is_latest_run() -> Any:
    """Join condition: the check run is its provider's latest (the provider's pointer names it)."""
    return CheckRun.id == POINTER


def newest_run_id() -> Any:
    """Scalar subquery: the id of the provider's newest stored run (correlated to provider.id)."""
    runs = CheckRun.__table__
    return sa.select(sa.func.max(runs.c.id)).where(runs.c.provider_id == PROVIDER.c.id).scalar_subquery()


def _forward_to(new_id: Any) -> Any:
    return sa.or_(POINTER.is_(None), new_id > POINTER)


def advance(connection: Any, *, provider_id: int, run_id: int) -> None:
    """Point the provider at `run_id` unless it already points at a newer run."""
    connection.execute(
        sa.update(PROVIDER)
        .where(PROVIDER.c.id == provider_id, _forward_to(run_id))
        .values(latest_check_run_id=run_id)
    )


def advance_many(connection: Any, provider_ids: Iterable[int]) -> None:
    """One statement for a batch: point each provider at its newest run, never at an older one."""
    ids = sorted(set(provider_ids))
    if ids:
        newest = newest_run_id()
        connection.execute(
            sa.update(PROVIDER)
            .where(PROVIDER.c.id.in_(ids), _forward_to(newest))
            .values(latest_check_run_id=newest)
        )


def recompute(connection: Any, provider_ids: Iterable[int] | None = None) -> None:
    """Set the pointer from the stored runs, backwards too (after deleting runs; None: every provider)."""
    statement = sa.update(PROVIDER).values(latest_check_run_id=newest_run_id())
    if provider_ids is not None:
        statement = statement.where(PROVIDER.c.id.in_(sorted(set(provider_ids))))
    connection.execute(statement)


@event.listens_for(CheckRun, "after_insert")
def _advance_on_insert(_mapper: Any, connection: sa.Connection, run: CheckRun) -> None:
    """A run added through a session moves its provider's pointer in the same flush."""
    advance(connection, provider_id=run.provider_id, run_id=run.id)  # type: ignore[arg-type]
