"""account_notice: messages to a user about their own account (bursts of failed logins), shown in the inbox

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-04 16:40:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "account_notice",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=40), nullable=False),
        sa.Column("dedupe_key", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("read_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["user.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("dedupe_key"),
    )
    op.create_index("ix_account_notice_user_read", "account_notice", ["user_id", "read_at"], unique=False)


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index("ix_account_notice_user_read", table_name="account_notice")
    op.drop_table("account_notice")
