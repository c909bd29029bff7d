"""/api/v1 enterprise credit (企业信用): a provider's credit records and their verification; record one
by hand (multipart, with a screenshot)."""

from __future__ import annotations

import json
from typing import Any

from flask import Response, g, jsonify, request, url_for
from flask_babel import gettext as _
from pydantic import BaseModel, Field

from app.api import bp
from app.api.errors import screenshot_upload
from app.api.routing import MAX_ID, api_route, created
from app.core.db import get_session
from app.core.errors import InvalidInput
from app.credentials import credit as service
from app.models.enums import Role
from app.registry.providers import get_provider

ONE = f"/providers/<int(max={MAX_ID}):provider_id>"


class ManualCreditRequest(BaseModel):
    """multipart/form-data: what the credit system showed, and the screenshot as the file `screenshot`."""

    source: str = Field(description="gsxt (国家企业信用信息公示系统), creditchina (信用中国) or zxgk (court)")
    uscc: str = Field(description="the USCC looked up by; must equal the provider's")
    registration_status: str | None = Field(
        default=None, description="登记状态 (required for gsxt): 存续, 在业, 在营, 开业, 吊销, 注销, 迁出 ..."
    )
    registered_capital_wan: str | None = Field(default=None, description="registered capital in 万 (10,000)")
    capital_currency: str | None = Field(default=None, description="CNY (default), USD, HKD, EUR, JPY or GBP")
    founded_on: str | None = Field(default=None, description="成立日期, YYYY-MM-DD")
    abnormal_listed: str | None = Field(default=None, description="yes when on 经营异常名录")
    abnormal_since: str | None = Field(
        default=None, description="listed on, YYYY-MM-DD (required when listed)"
    )
    abnormal_reason: str | None = Field(default=None, description="why listed (required when listed)")
    dishonest_listed: str | None = Field(default=None, description="yes when on 严重违法失信名单")
    dishonest_since: str | None = Field(
        default=None, description="listed on, YYYY-MM-DD (required when listed)"
    )
    dishonest_reason: str | None = Field(default=None, description="why listed (required when listed)")
    penalties_count: str | None = Field(default=None, description="administrative penalties shown (a count)")
    penalties_note: str | None = Field(default=None, description="what the penalties were")
    enforcements: str | None = Field(
        default=None,
        description='JSON list of {"amount_cny": "125000.00", "filed_on": "YYYY-MM-DD", "court": "court"}',
    )
    seen: str = Field(description="what the analyst saw, in their words")
    looked_at: str = Field(description="when the analyst looked: ISO 8601; without offset, display zone time")
    screenshot: bytes = Field(description="the file: PNG, JPEG or PDF (by content), at most 5 MB")


class CreditRecordPublic(BaseModel):
    """One look at a credit system, as recorded."""

    id: int
    provider_id: int
    source: str
    method: str
    uscc: str
    registration_status: str | None
    alive: bool | None
    registered_capital_wan: str | None
    capital_currency: str
    founded_on: str | None
    abnormal_listed: bool
    abnormal_since: str | None
    abnormal_reason: str
    dishonest_listed: bool
    dishonest_since: str | None
    dishonest_reason: str
    penalties_count: int
    penalties_note: str
    enforcements: list[dict[str, Any]]
    seen: str
    looked_at: str | None
    evidence_id: int | None
    recorded_by: str
    recorded_at: str | None


class CreditVerification(BaseModel):
    """How far the credit item is verified: unverified, verified_lookup / _manual, contradicted, expired."""

    status: str
    by: str | None
    at: str | None
    evidence_id: int | None
    record_id: int | None


class CreditList(BaseModel):
    """A provider's credit records, the latest look first, and the item's verification."""

    verification: CreditVerification
    items: list[CreditRecordPublic]


def _enforcements(text: str | None) -> Any:
    """The enforcement records sent as JSON text (none when blank)."""
    if not text or not text.strip():
        return []
    try:
        return json.loads(text)
    except ValueError:
        raise InvalidInput(
            _("须为 JSON 列表，每项含 amount_cny、filed_on 和 court"), field="enforcements"
        ) from None


@api_route(
    bp,
    ONE + "/credit",
    "GET",
    summary="企业信用记录 (enterprise credit records)",
    role=Role.viewer,
    response_model=CreditList,
    errors=(404,),
    tags=("credit",),
)
def list_provider_credit(provider_id: int) -> Response:
    """The provider's credit records (at most 50, the latest look first) and the item's verification."""
    session = get_session()
    get_provider(session, provider_id=provider_id)
    records = service.list_records(session, provider_id=provider_id, limit=50)
    verification = service.credit_verification(session, provider_id)
    return jsonify(
        {
            "verification": CreditVerification.model_validate(verification).model_dump(mode="json"),
            "items": [service.record_dict(record) for record in records],
        }
    )


@api_route(
    bp,
    ONE + "/credit/manual",
    "POST",
    summary="人工记录企业信用 (record a credit lookup by hand, with a screenshot)",
    role=Role.analyst,
    form_model=ManualCreditRequest,
    response_model=CreditRecordPublic,
    status=201,
    errors=(404, 415),
    tags=("credit",),
)
def record_manual_credit(provider_id: int) -> Response:
    """multipart/form-data only; the screenshot is kept as evidence, the values as a credit record."""
    data, filename = screenshot_upload()
    session = get_session()
    record = service.record_manual(
        session,
        provider_id=provider_id,
        values=request.form,
        enforcements=_enforcements(request.form.get("enforcements")),
        screenshot=data,
        filename=filename,
        user=g.api_user,
    )
    return created(service.record_dict(record), url_for("api.list_provider_credit", provider_id=provider_id))
