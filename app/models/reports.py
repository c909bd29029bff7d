"""Exported reports: every PDF handed out, with its number, author, hash and the inputs it was built from."""

from datetime import datetime
from enum import StrEnum
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock


class ReportKind(StrEnum):
    """What a report is about."""

    provider = "provider"
    case = "case"
    decision = "decision"  # a procurement decision (采购决定), always signed


class ExportRecord(SQLModel, table=True):
    """One exported PDF. Rows are never changed or deleted, and outlive the provider or case they describe."""

    __tablename__ = "export_record"
    __table_args__ = (sa.UniqueConstraint("year", "seq", name="uq_export_record_year_seq"),)
    __audited__ = True
    # The PDF and the input snapshot stay in this row; the audit trail records the number, hash and who.
    __audit_skip__ = ("pdf_bytes", "inputs_json")

    id: Optional[int] = Field(default=None, primary_key=True)
    number: str = Field(max_length=24, unique=True)  # GV-2026-000123
    year: int
    seq: int
    kind: str = Field(max_length=16, index=True)
    subject_id: int = Field(index=True)  # provider, case or decision id; no foreign key: outlives it
    subject_name: str = Field(max_length=200)
    provider_id: Optional[int] = Field(default=None, index=True)  # set for provider reports
    language: str = Field(max_length=8)
    created_by_id: Optional[int] = None
    created_by: str = Field(max_length=60)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)
    verdict: Optional[str] = Field(default=None, max_length=20)
    pages: int
    size_bytes: int
    sha256: str = Field(max_length=64, index=True)
    inputs_sha256: str = Field(max_length=64)
    inputs_json: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    pdf_bytes: bytes = Field(sa_column=Column(sa.LargeBinary, nullable=False))
