"""Per-item verification (GET .../verification) and the footer recorded by hand (POST .../footer/manual)."""

from __future__ import annotations

from typing import Any

from flask import Response, g, jsonify, request
from pydantic import BaseModel, Field

from app.api import bp
from app.api.errors import screenshot_upload
from app.api.routing import MAX_ID, api_route, created
from app.api.schemas import ItemVerificationPublic
from app.core.db import get_session
from app.credentials import footer_manual, manual_lookups
from app.credentials.verification import verification_of
from app.models.enums import Role
from app.registry.providers import get_provider

ONE = f"/providers/<int(max={MAX_ID}):provider_id>"


class VerificationList(BaseModel):
    """Every item of a provider with its verification status."""

    provider_id: int
    items: list[ItemVerificationPublic]


class ManualFooterRequest(BaseModel):
    """multipart/form-data: the footer text as the site shows it, and the screenshot as the file."""

    url: str | None = Field(default=None, description="the page looked at; default the registered website")
    footer_text: str = Field(description="the footer's text, copied as shown (at most 4,000 characters)")
    looked_at: str = Field(description="when the analyst looked: ISO 8601; without offset, display zone time")
    note: str | None = Field(default=None, max_length=manual_lookups.MAX_NOTE)
    screenshot: bytes = Field(description="the file: PNG, JPEG or PDF (by content), at most 5 MB")


class ManualFooterPublic(BaseModel):
    """The stored footer record: the evidence id and what the footer parser read from the text."""

    evidence_id: int
    url: str
    identifiers: list[dict[str, Any]]
    company_name: str | None
    manual: dict[str, Any]


@api_route(
    bp,
    ONE + "/verification",
    "GET",
    summary="逐项核实状态 (each item's verification status)",
    role=Role.viewer,
    response_model=VerificationList,
    errors=(404,),
    tags=("providers",),
)
def provider_verification(provider_id: int) -> Response:
    """Every licence, filing, certification, the footer, the credit record and each claimed offer figure."""
    session = get_session()
    get_provider(session, provider_id=provider_id)  # 404 for an unknown provider
    items = [item.to_dict() for item in verification_of(session, provider_id)]
    return jsonify({"provider_id": provider_id, "items": items})


@api_route(
    bp,
    ONE + "/footer/manual",
    "POST",
    summary="人工记录网站页脚 (record the website footer by hand, with a screenshot)",
    role=Role.analyst,
    form_model=ManualFooterRequest,
    response_model=ManualFooterPublic,
    status=201,
    errors=(404, 415),
    tags=("providers",),
)
def record_manual_footer(provider_id: int) -> Response:
    """multipart/form-data only; the footer text is read like a scraped page and the check re-runs."""
    data, filename = screenshot_upload()
    evidence = footer_manual.record_footer(
        get_session(),
        provider_id=provider_id,
        values=request.form,
        screenshot=data,
        filename=filename,
        user=g.api_user,
    )
    extracted = evidence.extracted or {}
    body = {
        "evidence_id": evidence.id,
        "url": evidence.url,
        "identifiers": extracted.get("identifiers", []),
        "company_name": extracted.get("company_name"),
        "manual": extracted.get("manual", {}),
    }
    return created(body)
