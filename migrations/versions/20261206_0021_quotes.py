"""quote: quotes (报价) for a procurement case, entered by hand for now, each with its signed scan as
evidence

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06 03:15:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "quote",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("provider_id", sa.Integer(), nullable=False),
        sa.Column("offer_id", sa.Integer(), nullable=True),
        sa.Column("invitation_id", sa.Integer(), nullable=True),
        sa.Column("received_via", sa.String(length=16), nullable=False),
        sa.Column("price_gpu_hour_cny", sa.Float(), nullable=True),
        sa.Column("price_month_cny", sa.Float(), nullable=True),
        sa.Column("min_term_months", sa.Integer(), nullable=True),
        sa.Column("delivery_on", sa.Date(), nullable=True),
        sa.Column("includes_public_bandwidth", sa.Boolean(), nullable=False),
        sa.Column("includes_storage", sa.Boolean(), nullable=False),
        sa.Column("includes_support", sa.Boolean(), nullable=False),
        sa.Column("sla_availability_pct", sa.Float(), nullable=True),
        sa.Column("sla_compensation", sa.Text(), nullable=False),
        sa.Column("bandwidth_type", sa.String(length=16), nullable=False),
        sa.Column("trial_server_lent", sa.Boolean(), nullable=False),
        sa.Column("valid_until", sa.Date(), nullable=False),
        sa.Column("notes", sa.Text(), nullable=False),
        sa.Column("evidence_id", sa.Integer(), nullable=True),
        sa.Column("entered_by_id", sa.Integer(), nullable=True),
        sa.Column("entered_by_name", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.Column("entered_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["procurement_case.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["entered_by_id"], ["user.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["evidence_id"], ["evidence.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["invitation_id"], ["invitation.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["offer_id"], ["offer.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["provider_id"], ["provider.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(op.f("ix_quote_case_id"), "quote", ["case_id"], unique=False)
    op.create_index(op.f("ix_quote_offer_id"), "quote", ["offer_id"], unique=False)
    op.create_index(op.f("ix_quote_provider_id"), "quote", ["provider_id"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index(op.f("ix_quote_provider_id"), table_name="quote")
    op.drop_index(op.f("ix_quote_offer_id"), table_name="quote")
    op.drop_index(op.f("ix_quote_case_id"), table_name="quote")
    op.drop_table("quote")
