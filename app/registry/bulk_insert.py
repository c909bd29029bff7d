"""Insert many new providers with their records in a few bulk statements, audited like any flush.

The ORM's unit of work spends most of a large import's write transaction on bookkeeping (about 0.4 ms per
record); bulk INSERT ... RETURNING with the rows in parameter order gets the ids back without it, so the
write lock is held for a fraction of that. The audit rows are the ones the after_flush hook writes for
created records (app.core.audit), built from the inserted rows.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from app.core import clock
from app.core.audit import row_creation_changes
from app.models import AuditEntry, Provider
from app.registry.providers import CHILD_ORDER

# Datacenters before offers: an offer's datacenter_id comes from the datacenter inserted just before.
_INSERT_ORDER = tuple(sorted(CHILD_ORDER, key=lambda collection: collection != "datacenters"))


def _row(record: Any, table: sa.Table) -> dict[str, Any]:
    return {column.key: getattr(record, column.key) for column in table.columns if column.key != "id"}


def _insert(connection: sa.Connection, table: sa.Table, rows: list[dict[str, Any]]) -> list[int]:
    """Insert the rows; their new ids in the rows' order."""
    statement = sa.insert(table).returning(table.c.id, sort_by_parameter_order=True)
    return [row.id for row in connection.execute(statement, rows)]


class _Audit:
    """Collects the 'create' audit rows of one import, written in one statement at the end."""

    def __init__(self, actor: tuple[int | None, str]) -> None:
        self.actor, self.at, self.rows = actor, clock.now(), []

    def created(self, model: Any, rows: list[dict[str, Any]], ids: list[int]) -> None:
        """Record the creation of `rows` of `model`, which got `ids`."""
        for row, new_id in zip(rows, ids, strict=True):
            full = {"id": new_id, **row}
            self.rows.append(
                {
                    "at": self.at,
                    "actor_id": self.actor[0],
                    "actor_name": self.actor[1],
                    "action": "create",
                    "entity": model.__tablename__,
                    "entity_id": new_id,
                    "provider_id": row.get("provider_id", new_id),
                    "changes": row_creation_changes(model, full),
                }
            )


def _children(
    providers: list[Provider], provider_ids: list[int], collection: str, datacenter_ids: dict[int, int]
) -> tuple[list[Any], list[dict[str, Any]]]:
    """The nested records of one collection with their rows (provider and datacenter ids filled in)."""
    records, rows = [], []
    for provider, provider_id in zip(providers, provider_ids, strict=True):
        for record in getattr(provider, collection):
            row = _row(record, type(record).__table__)
            row["provider_id"] = provider_id
            if collection == "offers":
                row["datacenter_id"] = datacenter_ids[id(record.datacenter)] if record.datacenter else None
            records.append(record)
            rows.append(row)
    return records, rows


def insert_providers(
    connection: sa.Connection, providers: list[Provider], actor: tuple[int | None, str]
) -> list[int]:
    """Insert new (unsaved) providers and their nested records in the connection's transaction; their ids."""
    if not providers:
        return []
    audit = _Audit(actor)
    provider_rows = [_row(provider, Provider.__table__) for provider in providers]
    provider_ids = _insert(connection, Provider.__table__, provider_rows)
    audit.created(Provider, provider_rows, provider_ids)
    datacenter_ids: dict[int, int] = {}
    for collection in _INSERT_ORDER:
        records, rows = _children(providers, provider_ids, collection, datacenter_ids)
        if not rows:
            continue
        model = type(records[0])
        ids = _insert(connection, model.__table__, rows)
        audit.created(model, rows, ids)
        if collection == "datacenters":
            datacenter_ids.update({id(record): new_id for record, new_id in zip(records, ids, strict=True)})
    connection.execute(sa.insert(AuditEntry.__table__), audit.rows)
    return list(provider_ids)
