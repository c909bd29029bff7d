"""registry_version: a counter that triggers on the tables advice reads move on every change

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 00:30:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from app.models.registry_version import ROW_ID, create_statements, drop_statements

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
    for statement in create_statements(op.get_bind().dialect.name, WATCHED):
        op.execute(statement)


def downgrade() -> None:
    """Revert this revision."""
    for statement in drop_statements(op.get_bind().dialect.name, WATCHED):
        op.execute(statement)
    op.drop_table("registry_version")
