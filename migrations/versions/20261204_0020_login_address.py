"""login_address: the client addresses each account logged in from, which keep their allowance when guessing
from many addresses has the account at its ceiling

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-04 16:55:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "login_address",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.Column("address", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("last_success_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("username", "address", name="uq_login_address_username_address"),
    )
    op.create_index(
        op.f("ix_login_address_last_success_at"), "login_address", ["last_success_at"], unique=False
    )


def downgrade() -> None:
    """Revert this revision."""
    op.drop_index(op.f("ix_login_address_last_success_at"), table_name="login_address")
    op.drop_table("login_address")
