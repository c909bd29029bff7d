"""Settings edited on the admin settings page (系统设置): each row overrides one setting at run time."""

from datetime import datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock


class RuntimeSetting(SQLModel, table=True):
    """One setting's value as an admin last saved it (the name of the Settings field); audited."""

    __tablename__ = "runtime_setting"
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    name: str = Field(max_length=80, unique=True)
    value: Any = Field(sa_column=Column(JSON, nullable=False))
    updated_by_name: str = Field(default="", max_length=60)
    updated_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
