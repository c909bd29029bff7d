"""Provider disclosure (issue 14): invitations to a due-diligence questionnaire, their log and uploads."""

from datetime import datetime
from enum import StrEnum
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock


class InvitationStatus(StrEnum):
    """Where an invitation stands; `expired` is not stored but read from `expires_at`."""

    sent = "sent"  # link created (and e-mailed where SMTP is configured)
    opened = "opened"  # the provider opened the form at least once
    draft = "draft"  # answers saved, not submitted
    submitted = "submitted"  # the provider submitted; waiting for the analyst
    reviewed = "reviewed"  # the analyst accepted or rejected every item
    revoked = "revoked"  # the analyst withdrew the link


class InvitationPurpose(StrEnum):
    """What the link asks the provider for."""

    disclosure = "disclosure"  # the due-diligence questionnaire
    quote = "quote"  # a quote (报价) for one procurement case


class Invitation(SQLModel, table=True):
    """A link with an unguessable token that lets one provider fill in the questionnaire without an account.

    Only the token's SHA-256 is stored. `answers` holds the validated questionnaire
    (app/disclosure/schema.Disclosure) once submitted; `draft` the form's raw text as last saved;
    `review` holds the analyst's decision per item.
    """

    __tablename__ = "invitation"
    __audited__ = True
    __audit_skip__ = ("token_hash", "draft", "opened_at", "saved_at")

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: Optional[int] = Field(
        default=None, foreign_key="provider.id", index=True, ondelete="CASCADE"
    )
    purpose: str = Field(default=InvitationPurpose.disclosure.value, max_length=16, index=True)
    # A quote request's case and the offers it asks prices for (empty for disclosure invitations).
    case_id: Optional[int] = Field(
        default=None, foreign_key="procurement_case.id", index=True, ondelete="CASCADE"
    )
    offer_ids: list[int] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    legal_name: str = Field(max_length=200)  # a new provider's name, or the provider's name when invited
    email: str = Field(default="", max_length=200)
    token_hash: str = Field(max_length=64, unique=True)
    status: str = Field(default=InvitationStatus.sent.value, max_length=16, index=True)
    expires_at: datetime = Field(sa_type=sa.DateTime(timezone=True))
    answers: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    review: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    # The form's fields exactly as last saved (text, even when invalid), so an abandoned draft loses nothing.
    draft: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    opened_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    saved_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    submitted_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    reviewed_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    revoked_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    last_reminder_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    reminders: int = Field(default=0)
    created_by_id: Optional[int] = Field(default=None, foreign_key="user.id", ondelete="SET NULL")
    created_by_name: str = Field(default="system", max_length=60)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)


class InvitationEvent(SQLModel, table=True):
    """One thing that happened to an invitation: viewed, draft saved, submitted, refused, reminded."""

    __tablename__ = "invitation_event"

    id: Optional[int] = Field(default=None, primary_key=True)
    invitation_id: int = Field(foreign_key="invitation.id", index=True, ondelete="CASCADE")
    kind: str = Field(max_length=24)
    remote_addr: str = Field(default="", max_length=64)
    details: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))


class DisclosureUpload(SQLModel, table=True):
    """A scan or diagram the provider uploaded, kept as immutable evidence and tied to one form field."""

    __tablename__ = "disclosure_upload"

    id: Optional[int] = Field(default=None, primary_key=True)
    invitation_id: int = Field(foreign_key="invitation.id", index=True, ondelete="CASCADE")
    evidence_id: int = Field(foreign_key="evidence.id", ondelete="CASCADE")
    field: str = Field(max_length=80)  # e.g. "licences.0.scan", "topology.diagram"
    filename: str = Field(default="", max_length=200)
    media_type: str = Field(max_length=40)
    size: int = Field(default=0)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
