"""Stored vetting runs: the verdict of each check run and the findings behind it."""

from datetime import date, datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock


class CheckRun(SQLModel, table=True):
    __tablename__ = "check_run"
    # (provider, id) finds each provider's latest run without walking the table (the dashboard, PostgreSQL).
    __table_args__ = (sa.Index("ix_check_run_provider_id_id", "provider_id", "id"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: int = Field(foreign_key="provider.id", ondelete="CASCADE")
    verdict: str = Field(max_length=16, index=True)
    blockers: int = 0
    warnings: int = 0
    infos: int = 0
    checked_on: date  # the "today" the rules compared dates with
    provider_version: int = 1
    rules_version: str = Field(max_length=60)
    rule_ids: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    fact_names: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    fact_errors: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    job_id: Optional[int] = Field(default=None, foreign_key="job.id", ondelete="SET NULL")
    created_by_id: Optional[int] = None
    created_by_name: str = Field(default="system", max_length=60)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)


class StoredFinding(SQLModel, table=True):
    __tablename__ = "stored_finding"

    id: Optional[int] = Field(default=None, primary_key=True)
    check_run_id: int = Field(foreign_key="check_run.id", index=True, ondelete="CASCADE")
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    position: int = 0  # order within the run: most severe first
    rule_id: str = Field(max_length=60, index=True)
    red_flag: Optional[int] = None
    severity: str = Field(max_length=8, index=True)
    subject: str = Field(default="", max_length=80)
    message_zh: str = Field(sa_type=sa.Text)
    message_en: str = Field(sa_type=sa.Text)
    how_to_verify_zh: str = Field(default="", sa_type=sa.Text)
    how_to_verify_en: str = Field(default="", sa_type=sa.Text)
    evidence: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))

    def message(self, locale: str) -> str:
        """The message in the UI language (Chinese unless English is chosen)."""
        return self.message_en if locale == "en" else self.message_zh

    def how_to_verify(self, locale: str) -> str:
        """How to verify by hand, in the UI language."""
        return self.how_to_verify_en if locale == "en" else self.how_to_verify_zh
