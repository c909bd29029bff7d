"""/api/v1/cases/<id>/quotes: enter a quote received by e-mail or phone by hand (multipart, with its scan)
and list a case's quotes."""

from __future__ import annotations

from typing import Any

from flask import Response, g, jsonify, request, url_for
from flask_babel import gettext as _
from pydantic import BaseModel, Field

from app.api import bp
from app.api.errors import ApiError
from app.api.routing import MAX_ID, api_route, created
from app.cases import quotes as service
from app.core.db import get_session
from app.core.errors import FieldError
from app.core.request_files import uploaded_file
from app.credentials.manual_lookups import MAX_SCREENSHOT_BYTES
from app.models.enums import Role
from app.models.quotes import Quote

QUOTES = f"/cases/<int(max={MAX_ID}):case_id>/quotes"


class QuoteForm(service.QuoteInput):
    """multipart/form-data: the quote's values (blank ones left out) and its scan as the file `scan`."""

    scan: bytes = Field(description="the signed quote: PNG, JPEG or PDF (by content), at most 5 MB")


class QuotePublic(BaseModel):
    """A quote as stored; `expired` once its `valid_until` day has passed."""

    id: int
    case_id: int
    provider_id: int
    provider_name: str
    offer_id: int | None
    invitation_id: int | None
    received_via: str
    price_gpu_hour_cny: float | None
    price_month_cny: float | None
    min_term_months: int | None
    delivery_on: str | None
    includes_public_bandwidth: bool
    includes_storage: bool
    includes_support: bool
    sla_availability_pct: float | None
    sla_compensation: str
    bandwidth_type: str
    trial_server_lent: bool
    valid_until: str
    expired: bool
    notes: str
    evidence_id: int | None
    scan_url: str | None = Field(description="the scan as stored evidence (signed-in pages)")
    entered_by: str
    entered_at: str


class QuoteList(BaseModel):
    """A case's quotes, the latest entered first."""

    items: list[QuotePublic]


def _public(quote: Quote, provider_name: str) -> dict[str, Any]:
    scan = url_for("web.evidence_download", evidence_id=quote.evidence_id) if quote.evidence_id else None
    return {**service.quote_dict(quote, provider_name), "scan_url": scan}


def _one(session: Any, quote: Quote) -> dict[str, Any]:
    return _public(quote, service.provider_names(session, [quote]).get(quote.provider_id, ""))


def _scan_upload() -> tuple[bytes, str | None]:
    """The scan from a multipart/form-data request (file field `scan`); 415 for any other body."""
    if request.mimetype != "multipart/form-data":
        message = _("请以 multipart/form-data 上传，扫描件放在文件字段 scan")
        raise ApiError(415, [FieldError(service.SCAN_FIELD, message)])
    data, filename = uploaded_file(service.SCAN_FIELD, MAX_SCREENSHOT_BYTES)
    return data or b"", filename


@api_route(
    bp,
    QUOTES,
    "POST",
    summary="人工录入报价（邮件或电话收到，附扫描件） (enter a quote by hand, with its scan)",
    role=Role.analyst,
    form_model=QuoteForm,
    response_model=QuotePublic,
    status=201,
    response_headers=("Location",),
    errors=(404, 415),
    tags=("cases",),
)
def create_quote(case_id: int) -> Response:
    """multipart/form-data only; prices in CNY above zero (at least one of the two); the scan is kept as
    evidence."""
    data, filename = _scan_upload()
    session = get_session()
    values = {name: value for name, value in request.form.items() if name != service.SCAN_FIELD}
    quote = service.create_quote(
        session, case_id=case_id, values=values, scan=data, filename=filename, user=g.api_user
    )
    location = url_for("api.get_case_quote", case_id=case_id, quote_id=quote.id)
    return created(_one(session, quote), location)


@api_route(
    bp,
    QUOTES,
    "GET",
    summary="选型案例的报价 (a case's quotes)",
    role=Role.viewer,
    response_model=QuoteList,
    errors=(404,),
    tags=("cases",),
)
def list_case_quotes(case_id: int) -> Response:
    """At most 200, the latest entered first; each says whether it has expired."""
    session = get_session()
    quotes = service.list_quotes(session, case_id=case_id)
    names = service.provider_names(session, quotes)
    return jsonify({"items": [_public(quote, names.get(quote.provider_id, "")) for quote in quotes]})


@api_route(
    bp,
    QUOTES + f"/<int(max={MAX_ID}):quote_id>",
    "GET",
    summary="一条报价 (one quote of a case)",
    role=Role.viewer,
    response_model=QuotePublic,
    errors=(404,),
    tags=("cases",),
)
def get_case_quote(case_id: int, quote_id: int) -> Response:
    """The quote as stored, whether it has expired, and where its scan is."""
    session = get_session()
    return jsonify(_one(session, service.get_quote(session, case_id=case_id, quote_id=quote_id)))
