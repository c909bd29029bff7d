"""credit_record: enterprise credit records (企业信用) looked up by hand in gsxt, 信用中国 or the court
enforcement site, each with its screenshot as evidence

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-04 16:35:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    text = sqlmodel.sql.sqltypes.AutoString
    op.create_table(
        "credit_record",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("provider_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("uscc", text(length=32), nullable=False),
        sa.Column("registration_status", text(length=20), nullable=True),
        sa.Column("registered_capital", sa.BigInteger(), nullable=True),
        sa.Column("capital_currency", text(length=3), nullable=False),
        sa.Column("founded_on", sa.Date(), nullable=True),
        sa.Column("abnormal_listed", sa.Boolean(), nullable=False),
        sa.Column("abnormal_since", sa.Date(), nullable=True),
        sa.Column("abnormal_reason", sa.Text(), nullable=False),
        sa.Column("dishonest_listed", sa.Boolean(), nullable=False),
        sa.Column("dishonest_since", sa.Date(), nullable=True),
        sa.Column("dishonest_reason", sa.Text(), nullable=False),
        sa.Column("penalties_count", sa.Integer(), nullable=False),
        sa.Column("penalties_note", sa.Text(), nullable=False),
        sa.Column("enforcements", sa.JSON(), nullable=False),
        sa.Column("seen", sa.Text(), nullable=False),
        sa.Column("looked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("evidence_id", sa.Integer(), nullable=True),
        sa.Column("recorded_by_id", sa.Integer(), nullable=True),
        sa.Column("recorded_by_name", text(length=60), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["evidence_id"], ["evidence.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["provider_id"], ["provider.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_credit_record_provider_id"), "credit_record", ["provider_id"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index(op.f("ix_credit_record_provider_id"), table_name="credit_record")
    op.drop_table("credit_record")
