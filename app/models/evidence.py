"""Evidence (every fetch, kept immutable) and official lookups (the captcha conversation's state)."""

from datetime import datetime
from enum import StrEnum
from typing import Any, Optional

import sqlalchemy as sa
from sqlalchemy import event
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock

MANUAL_METHOD = "MANUAL"  # Evidence.method of what an analyst recorded by hand (lookup, credit, footer)


class EvidenceImmutable(RuntimeError):
    """Raised when code tries to change or delete a stored piece of evidence."""


class Evidence(SQLModel, table=True):
    """One HTTP exchange (or a picture taken out of one) exactly as received, with who asked for it."""

    __tablename__ = "evidence"

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: Optional[int] = Field(
        default=None, foreign_key="provider.id", index=True, ondelete="CASCADE"
    )
    purpose: str = Field(max_length=30, index=True)
    method: str = Field(default="GET", max_length=8)
    url: str = Field(sa_type=sa.Text)
    final_url: str = Field(sa_type=sa.Text)
    status: Optional[int] = None
    content_type: str = Field(default="", max_length=120)
    headers: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    redirects: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    peer: str = Field(default="", max_length=64)
    sha256: str = Field(max_length=64, index=True)
    size: int = Field(default=0)
    truncated: bool = Field(default=False)
    body: bytes = Field(default=b"", sa_column=Column(sa.LargeBinary, nullable=False))
    fetched_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)
    elapsed_ms: Optional[int] = None
    error_code: Optional[str] = Field(default=None, max_length=40)
    error: Optional[str] = Field(default=None, sa_type=sa.Text)
    # What was read out of it (footer numbers, lookup records), so facts need not re-parse.
    extracted: Optional[Any] = Field(default=None, sa_column=Column(JSON, nullable=True))
    # A page linked from a home page, or a picture taken out of a JSON reply, points at its origin.
    parent_id: Optional[int] = Field(default=None, foreign_key="evidence.id", index=True, ondelete="CASCADE")
    lookup_id: Optional[int] = Field(default=None, foreign_key="lookup.id", index=True, ondelete="SET NULL")
    job_id: Optional[int] = Field(default=None, foreign_key="job.id", ondelete="SET NULL")
    triggered_by_id: Optional[int] = None
    triggered_by_name: str = Field(default="system", max_length=60)


@event.listens_for(Evidence, "before_update")
def _refuse_update(_mapper: Any, _connection: Any, target: Evidence) -> None:
    # lookup_id/job_id may be cleared by the database (SET NULL); the ORM never rewrites evidence.
    raise EvidenceImmutable(f"evidence {target.id} is immutable")


@event.listens_for(Evidence, "before_delete")
def _refuse_delete(_mapper: Any, _connection: Any, target: Evidence) -> None:
    raise EvidenceImmutable(f"evidence {target.id} is immutable; it goes only with its provider")


class LookupKind(StrEnum):
    """Which official system a lookup asks."""

    icp = "icp"
    licence = "licence"
    psb = "psb"  # public-security filing: recorded by hand only (no automatic lookup)
    certification = "certification"  # certificate register (CNCA): recorded by hand only


class LookupState(StrEnum):
    """Where a lookup stands."""

    pending = "pending"  # job fetching a captcha
    awaiting_answer = "awaiting_answer"  # captcha shown to the analyst
    checking = "checking"  # answer submitted, job asking the system
    completed = "completed"
    failed = "failed"
    manual = "manual"  # recorded by hand by an analyst (with a screenshot as evidence)


class Lookup(SQLModel, table=True):
    """An official lookup in progress or done: the query, the current captcha and the outcome."""

    __tablename__ = "lookup"

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    kind: LookupKind = Field(sa_type=sa.String(16), index=True)
    query: str = Field(max_length=200)
    state: LookupState = Field(default=LookupState.pending, sa_type=sa.String(20), index=True)
    message: Optional[str] = Field(default=None, sa_type=sa.Text)
    # The official system's session token (short-lived) and the captcha being answered.
    token: Optional[str] = Field(default=None, sa_type=sa.Text)
    token_expires_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    captcha_uuid: Optional[str] = Field(default=None, max_length=200)
    captcha_evidence_id: Optional[int] = None
    captcha_extra: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    failures: int = Field(default=0)
    result_evidence_id: Optional[int] = None
    records: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    job_id: Optional[int] = None
    created_by_id: Optional[int] = None
    created_by_name: str = Field(default="system", max_length=60)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
    updated_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
    completed_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
