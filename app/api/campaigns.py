"""/api/v1 peak-hour campaigns: plan one on a trial server, read its windows and verdict, cancel it."""

from __future__ import annotations

from typing import Any

from flask import Response, g, jsonify, url_for
from flask_babel import gettext as _
from pydantic import BaseModel, Field

from app.api import bp
from app.api.body import json_object
from app.api.routing import MAX_ID, api_route, created
from app.core.db import get_session
from app.core.errors import FieldError, InvalidInput
from app.models.enums import Role
from app.trials import campaign_reads, campaigns

SERVER = f"/trial-servers/<int(max={MAX_ID}):server_id>/campaigns"
CAMPAIGN = f"/campaigns/<int(max={MAX_ID}):campaign_id>"
TAGS = ("benchmarks",)
FIELDS = ("days", "peak", "offpeak", "params")


class CampaignRequest(BaseModel):
    """Days (1-14), windows as HH:MM-HH:MM in local time, stability-suite parameters."""

    days: int = Field(ge=1, le=campaigns.MAX_DAYS)
    peak: str = campaigns.DEFAULT_PEAK
    offpeak: str = campaigns.DEFAULT_OFFPEAK
    params: dict[str, Any] = Field(default_factory=dict)


class CampaignPublic(BaseModel):
    """A campaign: its windows (state, run, samples) and its outcome (peak vs off-peak, verdict)."""

    id: int
    trial_server_id: int
    provider_id: int
    suite: str
    days: int
    peak: str
    offpeak: str
    timezone: str
    params: dict[str, Any]
    state: str
    origin: str
    created_by: str
    created_at: str
    finished_at: str | None
    windows: list[dict[str, Any]]
    outcome: dict[str, Any]


@api_route(
    bp,
    SERVER,
    "POST",
    summary="安排高峰测试 (plan a peak-hour campaign)",
    role=Role.analyst,
    request_model=CampaignRequest,
    response_model=CampaignPublic,
    status=201,
    errors=(404, 409),
    tags=TAGS,
)
def create_campaign(server_id: int) -> Response:
    """The stability suite once in each peak and off-peak window for `days` days, started by the tick."""
    body = json_object()
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise InvalidInput([FieldError(name, _("不认识的字段")) for name in unknown])
    params = body.get("params") or {}
    if not isinstance(params, dict):
        raise InvalidInput(_("须为对象"), field="params")
    session = get_session()
    campaign = campaigns.create_campaign(
        session,
        server_id=server_id,
        days=body.get("days"),
        peak=body.get("peak"),
        offpeak=body.get("offpeak"),
        params=params,
        user=g.api_user,
    )
    return created(
        campaign_reads.campaign_public(session, campaign),
        url_for("api.get_campaign", campaign_id=campaign.id),
    )


@api_route(
    bp,
    CAMPAIGN,
    "GET",
    summary="高峰测试 (read a peak-hour campaign)",
    role=Role.viewer,
    response_model=CampaignPublic,
    errors=(404,),
    tags=TAGS,
)
def get_campaign(campaign_id: int) -> Response:
    """Windows, peak versus off-peak figures and the verdict (figures so far while it is active)."""
    session = get_session()
    campaign = campaign_reads.get_campaign(session, campaign_id=campaign_id)
    return jsonify(campaign_reads.campaign_public(session, campaign))


@api_route(
    bp,
    CAMPAIGN + "/cancel",
    "POST",
    summary="取消高峰测试 (cancel a campaign)",
    role=Role.analyst,
    response_model=CampaignPublic,
    errors=(404, 409),
    tags=TAGS,
)
def cancel_campaign(campaign_id: int) -> Response:
    """Cancel the planned windows and stop a running one through its job."""
    session = get_session()
    campaign = campaigns.cancel_campaign(session, campaign_id=campaign_id)
    return jsonify(campaign_reads.campaign_public(session, campaign))
