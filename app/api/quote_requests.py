"""/api/v1/cases/<id>/quote-requests: request quotes (询价) from the providers of chosen offers, and see where
each request stands."""

from __future__ import annotations

from flask import Response, g, jsonify
from pydantic import BaseModel, Field

from app.api import bp
from app.api.body import json_object
from app.api.routing import MAX_ID, api_route, created
from app.cases import quote_requests as service
from app.cases.cases import Actor
from app.core.db import get_session
from app.models.enums import Role

REQUESTS = f"/cases/<int(max={MAX_ID}):case_id>/quote-requests"


class QuoteRequestSent(BaseModel):
    """One provider's link (shown only now: only its hash is stored)."""

    provider_id: int
    invitation_id: int
    url: str


class QuoteRequestsSent(BaseModel):
    """One request per provider of the given offers."""

    items: list[QuoteRequestSent]


class QuoteRequestStatus(BaseModel):
    """Where one request stands: sent, opened, submitted, expired or revoked."""

    invitation_id: int
    provider_id: int | None
    provider_name: str
    offer_ids: list[int]
    status: str = Field(description="sent, opened, submitted, expired or revoked")
    expires_at: str
    opened_at: str | None
    submitted_at: str | None
    quote_id: int | None = Field(description="the quote sent through the link")
    created_by: str
    created_at: str


class QuoteRequestList(BaseModel):
    """A case's quote requests, the newest first."""

    items: list[QuoteRequestStatus]


@api_route(
    bp,
    REQUESTS,
    "POST",
    summary="向供应商询价（每家一个链接） (request quotes: one link per provider)",
    role=Role.analyst,
    request_model=service.QuoteRequestIn,
    response_model=QuoteRequestsSent,
    status=201,
    errors=(404,),
    tags=("cases",),
)
def create_quote_requests(case_id: int) -> Response:
    """offer_ids from the case's advice (eligible or not); the offers are grouped by provider and each
    provider gets one link (e-mailed to its contact address where SMTP is set)."""
    body = service.read_request(json_object())
    user = g.api_user
    sent = service.request_quotes(
        get_session(),
        case_id=case_id,
        offer_ids=body.offer_ids,
        actor=Actor(user.id, user.username),
        expires_in_days=body.expires_in_days,
    )
    return created({"items": [item.as_dict() for item in sent]})


@api_route(
    bp,
    REQUESTS,
    "GET",
    summary="选型案例的询价及其状态 (a case's quote requests and their status)",
    role=Role.analyst,
    response_model=QuoteRequestList,
    errors=(404,),
    tags=("cases",),
)
def list_quote_requests(case_id: int) -> Response:
    """Each request's status (sent, opened, submitted, expired, revoked) and the quote it brought."""
    items = service.list_requests(get_session(), case_id=case_id)
    return jsonify({"items": [item.as_dict() for item in items]})
