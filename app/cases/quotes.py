"""Quotes for a procurement case: enter one received by e-mail or phone by hand (with its scan), list, read.

The values are checked field by field (prices in CNY, above zero, at least one of the two); the scan follows
the manual records' upload rules (PNG, JPEG or PDF by content, at most 5 MB) and is kept as immutable
Evidence. The quote row is audited like every audited table. A quote past its `valid_until` (business
day) is expired.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from datetime import date
from typing import Any, Optional

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from sqlmodel import Session, col, select

from app.cases.cases import get_case
from app.core import clock
from app.core.clock import aware
from app.core.errors import FieldError, InvalidInput, NotFound, from_validation_error
from app.core.limits import MAX_ID
from app.credentials.manual_lookups import (
    check_upload,
    read_by_hand,
    screenshot_evidence,
)
from app.models import Provider
from app.models.disclosure import Invitation
from app.models.enums import BandwidthType
from app.models.quotes import Quote, QuoteChannel
from app.trials.bench_uploads import get_offer

PURPOSE = "quote_scan"
SCAN_FIELD = "scan"
MAX_TEXT = 2000
MAX_LIST = 200
PRICE_FIELDS = ("price_gpu_hour_cny", "price_month_cny")
# The quote's yes/no facts: what the price includes and whether a trial server is lent.
YES_NO = ("includes_public_bandwidth", "includes_storage", "includes_support", "trial_server_lent")


class QuoteInput(BaseModel):
    """A quote as entered: every value of the form or API body, checked."""

    model_config = ConfigDict(extra="forbid")

    offer_id: int = Field(ge=1, le=MAX_ID, description="the priced offer (套餐) in the registry")
    received_via: QuoteChannel = Field(description="email, phone or other")
    price_gpu_hour_cny: Optional[float] = Field(
        default=None, gt=0, le=100_000, allow_inf_nan=False, description="元 per GPU-hour"
    )
    price_month_cny: Optional[float] = Field(
        default=None, gt=0, le=100_000_000, allow_inf_nan=False, description="元 per month"
    )
    min_term_months: Optional[int] = Field(default=None, ge=1, le=120, description="minimum term, months")
    delivery_on: Optional[date] = Field(default=None, description="delivery date, YYYY-MM-DD")
    includes_public_bandwidth: bool = False
    includes_storage: bool = False
    includes_support: bool = False
    sla_availability_pct: Optional[float] = Field(
        default=None, gt=0, le=100, allow_inf_nan=False, description="SLA availability, percent"
    )
    sla_compensation: str = Field(default="", max_length=MAX_TEXT, description="SLA compensation")
    bandwidth_type: BandwidthType = Field(
        default=BandwidthType.unknown, description="dedicated, shared or unknown"
    )
    trial_server_lent: bool = False
    valid_until: date = Field(description="the quote is valid until this day, YYYY-MM-DD")
    notes: str = Field(default="", max_length=MAX_TEXT)

    @field_validator("sla_compensation", "notes")
    @classmethod
    def _plain_text(cls, value: str) -> str:
        if "\x00" in value:
            raise ValueError(_("不能包含空字符（NUL）"))
        return unicodedata.normalize("NFC", value).strip()


def _given(values: Mapping[str, Any]) -> dict[str, Any]:
    """The values actually given: a blank form field counts as left out."""
    return {
        name: value
        for name, value in values.items()
        if not (value is None or (isinstance(value, str) and not value.strip()))
    }


def read_quote(values: Mapping[str, Any]) -> QuoteInput:
    """The checked quote, or InvalidInput naming every bad field and what it accepts."""
    try:
        entry = QuoteInput.model_validate(_given(values))
    except ValidationError as exc:
        raise from_validation_error(exc) from None
    if entry.price_gpu_hour_cny is None and entry.price_month_cny is None:
        raise InvalidInput(
            [
                FieldError(name, _("请至少填写每卡时单价或月价之一（人民币元，大于 0）"))
                for name in PRICE_FIELDS
            ]
        )
    return entry


def check_scan(data: Any) -> tuple[bytes, str]:
    """The scan's bytes and detected type (the manual records' upload rules), or InvalidInput on `scan`."""
    return check_upload(
        data,
        field=SCAN_FIELD,
        missing=_l("请上传签字盖章的报价单扫描件（PNG、JPEG 或 PDF）"),
        too_large=_l("扫描件过大：最大 %(mb)d MB"),
        wrong_type=_l("扫描件须为 PNG、JPEG 图片或 PDF 文件（按文件内容识别，与文件名无关）"),
    )


def create_quote(
    session: Session,
    *,
    case_id: int,
    values: Mapping[str, Any],
    scan: Any,
    user: Any,
    filename: str | None = None,
    invitation: Invitation | None = None,
) -> Quote:
    """Store a quote entered by hand (or sent through its quote request's link, `invitation`) and its scan as
    evidence (one transaction, audited)."""
    case = get_case(session, case_id=case_id)
    now, entry, body, content_type, actor = read_by_hand(
        lambda _now: _read(values, by_link=invitation is not None), scan, user, check_file=check_scan
    )
    offer = get_offer(session, entry["offer_id"])
    quote = Quote(
        case_id=case.id,
        provider_id=offer.provider_id,
        invitation_id=invitation.id if invitation is not None else None,
        entered_by_id=actor[0],
        entered_by_name=actor[1],
        entered_at=now,
        **entry,
    )
    evidence = screenshot_evidence(
        provider_id=offer.provider_id,
        purpose=PURPOSE,
        url=f"quote:case/{case.id}/offer/{offer.id}",
        body=body,
        content_type=content_type,
        at=now,
        actor=actor,
        extracted={**_entered(quote), "filename": (filename or "")[:200]},
    )
    session.add(evidence)
    session.flush()
    quote.evidence_id = evidence.id
    session.add(quote)
    session.commit()
    session.refresh(quote)
    return quote


def _read(values: Mapping[str, Any], *, by_link: bool) -> dict[str, Any]:
    """The checked values; the channel "link" is only for quotes sent through a quote request's link."""
    entry = read_quote(values).model_dump()
    if (entry["received_via"] == QuoteChannel.link) != by_link:
        message = _("询价链接的报价只能由供应商通过链接提交；人工录入请选择邮件、电话或其他")
        raise InvalidInput(message, field="received_via")
    return entry


def _entered(quote: Quote) -> dict[str, Any]:
    """What the analyst entered, as JSON-plain data (kept with the scan)."""
    values = quote_dict(quote)
    for key in ("id", "provider_name", "invitation_id", "expired", "evidence_id"):
        values.pop(key)
    return values


def list_quotes(session: Session, *, case_id: int, limit: int = MAX_LIST) -> list[Quote]:
    """The case's quotes, the latest entered first (NotFound when the case does not exist)."""
    get_case(session, case_id=case_id)
    statement = (
        select(Quote)
        .where(Quote.case_id == case_id)
        .order_by(col(Quote.entered_at).desc(), col(Quote.id).desc())
        .limit(limit)
    )
    return list(session.exec(statement))


def get_quote(session: Session, *, case_id: int, quote_id: int) -> Quote:
    """One quote of the case, or NotFound."""
    quote = session.get(Quote, quote_id)
    if quote is None or quote.case_id != case_id:
        raise NotFound(_("报价单 %(id)s 不存在", id=quote_id), field="quote_id")
    return quote


def is_expired(quote: Quote, today: date | None = None) -> bool:
    """Whether the quote's validity has passed (it is still valid on its `valid_until` day)."""
    return quote.valid_until < (today or clock.business_today())


def quote_dict(quote: Quote, provider_name: str = "", today: date | None = None) -> dict[str, Any]:
    """A quote as JSON-plain data (API, later the comparison and the decision)."""
    return {
        "id": quote.id,
        "case_id": quote.case_id,
        "provider_id": quote.provider_id,
        "provider_name": provider_name,
        "offer_id": quote.offer_id,
        "invitation_id": quote.invitation_id,
        "received_via": str(quote.received_via),
        "price_gpu_hour_cny": quote.price_gpu_hour_cny,
        "price_month_cny": quote.price_month_cny,
        "min_term_months": quote.min_term_months,
        "delivery_on": quote.delivery_on.isoformat() if quote.delivery_on else None,
        "includes_public_bandwidth": quote.includes_public_bandwidth,
        "includes_storage": quote.includes_storage,
        "includes_support": quote.includes_support,
        "sla_availability_pct": quote.sla_availability_pct,
        "sla_compensation": quote.sla_compensation,
        "bandwidth_type": str(quote.bandwidth_type),
        "trial_server_lent": quote.trial_server_lent,
        "valid_until": quote.valid_until.isoformat(),
        "expired": is_expired(quote, today),
        "notes": quote.notes,
        "evidence_id": quote.evidence_id,
        "entered_by": quote.entered_by_name,
        "entered_at": aware(quote.entered_at).isoformat(),  # type: ignore[union-attr]
    }


def provider_names(session: Session, quotes: list[Quote]) -> dict[int, str]:
    """The legal name of each quoting provider."""
    ids = {quote.provider_id for quote in quotes}
    if not ids:
        return {}
    rows = session.exec(select(Provider.id, Provider.legal_name).where(col(Provider.id).in_(ids)))
    return {provider_id: name for provider_id, name in rows}
