"""measured figures per offer (bench_figure)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-01 19:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision: the table, then the figures of every run stored before it."""
    op.create_table('bench_figure',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sa.Integer(), nullable=False),
    sa.Column('offer_id', sa.Integer(), nullable=False),
    sa.Column('provider_id', sa.Integer(), nullable=False),
    sa.Column('figure', sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
    sa.Column('value_num', sa.Float(), nullable=True),
    sa.Column('value_text', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
    sa.Column('unit', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('note', sqlmodel.sql.sqltypes.AutoString(length=200), nullable=False),
    sa.Column('measured_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('origin', sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
    sa.Column('verdict', sqlmodel.sql.sqltypes.AutoString(length=8), nullable=True),
    sa.ForeignKeyConstraint(['offer_id'], ['offer.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['provider_id'], ['provider.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['run_id'], ['bench_run.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('run_id', 'figure', name='uq_bench_figure_run_figure')
    )
    with op.batch_alter_table('bench_figure', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_bench_figure_offer_id'), ['offer_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_bench_figure_run_id'), ['run_id'], unique=False)

    # Runs stored before this revision: their figures from their samples (plain core statements).
    from app.trials.bench_figures import rebuild

    rebuild(op.get_bind())


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table('bench_figure', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_bench_figure_run_id'))
        batch_op.drop_index(batch_op.f('ix_bench_figure_offer_id'))

    op.drop_table('bench_figure')
