"""provider_version: the triggers also stamp each changed provider with the counter, so kept advice
re-reads only the providers changed since

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-02 02:40:00
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import sqlalchemy as sa
from alembic import op

from app.models.registry_version import ROW_ID, create_statements, drop_statements

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def _revision_module(file_name: str) -> ModuleType:
    """Another revision's module, loaded from its file next to this one."""
    spec = importlib.util.spec_from_file_location(file_name[:-3], Path(__file__).with_name(file_name))
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


PREVIOUS = _revision_module("20261201_0015_registry_version.py")
WATCHED = PREVIOUS.WATCHED  # the tables watched as of this revision: those of 0015
# Every provider counts as changed at the current count: a table kept from before this revision (whose
# changes stamped nobody) is then read afresh.
BACKFILL = (
    "INSERT INTO provider_version (provider_id, n) "
    "SELECT provider.id, registry_version.n FROM provider, registry_version "
    f"WHERE registry_version.id = {ROW_ID}"
)


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "provider_version",
        sa.Column("provider_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("provider_id"),
    )
    op.create_index(op.f("ix_provider_version_n"), "provider_version", ["n"], unique=False)
    dialect = op.get_bind().dialect.name
    for statement in drop_statements(dialect, WATCHED):
        op.execute(statement)
    for statement in create_statements(dialect, WATCHED):
        op.execute(statement)
    op.execute(BACKFILL)


def downgrade() -> None:
    """Revert this revision (back to 0015's counter-only triggers)."""
    dialect = op.get_bind().dialect.name
    for statement in drop_statements(dialect, WATCHED):
        op.execute(statement)
    for statement in PREVIOUS.create_statements(dialect):
        op.execute(statement)
    op.drop_index(op.f("ix_provider_version_n"), table_name="provider_version")
    op.drop_table("provider_version")
