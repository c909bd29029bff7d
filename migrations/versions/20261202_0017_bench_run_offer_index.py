"""bench_run.offer_id indexed: the runs of a few offers (kept advice refreshing a provider) and the runs an
offer's deletion unlinks are found without reading every run

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-02 03:50:00
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_index(op.f("ix_bench_run_offer_id"), "bench_run", ["offer_id"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index(op.f("ix_bench_run_offer_id"), table_name="bench_run")
