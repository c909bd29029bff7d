"""Files uploaded for a background import, kept until the import job has read them."""

from datetime import datetime
from typing import Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from app.core import clock


class ImportUpload(SQLModel, table=True):
    __tablename__ = "import_upload"

    id: Optional[int] = Field(default=None, primary_key=True)
    filename: str = Field(max_length=255)
    format: str = Field(max_length=8)
    dry_run: bool = Field(default=False)
    data: bytes = Field(sa_type=sa.LargeBinary)
    sha256: str = Field(max_length=64)
    size: int
    created_by_name: str = Field(default="system", max_length=60)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
