"""/api/v1/cases: create a procurement case from questionnaire answers and read it back with its advice."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from flask import Response, g, jsonify, request, url_for
from pydantic import BaseModel, Field, ValidationError

from app.advice.answers import Answers
from app.advice.questionnaire import STEP_KEYS
from app.api import bp
from app.api.body import json_object
from app.api.routing import MAX_ID, api_route, reply
from app.cases import cases as service
from app.core.clock import aware
from app.core.db import get_session
from app.core.errors import from_validation_error
from app.models.cases import ProcurementCase
from app.models.enums import Role

ONE = f"/cases/<int(max={MAX_ID}):case_id>"


class AdvicePublic(BaseModel):
    """What the advice engine says about a case (the same shape `flask advise` prints)."""

    workload: dict[str, Any]
    requirements: list[dict[str, Any]] = Field(
        description="每项含 value、unit 与算式 (value, unit and arithmetic)"
    )
    rtt_table: list[dict[str, Any]]
    summary: dict[str, Any]
    offers: list[dict[str, Any]] = Field(
        description="排序后的套餐：score、reasons、verdict（供应商核查结论与未核实项）；"
        "被排除的带 excluded_because (ranked offers, each with its provider's verdict)"
    )
    checklist: list[dict[str, Any]]
    faq: list[dict[str, Any]]
    assumptions: list[dict[str, Any]]
    evidence: dict[str, Any] = Field(
        description="所列套餐依据的基准测试与资质核查记录 (the runs and check runs the listed offers rest on)"
    )
    nearest_misses: Optional[dict[str, Any]] = Field(
        default=None,
        description="没有套餐入选时：差得最少的套餐、差在哪一项、差多少、放宽哪一步答案能让几个套餐入选 "
        "(when nothing fits: the nearest misses, their gaps and the relaxations that would help)",
    )


class CasePublic(BaseModel):
    """A stored procurement case; `advice` is present once the questionnaire is complete."""

    id: int
    title: str
    workload_kind: str
    complete: bool
    version: int
    owner_name: str
    created_at: datetime
    updated_at: datetime
    answers: dict[str, Any]
    evidence_since_saved: dict[str, int] = Field(
        description="保存后新增的基准测试次数，以及得出新结果的资质核查次数 "
        "(benchmark runs that landed after the case was saved, and credential checks that came to a new "
        "result: a first check, or findings or the verdict changed)"
    )
    advice: Optional[AdvicePublic] = None


class CaseSummary(BaseModel):
    """A case in the list."""

    id: int
    title: str
    workload_kind: str
    complete: bool
    version: int
    owner_name: str
    updated_at: datetime


class CaseList(BaseModel):
    """Cases, most recently changed first."""

    items: list[CaseSummary]


def _summary(case: ProcurementCase) -> dict[str, Any]:
    return {
        "id": case.id,
        "title": case.title,
        "workload_kind": case.workload_kind,
        "complete": case.complete,
        "version": case.version,
        "owner_name": case.owner_name,
        "updated_at": aware(case.updated_at).isoformat(),
    }


class CaseParams(BaseModel):
    """How many offers to list."""

    limit: Optional[int] = Field(
        default=None,
        ge=1,
        le=100_000,
        description="每组（入选 / 排除）最多列出的套餐数，默认全部 (offers per group)",
    )


def _limit() -> int | None:
    raw = request.args.get("limit")
    if raw is None:
        return None
    try:
        return CaseParams.model_validate({"limit": raw}).limit
    except ValidationError as exc:
        raise from_validation_error(exc) from None


def _step_link(case_id: int) -> Any:
    """The address of a questionnaire step of the case (pages), for the nearest misses."""
    return lambda step: url_for("web.case_step", case_id=case_id, step=step) if step in STEP_KEYS else None


def _case_response(case: ProcurementCase, status: int = 200, location: str | None = None) -> Response:
    session = get_session()
    advice = None
    if case.complete:
        advice = service.advise_case(session, case_id=case.id).to_dict(  # type: ignore[arg-type]
            limit=_limit(),
            step_url=_step_link(case.id),  # type: ignore[arg-type]
        )
    body = {
        **_summary(case),
        "evidence_since_saved": service.evidence_since(session, case=case),
        "created_at": aware(case.created_at).isoformat(),
        "answers": case.answers,
        "advice": advice,
    }
    return reply(body, status, version=case.version, location=location)


@api_route(
    bp,
    "/cases",
    "POST",
    summary="按问卷答卷建立选型案例并返回建议 (create a procurement case from answers)",
    role=Role.analyst,
    request_model=Answers,
    response_model=CasePublic,
    query_model=CaseParams,
    status=201,
    response_headers=("Location", "ETag"),
    tags=("cases",),
)
def create_case() -> Response:
    """The body is the answers document described in docs/answers.md; every problem is named by field."""
    user = g.api_user
    case = service.create_case(
        get_session(), answers=json_object(), owner=service.Actor(user.id, user.username)
    )
    return _case_response(case, 201, url_for("api.get_case", case_id=case.id))


@api_route(
    bp,
    ONE,
    "GET",
    summary="选型案例及其建议 (read a case with its advice)",
    role=Role.viewer,
    response_model=CasePublic,
    query_model=CaseParams,
    response_headers=("ETag",),
    errors=(404,),
    tags=("cases",),
)
def get_case(case_id: int) -> Response:
    """Requirements with their arithmetic, ranked offers (excluded ones with why), checklist and FAQ."""
    return _case_response(service.get_case(get_session(), case_id=case_id))


@api_route(
    bp,
    "/cases",
    "GET",
    summary="选型案例列表 (list cases)",
    role=Role.viewer,
    response_model=CaseList,
    tags=("cases",),
)
def list_cases() -> Response:
    """At most 200, most recently changed first."""
    return jsonify({"items": [_summary(case) for case in service.list_cases(get_session())]})
