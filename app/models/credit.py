"""Enterprise credit records (企业信用): what gsxt, 信用中国 or the court site showed for a provider.

One row per look an analyst (or, later, a lookup adapter) took at one of the three public systems, keyed by
the USCC it was looked up by; rows are never changed, a newer look is a new row. The screenshot or saved
page is immutable Evidence (purpose "credit_manual").
"""

from datetime import date, datetime
from enum import StrEnum
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock


class CreditSource(StrEnum):
    """Which public system the record was read from."""

    gsxt = "gsxt"  # 国家企业信用信息公示系统 (registration, lists, penalties)
    creditchina = "creditchina"  # 信用中国 (penalties, dishonest parties)
    zxgk = "zxgk"  # 中国执行信息公开网 (court enforcement)


class CreditMethod(StrEnum):
    """How the record was taken."""

    manual = "manual"  # entered by an analyst, with a screenshot
    lookup = "lookup"  # read by a lookup adapter from the official site


class CreditRecord(SQLModel, table=True):
    """One look at a provider's credit record in one public system, as it was seen."""

    __tablename__ = "credit_record"

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    source: CreditSource = Field(sa_type=sa.String(16))
    method: CreditMethod = Field(default=CreditMethod.manual, sa_type=sa.String(16))
    uscc: str = Field(max_length=32)
    registration_status: Optional[str] = Field(default=None, max_length=20)
    # In the currency's unit (元 for CNY); entered and shown in 万 (ten thousands).
    registered_capital: Optional[int] = Field(default=None, sa_type=sa.BigInteger)
    capital_currency: str = Field(default="CNY", max_length=3)
    founded_on: Optional[date] = None
    abnormal_listed: bool = Field(default=False)
    abnormal_since: Optional[date] = None
    abnormal_reason: str = Field(default="", sa_type=sa.Text)
    dishonest_listed: bool = Field(default=False)
    dishonest_since: Optional[date] = None
    dishonest_reason: str = Field(default="", sa_type=sa.Text)
    penalties_count: int = Field(default=0)
    penalties_note: str = Field(default="", sa_type=sa.Text)
    # [{"amount_cny": "125000.00", "filed_on": "2026-05-01", "court": "...", "case_number": "..."}]
    enforcements: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    seen: str = Field(default="", sa_type=sa.Text)
    looked_at: datetime = Field(sa_type=sa.DateTime(timezone=True))
    evidence_id: Optional[int] = Field(default=None, foreign_key="evidence.id", ondelete="SET NULL")
    recorded_by_id: Optional[int] = None
    recorded_by_name: str = Field(default="system", max_length=60)
    recorded_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
