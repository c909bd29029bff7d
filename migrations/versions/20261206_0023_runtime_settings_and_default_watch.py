"""runtime_setting: settings an admin edits on the settings page; every existing user keeps watching
nothing (a notify_settings row with watch_all false), as new users without a row now watch everything

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06 05:00:00
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "runtime_setting",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("updated_by_name", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    users = sa.table("user", sa.column("id", sa.Integer()))
    settings = sa.table(
        "notify_settings",
        sa.column("user_id", sa.Integer()),
        sa.column("watch_all", sa.Boolean()),
        sa.column("email_enabled", sa.Boolean()),
        sa.column("updated_at", sa.DateTime(timezone=True)),
    )
    without_row = sa.select(users.c.id, sa.false(), sa.false(), sa.func.current_timestamp()).where(
        users.c.id.not_in(sa.select(settings.c.user_id))
    )
    op.execute(
        settings.insert().from_select(["user_id", "watch_all", "email_enabled", "updated_at"], without_row)
    )


def downgrade() -> None:
    """Revert this revision (the notify_settings rows stay: they say what those users had before)."""
    op.drop_table("runtime_setting")
