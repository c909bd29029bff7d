"""/api/v1 official lookups: read a provider's lookups; record one by hand (multipart, with a screenshot)."""

from __future__ import annotations

from typing import Any

from flask import Response, g, jsonify, request, url_for
from pydantic import BaseModel, Field

from app.api import bp
from app.api.errors import screenshot_upload
from app.api.routing import MAX_ID, api_route, created
from app.core.clock import aware
from app.core.db import get_session
from app.credentials import lookups as service
from app.credentials import manual_lookups
from app.models.enums import Role
from app.models.evidence import Lookup
from app.registry.providers import get_provider

ONE = f"/providers/<int(max={MAX_ID}):provider_id>"


class ManualLookupRequest(BaseModel):
    """multipart/form-data: what the official site showed, and the screenshot as the file `screenshot`."""

    kind: str = Field(
        description="icp (ICP filing, beian.miit.gov.cn), licence (tsm.miit.gov.cn), psb (public-security "
        "filing, beian.mps.gov.cn) or certification (certificate register, cx.cnca.cn)"
    )
    found: str = Field(description="yes when the official site showed a record, no when it found none")
    query: str | None = Field(default=None, description="the name searched; default the legal name")
    holder_name: str | None = Field(default=None, description="unit (ICP) or company (licence) name shown")
    number: str | None = Field(default=None, description="filing number (ICP) or licence number")
    items: str | None = Field(default=None, description="site name (ICP) or business items, 、-separated")
    nature: str | None = Field(default=None, description="ICP: the unit's nature, e.g. 企业")
    domain: str | None = Field(default=None, description="ICP: the site's domain")
    status: str | None = Field(
        default=None,
        description="licence: 正常 (default), 撤销, 无效, 吊销, 注销 or 过期; certification: 有效 (default), "
        "暂停, 撤销, 注销 or 过期",
    )
    certificate_kind: str | None = Field(
        default=None, description="certification: iso9001 (default), iso27001, dengbao or other"
    )
    coverage: str | None = Field(default=None, description="licence: coverage, 、-separated")
    issue_date: str | None = Field(default=None, description="licence: YYYY-MM-DD")
    expiry_date: str | None = Field(default=None, description="licence: YYYY-MM-DD")
    looked_at: str = Field(description="when the analyst looked: ISO 8601; without offset, display zone time")
    note: str | None = Field(default=None, max_length=manual_lookups.MAX_NOTE)
    screenshot: bytes = Field(description="the file: PNG, JPEG or PDF (by content), at most 5 MB")


class LookupPublic(BaseModel):
    """An official lookup: state, query, records and, when recorded by hand, who recorded it and when."""

    id: int
    provider_id: int
    kind: str
    state: str
    query: str
    message: str
    records: list[dict[str, Any]]
    result_evidence_id: int | None
    manual: dict[str, Any] | None
    created_by: str
    created_at: str | None
    completed_at: str | None


class LookupList(BaseModel):
    """A provider's lookups, newest first."""

    items: list[LookupPublic]


def lookup_json(lookup: Lookup) -> dict[str, Any]:
    """A lookup as LookupPublic JSON (its message in the request's language)."""
    manual = manual_lookups.manual_info(lookup)
    if manual is not None:
        looked = manual.get("looked_at")
        manual = {**manual, "looked_at": looked.isoformat() if looked else None}
    created, completed = aware(lookup.created_at), aware(lookup.completed_at)
    return LookupPublic(
        id=lookup.id,
        provider_id=lookup.provider_id,
        kind=str(lookup.kind),
        state=str(lookup.state),
        query=lookup.query,
        message=service.message_text(lookup),
        records=lookup.records,
        result_evidence_id=lookup.result_evidence_id,
        manual=manual,
        created_by=lookup.created_by_name,
        created_at=created.isoformat() if created else None,
        completed_at=completed.isoformat() if completed else None,
    ).model_dump(mode="json")


@api_route(
    bp,
    ONE + "/lookups",
    "GET",
    summary="官方查询记录 (official lookups)",
    role=Role.viewer,
    response_model=LookupList,
    errors=(404,),
    tags=("lookups",),
)
def list_provider_lookups(provider_id: int) -> Response:
    """The provider's official lookups (automatic and recorded by hand), newest first (at most 50)."""
    session = get_session()
    get_provider(session, provider_id=provider_id)
    lookups = service.list_lookups(session, provider_id=provider_id, limit=50)
    return jsonify({"items": [lookup_json(lookup) for lookup in lookups]})


@api_route(
    bp,
    f"/lookups/<int(max={MAX_ID}):lookup_id>",
    "GET",
    summary="一次官方查询 (one official lookup)",
    role=Role.viewer,
    response_model=LookupPublic,
    errors=(404,),
    tags=("lookups",),
)
def get_lookup(lookup_id: int) -> Response:
    """One lookup with its records; a manual one names who recorded it and when they looked."""
    return jsonify(lookup_json(service.get_lookup(get_session(), lookup_id=lookup_id)))


@api_route(
    bp,
    ONE + "/lookups/manual",
    "POST",
    summary="人工记录官方查询结果 (record a lookup by hand, with a screenshot)",
    role=Role.analyst,
    form_model=ManualLookupRequest,
    response_model=LookupPublic,
    status=201,
    errors=(404, 415),
    tags=("lookups",),
)
def record_manual_lookup(provider_id: int) -> Response:
    """multipart/form-data only; the screenshot is kept as evidence and the result is marked manual."""
    data, filename = screenshot_upload()
    session = get_session()
    lookup = manual_lookups.record_manual(
        session,
        provider_id=provider_id,
        kind=request.form.get("kind", ""),
        values=request.form,
        screenshot=data,
        filename=filename,
        user=g.api_user,
    )
    return created(lookup_json(lookup), url_for("api.get_lookup", lookup_id=lookup.id))
