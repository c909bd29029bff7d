"""Change events: what changed about a provider since it was last looked at (issue 12, continuous vetting)."""

from datetime import date, datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock


class ChangeEvent(SQLModel, table=True):
    """One change: a finding added or cleared, a severity or verdict changed, a credential expiring.

    `dedupe_key` is unique, so running a schedule twice for the same day (or the same check run) records
    each change once.
    """

    __tablename__ = "change_event"

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    kind: str = Field(max_length=40, index=True)
    subject: str = Field(default="", max_length=120)
    dedupe_key: str = Field(max_length=200, unique=True)
    severity: str = Field(default="info", max_length=8)
    message_zh: str = Field(sa_type=sa.Text)
    message_en: str = Field(sa_type=sa.Text)
    details: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    check_run_id: Optional[int] = Field(default=None, foreign_key="check_run.id", ondelete="SET NULL")
    occurred_on: date = Field(index=True)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)

    def message(self, locale: str) -> str:
        """The message in the UI language (Chinese unless English is chosen)."""
        return self.message_en if locale == "en" else self.message_zh


class ScheduleRun(SQLModel, table=True):
    """One period of a schedule that was started: the unique (schedule, period) pair is the lock.

    Whichever worker inserts the row first starts the job; a second worker, a restart or a repeated tick
    in the same period finds the row and does nothing.
    """

    __tablename__ = "schedule_run"
    __table_args__ = (sa.UniqueConstraint("schedule", "period", name="uq_schedule_run_period"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    schedule: str = Field(max_length=40)
    period: str = Field(max_length=20)  # the local date (daily) or the date of the week's Monday (weekly)
    job_id: Optional[int] = Field(default=None, foreign_key="job.id", ondelete="SET NULL")
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
