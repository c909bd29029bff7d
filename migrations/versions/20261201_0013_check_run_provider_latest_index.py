"""check_run: one (provider_id, id) index for each provider's latest run

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 20:05:00
"""

from __future__ import annotations

from alembic import op


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_index('ix_check_run_provider_id_id', 'check_run', ['provider_id', 'id'], unique=False)
    op.drop_index('ix_check_run_provider_id', table_name='check_run')


def downgrade() -> None:
    """Revert this revision."""
    op.create_index('ix_check_run_provider_id', 'check_run', ['provider_id'], unique=False)
    op.drop_index('ix_check_run_provider_id_id', table_name='check_run')
