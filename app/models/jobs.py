"""Background jobs: one row per queued task, so pages can show its state, progress, result or error."""

from datetime import datetime
from enum import StrEnum
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock


class JobState(StrEnum):
    """Where a job stands; the last four are final."""

    queued = "queued"
    running = "running"
    succeeded = "succeeded"
    failed = "failed"
    cancelled = "cancelled"
    interrupted = "interrupted"


FINAL_STATES = frozenset({JobState.succeeded, JobState.failed, JobState.cancelled, JobState.interrupted})


class Job(SQLModel, table=True):
    __tablename__ = "job"

    id: Optional[int] = Field(default=None, primary_key=True)
    kind: str = Field(max_length=60, index=True)
    state: JobState = Field(default=JobState.queued, index=True, sa_type=sa.String(16))
    params: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    result: Optional[Any] = Field(default=None, sa_column=Column(JSON, nullable=True))
    error: Optional[str] = Field(default=None, sa_type=sa.Text)
    progress: Optional[dict[str, Any]] = Field(default=None, sa_column=Column(JSON, nullable=True))
    provider_id: Optional[int] = Field(
        default=None, foreign_key="provider.id", index=True, ondelete="SET NULL"
    )
    created_by_id: Optional[int] = None
    created_by_name: str = Field(default="system", max_length=60)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)
    started_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    finished_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    # Queue bookkeeping: the queue's task id, who runs it, its last sign of life, cooperative cancel.
    queue_id: Optional[str] = Field(default=None, max_length=64)
    worker: Optional[str] = Field(default=None, max_length=120)
    heartbeat_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    cancel_requested: bool = Field(default=False)
    attempts: int = Field(default=0)

    @property
    def finished(self) -> bool:
        """True once the job reached a final state."""
        return self.state in FINAL_STATES
