"""registry_version: a counter that triggers on the tables advice reads move on every change

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 00:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from app.models.registry_version import FUNCTION, ROW_ID, drop_statements, trigger_events, trigger_name

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

# The tables (and bench_run's columns) watched as of this revision; a later revision that watches more
# drops and creates the triggers with its own list.
WATCHED = {
    "provider": None,
    "licence": None,
    "certification": None,
    "datacenter": None,
    "offer": None,
    "check_run": None,
    "stored_finding": None,
    "bench_run": ("state", "offer_id", "finished_at", "created_at"),
    "bench_figure": None,
}


def create_statements(dialect: str) -> list[str]:
    """The triggers as of this revision: they move the counter only (0016 also stamps providers)."""
    if dialect == "postgresql":
        out = [
            f"CREATE OR REPLACE FUNCTION {FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"UPDATE registry_version SET n = n + 1, xid = txid_current() "
            f"WHERE id = {ROW_ID} AND xid IS DISTINCT FROM txid_current(); RETURN NULL; END $$"
        ]
        for table, columns in WATCHED.items():
            events = " OR ".join(event_sql for _name, event_sql in trigger_events(columns))
            out.append(
                f"CREATE CONSTRAINT TRIGGER {trigger_name(table)} AFTER {events} ON {table} "
                f"DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {FUNCTION}()"
            )
        return out
    return [
        f"CREATE TRIGGER {trigger_name(table, name)} AFTER {event_sql} ON {table} "
        f"BEGIN UPDATE registry_version SET n = n + 1 WHERE id = {ROW_ID}; END"
        for table, columns in WATCHED.items()
        for name, event_sql in trigger_events(columns)
    ]


def upgrade() -> None:
    """Apply this revision."""
    table = op.create_table(
        "registry_version",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.Column("xid", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    op.bulk_insert(table, [{"id": ROW_ID, "n": 0, "xid": None}])
    for statement in create_statements(op.get_bind().dialect.name):
        op.execute(statement)


def downgrade() -> None:
    """Revert this revision."""
    for statement in drop_statements(op.get_bind().dialect.name, WATCHED):
        op.execute(statement)
    op.drop_table("registry_version")
