"""Audit trail: who changed what, with before and after values."""

from datetime import datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock


class AuditEntry(SQLModel, table=True):
    __tablename__ = "audit_entry"

    id: Optional[int] = Field(default=None, primary_key=True)
    at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)
    actor_id: Optional[int] = Field(default=None)
    actor_name: str = Field(max_length=60)
    action: str = Field(max_length=10)
    entity: str = Field(max_length=40)
    entity_id: Optional[int] = None
    provider_id: Optional[int] = Field(default=None, index=True)
    changes: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
