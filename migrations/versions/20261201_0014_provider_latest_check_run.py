"""provider.latest_check_run_id: a pointer to each provider's newest check run, backfilled

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 21:35:00
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

BACKFILL = sa.text(
    "UPDATE provider SET latest_check_run_id = "
    "(SELECT max(check_run.id) FROM check_run WHERE check_run.provider_id = provider.id)"
)


def upgrade() -> None:
    """Apply this revision."""
    with op.batch_alter_table("provider", schema=None) as batch_op:
        batch_op.add_column(sa.Column("latest_check_run_id", sa.Integer(), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_provider_latest_check_run_id"), ["latest_check_run_id"], unique=False
        )
        batch_op.create_foreign_key(
            "fk_provider_latest_check_run_id",
            "check_run",
            ["latest_check_run_id"],
            ["id"],
            ondelete="SET NULL",
            use_alter=True,
        )
    op.execute(BACKFILL)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("provider", schema=None) as batch_op:
        batch_op.drop_constraint("fk_provider_latest_check_run_id", type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_provider_latest_check_run_id"))
        batch_op.drop_column("latest_check_run_id")
