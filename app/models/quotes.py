"""Quotes (报价) for a procurement case: what a provider offered for one of its offers, with the signed scan.

A quote belongs to a case and to the provider (and, while it exists, the offer) it prices. An analyst
enters one received by e-mail or phone by hand; a later slice lets the provider fill one in through an
invitation link (`invitation_id`). Quotes are never changed; a new price is a new quote. The scan is
immutable Evidence (purpose "quote_scan").
"""

from datetime import date, datetime
from enum import StrEnum
from typing import Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from app.core import clock
from app.models.enums import BandwidthType


class QuoteChannel(StrEnum):
    """How the quote reached the buyer."""

    email = "email"
    phone = "phone"
    other = "other"
    link = "link"  # the provider filled it in through a quote request's link


class Quote(SQLModel, table=True):
    """One provider's quote for a case: prices in CNY, term, delivery, what is included, SLA, validity."""

    __tablename__ = "quote"
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    case_id: int = Field(foreign_key="procurement_case.id", index=True, ondelete="CASCADE")
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    offer_id: Optional[int] = Field(default=None, foreign_key="offer.id", index=True, ondelete="SET NULL")
    invitation_id: Optional[int] = Field(default=None, foreign_key="invitation.id", ondelete="SET NULL")
    received_via: QuoteChannel = Field(sa_type=sa.String(16))
    price_gpu_hour_cny: Optional[float] = None
    price_month_cny: Optional[float] = None
    min_term_months: Optional[int] = None
    delivery_on: Optional[date] = None
    includes_public_bandwidth: bool = Field(default=False)
    includes_storage: bool = Field(default=False)
    includes_support: bool = Field(default=False)
    sla_availability_pct: Optional[float] = None
    sla_compensation: str = Field(default="", sa_type=sa.Text)
    bandwidth_type: BandwidthType = Field(default=BandwidthType.unknown, sa_type=sa.String(16))
    trial_server_lent: bool = Field(default=False)
    valid_until: date
    notes: str = Field(default="", sa_type=sa.Text)
    evidence_id: Optional[int] = Field(default=None, foreign_key="evidence.id", ondelete="SET NULL")
    entered_by_id: Optional[int] = Field(default=None, foreign_key="user.id", ondelete="SET NULL")
    entered_by_name: str = Field(default="system", max_length=60)
    entered_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
