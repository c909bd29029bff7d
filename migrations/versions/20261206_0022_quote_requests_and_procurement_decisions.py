"""quote requests (invitation purpose, case and offers) and procurement decisions with their conditions and
risk acceptances

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06 04:30:00.304316
"""

from __future__ import annotations

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Apply this revision."""
    op.create_table(
        "decision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("offer_ids", sa.JSON(), server_default="[]", nullable=False),
        sa.Column("provider_ids", sa.JSON(), nullable=False),
        sa.Column("quote_ids", sa.JSON(), nullable=False),
        sa.Column("scope", sa.Text(), nullable=False),
        sa.Column("term_months", sa.Integer(), nullable=False),
        sa.Column("justification", sa.Text(), nullable=False),
        sa.Column("single_source_reason", sa.Text(), nullable=False),
        sa.Column("evidence_sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("proposed_by_id", sa.Integer(), nullable=True),
        sa.Column("proposed_by_name", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.Column("proposed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_by_id", sa.Integer(), nullable=True),
        sa.Column("decided_by_name", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("decision_comment", sa.Text(), nullable=False),
        sa.Column("valid_from", sa.Date(), nullable=True),
        sa.Column("valid_until", sa.Date(), nullable=True),
        sa.Column("snapshot", sa.JSON(), nullable=False),
        sa.Column("snapshot_sha256", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["procurement_case.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["decided_by_id"], ["user.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["proposed_by_id"], ["user.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("decision", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_decision_case_id"), ["case_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_decision_proposed_at"), ["proposed_at"], unique=False)
        batch_op.create_index(batch_op.f("ix_decision_state"), ["state"], unique=False)

    op.create_table(
        "decision_condition",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("decision_id", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("due_on", sa.Date(), nullable=True),
        sa.Column("met_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("met_by_name", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.ForeignKeyConstraint(["decision_id"], ["decision.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("decision_condition", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_decision_condition_decision_id"), ["decision_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_decision_condition_due_on"), ["due_on"], unique=False)

    op.create_table(
        "risk_acceptance",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("decision_id", sa.Integer(), nullable=False),
        sa.Column("provider_id", sa.Integer(), nullable=False),
        sa.Column("finding_id", sa.Integer(), nullable=True),
        sa.Column("rule_id", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.Column("subject", sqlmodel.sql.sqltypes.AutoString(length=80), nullable=False),
        sa.Column("severity", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
        sa.Column("message_zh", sa.Text(), nullable=False),
        sa.Column("message_en", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("accepted_by_id", sa.Integer(), nullable=True),
        sa.Column("accepted_by_name", sqlmodel.sql.sqltypes.AutoString(length=60), nullable=False),
        sa.Column("until", sa.Date(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["accepted_by_id"], ["user.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["decision_id"], ["decision.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["finding_id"], ["stored_finding.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["provider_id"], ["provider.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("risk_acceptance", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_risk_acceptance_decision_id"), ["decision_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_risk_acceptance_provider_id"), ["provider_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_risk_acceptance_until"), ["until"], unique=False)

    with op.batch_alter_table("invitation", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "purpose",
                sqlmodel.sql.sqltypes.AutoString(length=16),
                server_default="disclosure",
                nullable=False,
            )
        )
        batch_op.add_column(sa.Column("case_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("offer_ids", sa.JSON(), server_default="[]", nullable=False))
        batch_op.create_index(batch_op.f("ix_invitation_case_id"), ["case_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_invitation_purpose"), ["purpose"], unique=False)
        batch_op.create_foreign_key(
            "fk_invitation_case_id_procurement_case",
            "procurement_case",
            ["case_id"],
            ["id"],
            ondelete="CASCADE",
        )


def downgrade() -> None:
    """Revert this revision."""
    with op.batch_alter_table("invitation", schema=None) as batch_op:
        batch_op.drop_constraint("fk_invitation_case_id_procurement_case", type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_invitation_purpose"))
        batch_op.drop_index(batch_op.f("ix_invitation_case_id"))
        batch_op.drop_column("offer_ids")
        batch_op.drop_column("case_id")
        batch_op.drop_column("purpose")

    with op.batch_alter_table("risk_acceptance", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_risk_acceptance_until"))
        batch_op.drop_index(batch_op.f("ix_risk_acceptance_provider_id"))
        batch_op.drop_index(batch_op.f("ix_risk_acceptance_decision_id"))

    op.drop_table("risk_acceptance")
    with op.batch_alter_table("decision_condition", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_decision_condition_due_on"))
        batch_op.drop_index(batch_op.f("ix_decision_condition_decision_id"))

    op.drop_table("decision_condition")
    with op.batch_alter_table("decision", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_decision_state"))
        batch_op.drop_index(batch_op.f("ix_decision_proposed_at"))
        batch_op.drop_index(batch_op.f("ix_decision_case_id"))

    op.drop_table("decision")
