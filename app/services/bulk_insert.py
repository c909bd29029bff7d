"""Insert many new providers with their records in a few bulk statements, audited like any flush.

The ORM's unit of work spends most of a large import's write transaction on bookkeeping (about 0.4 ms per
record); bulk INSERT ... RETURNING with the rows in parameter order gets the ids back in a handful of
statements, so the write lock is held for a fraction of that. The audit rows are the same as the
after_flush hook writes for created records (app.services.audit).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from app.models import AuditEntry, Provider
from app.services.audit import creation_changes
from app.services.providers import CHILD_ORDER

# Datacenters before offers: an offer's datacenter_id comes from the datacenter inserted just before.
_INSERT_ORDER = tuple(sorted(CHILD_ORDER, key=lambda collection: collection != "datacenters"))


def _row(record: Any, table: sa.Table, **fixed: Any) -> dict[str, Any]:
    row = {column.key: getattr(record, column.key) for column in table.columns if column.key != "id"}
    row.update(fixed)
    return row


def _insert(connection: sa.Connection, table: sa.Table, rows: list[dict[str, Any]]) -> list[int]:
    """Insert the rows; their new ids in the rows' order."""
    if not rows:
        return []
    statement = sa.insert(table).returning(table.c.id, sort_by_parameter_order=True)
    return [row.id for row in connection.execute(statement, rows)]


def _audit_rows(
    records: list[Any], ids: list[int], provider_ids: list[int], actor: tuple[int | None, str], at: Any
) -> list[dict[str, Any]]:
    return [
        {
            "at": at,
            "actor_id": actor[0],
            "actor_name": actor[1],
            "action": "create",
            "entity": record.__tablename__,
            "entity_id": record_id,
            "provider_id": provider_id,
            "changes": creation_changes(record),
        }
        for record, record_id, provider_id in zip(records, ids, provider_ids, strict=True)
    ]


def insert_providers(
    connection: sa.Connection, providers: list[Provider], actor: tuple[int | None, str]
) -> None:
    """Insert new (unsaved) providers and their nested records inside the connection's transaction."""
    at = datetime.now().astimezone()
    provider_ids = _insert(connection, Provider.__table__, [_row(p, Provider.__table__) for p in providers])
    for provider, provider_id in zip(providers, provider_ids, strict=True):
        provider.id = provider_id
    audit = _audit_rows(providers, provider_ids, provider_ids, actor, at)
    datacenter_ids: dict[int, int] = {}
    for collection in _INSERT_ORDER:
        owners, records = [], []
        for provider, provider_id in zip(providers, provider_ids, strict=True):
            for record in getattr(provider, collection):
                owners.append(provider_id)
                records.append(record)
        if not records:
            continue
        table = type(records[0]).__table__
        rows = []
        for record, owner in zip(records, owners, strict=True):
            fixed: dict[str, Any] = {"provider_id": owner}
            if collection == "offers":
                fixed["datacenter_id"] = datacenter_ids[id(record.datacenter)] if record.datacenter else None
            rows.append(_row(record, table, **fixed))
        ids = _insert(connection, table, rows)
        if collection == "datacenters":
            datacenter_ids.update({id(record): new_id for record, new_id in zip(records, ids, strict=True)})
        for record, row, new_id in zip(records, rows, ids, strict=True):
            record.id, record.provider_id = new_id, row["provider_id"]
            if collection == "offers":
                record.datacenter_id = row["datacenter_id"]
        audit.extend(_audit_rows(records, ids, owners, actor, at))
    if audit:
        connection.execute(sa.insert(AuditEntry.__table__), audit)
