"""Procurement decisions (采购决定): a proposal, its conditions and risk acceptances, four-eyes approval.

An analyst proposes the chosen offer(s) for a case; another person (role approver, or admin) approves,
returns or rejects it. Approval freezes the evidence the decision rests on (`snapshot`, with its SHA-256),
as report exports freeze their inputs. `evidence_sha256` is the hash of the same evidence when proposed:
approval compares it with the evidence now and refuses when it changed.
"""

from datetime import date, datetime
from enum import StrEnum
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock


class DecisionState(StrEnum):
    """Where a decision stands; "needs re-approval" is read from its term and acceptances, never stored."""

    proposed = "proposed"  # waiting for an approver
    returned = "returned"  # sent back with comments; a fresh proposal replaces it
    approved = "approved"  # signed off; the evidence snapshot is frozen
    rejected = "rejected"  # refused for good


class Decision(SQLModel, table=True):
    """One proposed (and maybe approved) choice of offers for a procurement case."""

    __tablename__ = "decision"
    __audited__ = True
    # The frozen snapshot stays in this row; the audit trail records its hash.
    __audit_skip__ = ("snapshot",)

    id: Optional[int] = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="procurement_case.id", index=True, ondelete="CASCADE")
    state: DecisionState = Field(default=DecisionState.proposed, sa_type=sa.String(16), index=True)
    offer_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    provider_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    quote_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    scope: str = Field(sa_type=sa.Text)  # which workloads or data the decision covers
    term_months: int
    justification: str = Field(sa_type=sa.Text)
    single_source_reason: str = Field(default="", sa_type=sa.Text)  # required with fewer than 3 valid quotes
    evidence_sha256: str = Field(max_length=64)  # the evidence when proposed
    proposed_by_id: Optional[int] = Field(default=None, foreign_key="user.id", ondelete="SET NULL")
    proposed_by_name: str = Field(max_length=60)
    proposed_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)
    decided_by_id: Optional[int] = Field(default=None, foreign_key="user.id", ondelete="SET NULL")
    decided_by_name: str = Field(default="", max_length=60)
    decided_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    decision_comment: str = Field(default="", sa_type=sa.Text)
    valid_from: Optional[date] = None  # the approval day
    valid_until: Optional[date] = None  # valid_from + term_months
    snapshot: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    snapshot_sha256: str = Field(default="", max_length=64)


class DecisionCondition(SQLModel, table=True):
    """A condition the decision carries, e.g. "re-measure intranet bandwidth within 30 days of delivery"."""

    __tablename__ = "decision_condition"
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    decision_id: int = Field(foreign_key="decision.id", index=True, ondelete="CASCADE")
    position: int = 0
    text: str = Field(sa_type=sa.Text)
    due_on: Optional[date] = Field(default=None, index=True)
    met_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    met_by_name: str = Field(default="", max_length=60)


class RiskAcceptance(SQLModel, table=True):
    """An open finding of a chosen provider knowingly accepted: by whom, why and until when.

    The finding is named by its rule and subject (stable across re-checks); `finding_id` is the stored
    finding it was accepted from, kept for the record.
    """

    __tablename__ = "risk_acceptance"
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    decision_id: int = Field(foreign_key="decision.id", index=True, ondelete="CASCADE")
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    finding_id: Optional[int] = Field(default=None, foreign_key="stored_finding.id", ondelete="SET NULL")
    rule_id: str = Field(max_length=60)
    subject: str = Field(default="", max_length=80)
    severity: str = Field(max_length=8)
    message_zh: str = Field(default="", sa_type=sa.Text)
    message_en: str = Field(default="", sa_type=sa.Text)
    reason: str = Field(sa_type=sa.Text)
    accepted_by_id: Optional[int] = Field(default=None, foreign_key="user.id", ondelete="SET NULL")
    accepted_by_name: str = Field(max_length=60)
    until: date = Field(index=True)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
