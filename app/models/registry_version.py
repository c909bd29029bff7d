"""registry_version: a counter that every change to the tables advice reads moves, through database triggers.

A process may then keep the offers it read (app.services.offer_snapshot) and read them again only when the
counter moved. Triggers catch every write, ORM, Core or another process's. On PostgreSQL they are deferred
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


class RegistryVersion(SQLModel, table=True):
    """The one row counting committed changes to the registry tables (WATCHED)."""

    __tablename__ = "registry_version"

    id: int = Field(default=ROW_ID, primary_key=True)
    n: int = Field(default=0, sa_type=sa.BigInteger)
    xid: int | None = Field(default=None, sa_type=sa.BigInteger)  # PostgreSQL: the last transaction counted


def trigger_name(table: str, event_name: str = "") -> str:
    """The name of a table's trigger (SQLite: one per event)."""
    return f"registry_changed_{table}{'_' + event_name if event_name else ''}"


def _events(columns: tuple[str, ...] | None) -> list[tuple[str, str]]:
    update = f"UPDATE OF {', '.join(columns)}" if columns else "UPDATE"
    return [("insert", "INSERT"), ("update", update), ("delete", "DELETE")]


def create_statements(dialect: str, watched: dict[str, tuple[str, ...] | None] = WATCHED) -> list[str]:
    """DDL creating the counter's triggers (and, on PostgreSQL, their function)."""
    if dialect == "postgresql":
        out = [
            f"CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"UPDATE registry_version SET n = n + 1, xid = txid_current() "
            f"WHERE id = {ROW_ID} AND xid IS DISTINCT FROM txid_current(); RETURN NULL; END $$"
        ]
        for table, columns in watched.items():
            events = " OR ".join(event_sql for _name, event_sql in _events(columns))
            out.append(
                f"CREATE CONSTRAINT TRIGGER {trigger_name(table)} AFTER {events} ON {table} "
                f"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {FUNCTION}()"
            )
        return out
    return [
        f"CREATE TRIGGER {trigger_name(table, name)} AFTER {event_sql} ON {table} "
        f"BEGIN UPDATE registry_version SET n = n + 1 WHERE id = {ROW_ID}; END"
        for table, columns in watched.items()
        for name, event_sql in _events(columns)
    ]


def drop_statements(dialect: str, watched: dict[str, tuple[str, ...] | None] = WATCHED) -> list[str]:
    """DDL dropping what create_statements made."""
    if dialect == "postgresql":
        out = [f"DROP TRIGGER IF EXISTS {trigger_name(table)} ON {table}" for table in watched]
        return [*out, f"DROP FUNCTION IF EXISTS {FUNCTION}()"]
    return [
        f"DROP TRIGGER IF EXISTS {trigger_name(table, name)}"
        for table in watched
        for name, _event_sql in _events(None)
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
