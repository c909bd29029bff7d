"""registry_version: a counter that every change to the tables advice reads moves, through database triggers.

A process may then keep the offers it read (app.registry.offer_snapshot) and read them again only when the
counter moved. The same triggers stamp each provider whose rows changed with the counter's new value
(provider_version), so a kept table is refreshed by reading again only the providers changed since.
Triggers catch every write, ORM, Core or another process's. On PostgreSQL they are deferred
constraint triggers: the counter row is locked at commit, after every other lock of the transaction (no
deadlock between writers), and moved once per transaction (`xid`). On SQLite writers are serialised anyway.
Alembic's SQLite batch mode rebuilds a table without its triggers: tests/migrations check that the head
schema still has every one of them.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlmodel import Field, SQLModel

# Table -> the columns whose updates matter (None: any column); inserts and deletes always count.
WATCHED: dict[str, tuple[str, ...] | None] = {
    "provider": None,
    "licence": None,
    "certification": None,
    "datacenter": None,
    "offer": None,
    "check_run": None,
    "stored_finding": None,
    "bench_run": ("state", "offer_id", "finished_at", "created_at"),  # not each step's progress
    "bench_figure": None,
}
ROW_ID = 1
FUNCTION = "registry_version_bump"
# The column naming a row's provider (others: provider_id); _postgresql_function says the same in SQL.
PROVIDER_KEY = {"provider": "id"}


class RegistryVersion(SQLModel, table=True):
    """The one row counting committed changes to the registry tables (WATCHED)."""

    __tablename__ = "registry_version"

    id: int = Field(default=ROW_ID, primary_key=True)
    n: int = Field(default=0, sa_type=sa.BigInteger)
    xid: int | None = Field(default=None, sa_type=sa.BigInteger)  # PostgreSQL: the last transaction counted


class ProviderVersion(SQLModel, table=True):
    """The counter's value at the last committed change to a provider's rows (deleted providers included)."""

    __tablename__ = "provider_version"

    provider_id: int = Field(
        primary_key=True, sa_type=sa.BigInteger, sa_column_kwargs={"autoincrement": False}
    )
    n: int = Field(sa_type=sa.BigInteger, index=True)


def trigger_name(table: str, event_name: str = "") -> str:
    """The name of a table's trigger (SQLite: one per event)."""
    return f"registry_changed_{table}{'_' + event_name if event_name else ''}"


def trigger_events(columns: tuple[str, ...] | None) -> list[tuple[str, str]]:
    """(name, SQL) of the events a table's triggers fire on (updates: of `columns` only, when given)."""
    update = f"UPDATE OF {', '.join(columns)}" if columns else "UPDATE"
    return [("insert", "INSERT"), ("update", update), ("delete", "DELETE")]


def create_statements(dialect: str, watched: dict[str, tuple[str, ...] | None] = WATCHED) -> list[str]:
    """DDL creating the counter's triggers (and, on PostgreSQL, their function).

    Migrations 0016 on call this; a revision that changes what it creates keeps a copy of the older DDL in
    the revisions that used it (as 0015 does).
    """
    if dialect == "postgresql":
        out = [_postgresql_function()]
        for table, columns in watched.items():
            events = " OR ".join(event_sql for _name, event_sql in trigger_events(columns))
            out.append(
                f"CREATE CONSTRAINT TRIGGER {trigger_name(table)} AFTER {events} ON {table} "
                f"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {FUNCTION}()"
            )
        return out
    return [
        f"CREATE TRIGGER {trigger_name(table, name)} AFTER {event_sql} ON {table} "
        f"BEGIN UPDATE registry_version SET n = n + 1 WHERE id = {ROW_ID}; "
        f"{_sqlite_stamp(table, name)} END"
        for table, columns in watched.items()
        for name, event_sql in trigger_events(columns)
    ]


def _sqlite_stamp(table: str, event_name: str) -> str:
    """SQLite: stamp the provider of the row (both, when an update moved it) with the counter's value."""
    key = PROVIDER_KEY.get(table, "provider_id")
    rows = {"insert": ("NEW",), "update": ("OLD", "NEW"), "delete": ("OLD",)}[event_name]
    selects = " UNION ".join(
        f"SELECT {row}.{key}, n FROM registry_version WHERE id = {ROW_ID} AND {row}.{key} IS NOT NULL"
        for row in rows
    )
    # an upsert, not INSERT OR REPLACE: a foreign-key action (ON DELETE SET NULL) firing the trigger would
    # impose its own ABORT on the REPLACE
    return (
        f"INSERT INTO provider_version (provider_id, n) {selects} "
        "ON CONFLICT (provider_id) DO UPDATE SET n = excluded.n;"
    )


def _postgresql_function() -> str:
    """PostgreSQL: move the counter once per transaction, and stamp the row's provider (old and new)."""
    pick = (
        "IF TG_OP <> '{skip}' THEN IF TG_TABLE_NAME = 'provider' THEN ids := ids || {row}.id::bigint; "
        "ELSE ids := ids || {row}.provider_id::bigint; END IF; END IF; "
    )
    return (
        f"CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "DECLARE counted bigint; ids bigint[] := '{}'; BEGIN "
        f"UPDATE registry_version SET n = n + 1, xid = txid_current() "
        f"WHERE id = {ROW_ID} AND xid IS DISTINCT FROM txid_current(); "
        f"SELECT n INTO counted FROM registry_version WHERE id = {ROW_ID}; "
        f"{pick.format(skip='INSERT', row='OLD')}{pick.format(skip='DELETE', row='NEW')}"
        "INSERT INTO provider_version (provider_id, n) SELECT DISTINCT id, counted FROM unnest(ids) AS id "
        "WHERE id IS NOT NULL AND counted IS NOT NULL ON CONFLICT (provider_id) DO UPDATE SET n = EXCLUDED.n "
        "WHERE provider_version.n <> EXCLUDED.n; RETURN NULL; END $$"
    )


def drop_statements(dialect: str, watched: dict[str, tuple[str, ...] | None] = WATCHED) -> list[str]:
    """DDL dropping what create_statements made."""
    if dialect == "postgresql":
        out = [f"DROP TRIGGER IF EXISTS {trigger_name(table)} ON {table}" for table in watched]
        return [*out, f"DROP FUNCTION IF EXISTS {FUNCTION}()"]
    return [
        f"DROP TRIGGER IF EXISTS {trigger_name(table, name)}"
        for table in watched
        for name, _event_sql in trigger_events(None)
    ]


def install(connection: Any) -> None:
    """Create the triggers and the counter's row (after the tables exist)."""
    for statement in create_statements(connection.dialect.name):
        connection.exec_driver_sql(statement)
    connection.execute(sa.insert(RegistryVersion.__table__).values(id=ROW_ID, n=0))


@event.listens_for(SQLModel.metadata, "after_create")
def _after_create_all(target: Any, connection: Any, **kw: Any) -> None:
    """create_all (tests, a fresh demo) installs the triggers when it created the counter's table."""
    created = {table.name for table in kw.get("tables") or target.sorted_tables}
    if RegistryVersion.__tablename__ in created and set(WATCHED) <= set(target.tables):
        install(connection)
