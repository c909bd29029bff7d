"""Procurement cases: a buyer's questionnaire answers, and the checklist ticks made for the case."""

from datetime import datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock
from app.models.versioning import Versioned


class ProcurementCase(Versioned, SQLModel, table=True):
    __tablename__ = "procurement_case"
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    title: str = Field(max_length=120)
    workload_kind: str = Field(max_length=32, index=True)
    # The answers as entered so far (validated section by section); complete once every step is valid.
    answers: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    step: str = Field(default="workload", max_length=20)
    complete: bool = Field(default=False)
    owner_id: Optional[int] = Field(default=None, foreign_key="user.id", index=True, ondelete="SET NULL")
    owner_name: str = Field(default="", max_length=60)
    version: int = Field(default=1)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
    updated_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)


class ChecklistTick(SQLModel, table=True):
    __tablename__ = "checklist_tick"
    __audited__ = True
    __table_args__ = (
        sa.UniqueConstraint("case_id", "item_key", "provider_id", name="uq_checklist_tick_item"),
    )

    id: Optional[int] = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="procurement_case.id", index=True, ondelete="CASCADE")
    item_key: str = Field(max_length=60)
    provider_id: Optional[int] = Field(
        default=None, foreign_key="provider.id", index=True, ondelete="CASCADE"
    )
    done: bool = Field(default=True)
    comment: str = Field(default="", max_length=2000, sa_type=sa.Text)
    evidence_url: Optional[str] = Field(default=None, max_length=500)
    ticked_by_id: Optional[int] = Field(default=None, foreign_key="user.id", ondelete="SET NULL")
    ticked_by: str = Field(default="", max_length=60)
    ticked_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
