"""peak-hour benchmark campaigns

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table('bench_campaign',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('trial_server_id', sa.Integer(), nullable=False),
    sa.Column('provider_id', sa.Integer(), nullable=False),
    sa.Column('suite', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('days', sa.Integer(), nullable=False),
    sa.Column('peak_window', sqlmodel.sql.sqltypes.AutoString(length=11), nullable=False),
    sa.Column('offpeak_window', sqlmodel.sql.sqltypes.AutoString(length=11), nullable=False),
    sa.Column('timezone', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('state', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('origin', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('result', sa.JSON(), nullable=False),
    sa.Column('created_by_id', sa.Integer(), nullable=True),
    sa.Column('created_by_name', sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['provider_id'], ['provider.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['trial_server_id'], ['trial_server.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('bench_campaign', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bench_campaign_provider_id'), ['provider_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_bench_campaign_state'), ['state'], unique=False)
        batch_op.create_index(batch_op.f('ix_bench_campaign_trial_server_id'), ['trial_server_id'], unique=False)

    op.create_table('bench_campaign_window',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('campaign_id', sa.Integer(), nullable=False),
    sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
    sa.Column('day', sa.Integer(), nullable=False),
    sa.Column('starts_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('ends_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('state', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=True),
    sa.Column('samples', sa.JSON(), nullable=False),
    sa.Column('note', sa.Text(), nullable=True),
    sa.Column('claimed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['campaign_id'], ['bench_campaign.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_id'], ['bench_run.id'], ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('campaign_id', 'kind', 'starts_at', name='uq_bench_campaign_window')
    )
    with op.batch_alter_table('bench_campaign_window', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bench_campaign_window_campaign_id'), ['campaign_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_bench_campaign_window_starts_at'), ['starts_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_bench_campaign_window_state'), ['state'], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table('bench_campaign_window', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bench_campaign_window_state'))
        batch_op.drop_index(batch_op.f('ix_bench_campaign_window_starts_at'))
        batch_op.drop_index(batch_op.f('ix_bench_campaign_window_campaign_id'))

    op.drop_table('bench_campaign_window')
    with op.batch_alter_table('bench_campaign', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bench_campaign_trial_server_id'))
        batch_op.drop_index(batch_op.f('ix_bench_campaign_state'))
        batch_op.drop_index(batch_op.f('ix_bench_campaign_provider_id'))

    op.drop_table('bench_campaign')
