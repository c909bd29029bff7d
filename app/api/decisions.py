"""/api/v1/cases/<id>/decisions and /api/v1/decisions/<id>: propose a procurement decision, read and list
decisions, approve, return or reject one (four eyes: never the proposer)."""

from __future__ import annotations

from typing import Any, Literal

from flask import Response, current_app, g, jsonify, request, url_for
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.api import bp
from app.api.body import json_object
from app.api.routing import MAX_ID, api_route, created
from app.cases import decision_document
from app.cases import decisions as service
from app.cases.cases import Actor
from app.core.db import get_session
from app.core.errors import from_validation_error
from app.core.i18n import current_language
from app.credentials.report_exports import Author
from app.models.decisions import Decision
from app.models.enums import Role
from app.reports.pdf import renderer_for_settings

CASE_DECISIONS = f"/cases/<int(max={MAX_ID}):case_id>/decisions"
ONE = f"/decisions/<int(max={MAX_ID}):decision_id>"


class ConditionPublic(BaseModel):
    """A condition the decision carries."""

    id: int
    text: str
    due_on: str | None
    met_at: str | None
    met_by: str | None


class AcceptancePublic(BaseModel):
    """An open finding knowingly accepted: by whom, why, until when; `lapsed` once that day has passed."""

    id: int
    provider_id: int
    finding_id: int | None
    rule_id: str
    subject: str
    severity: str
    message: str
    reason: str
    accepted_by: str
    until: str
    lapsed: bool


class DecisionPublic(BaseModel):
    """A procurement decision: its fields, state, proposer, approver, evidence and snapshot hashes."""

    id: int
    case_id: int
    offer_ids: list[int]
    provider_ids: list[int]
    quote_ids: list[int] = Field(description="the valid quotes of the chosen providers when proposed")
    scope: str
    term_months: int
    justification: str
    single_source_reason: str
    state: str = Field(description="proposed, returned, approved or rejected")
    effective_state: str = Field(
        description="the state, or needs_reapproval for an approved decision past its term or with a lapsed"
        " risk acceptance"
    )
    state_label: str
    proposed_by: str
    proposed_by_id: int | None
    proposed_at: str
    decided_by: str | None
    decided_by_id: int | None
    decided_at: str | None
    decision_comment: str
    approved_by: str | None
    valid_from: str | None
    valid_until: str | None
    evidence_sha256: str = Field(description="SHA-256 of the evidence when proposed")
    snapshot_sha256: str | None = Field(description="SHA-256 of the snapshot frozen on approval")
    conditions: list[ConditionPublic]
    risk_acceptances: list[AcceptancePublic]


class DecisionList(BaseModel):
    """A case's decisions, the latest proposed first."""

    items: list[DecisionPublic]


class CommentIn(BaseModel):
    """The approver's comment: optional to approve, required to return or reject."""

    model_config = ConfigDict(extra="forbid")

    comment: str = Field(default="", max_length=service.MAX_TEXT)


def _actor() -> Actor:
    user = g.api_user
    return Actor(user.id, user.username)


def _public(session: Any, decision: Decision) -> dict[str, Any]:
    return service.decision_dict(session, decision, current_language())


def _comment(optional: bool) -> str:
    """The body's comment (an approval may come without a body)."""
    if optional and not request.get_data(cache=True).strip():
        return ""
    try:
        return CommentIn.model_validate(json_object()).comment
    except ValidationError as exc:
        raise from_validation_error(exc) from None


@api_route(
    bp,
    CASE_DECISIONS,
    "POST",
    summary="提议采购决定 (propose a procurement decision)",
    role=Role.analyst,
    request_model=service.DecisionIn,
    response_model=DecisionPublic,
    status=201,
    response_headers=("Location",),
    errors=(404,),
    tags=("cases",),
)
def propose_decision(case_id: int) -> Response:
    """Every rule refused with 422 naming the field: offers of quoting providers or eligible candidates; no
    expired quote behind it; fewer than 3 providers with a valid quote need `single_source_reason`; a
    provider with a blocker on licence red flag 1-4, 10 or 11 cannot be chosen; every open finding (blocker
    or warning) of a chosen provider needs a risk acceptance until a day after today."""
    session = get_session()
    decision = service.propose(session, case_id=case_id, data=json_object(), actor=_actor())
    return created(_public(session, decision), url_for("api.get_decision", decision_id=decision.id))


@api_route(
    bp,
    CASE_DECISIONS,
    "GET",
    summary="选型案例的采购决定 (a case's decisions)",
    role=Role.viewer,
    response_model=DecisionList,
    errors=(404,),
    tags=("cases",),
)
def list_case_decisions(case_id: int) -> Response:
    """At most 200, the latest proposed first."""
    session = get_session()
    decisions = service.list_decisions(session, case_id=case_id)
    return jsonify({"items": [_public(session, decision) for decision in decisions]})


@api_route(
    bp,
    ONE,
    "GET",
    summary="一项采购决定 (one decision)",
    role=Role.viewer,
    response_model=DecisionPublic,
    errors=(404,),
    tags=("cases",),
)
def get_decision(decision_id: int) -> Response:
    """The decision with its conditions, risk acceptances, proposer, approver and snapshot hash."""
    session = get_session()
    return jsonify(_public(session, service.get_decision(session, decision_id=decision_id)))


def _decide(decision_id: int, decide: Any, *, optional: bool) -> Response:
    session = get_session()
    comment = _comment(optional)
    decision = decide(session, decision_id=decision_id, actor=_actor(), comment=comment)
    return jsonify(_public(session, decision))


@api_route(
    bp,
    ONE + "/approve",
    "POST",
    summary="批准采购决定 (approve a decision)",
    role=Role.approver,
    request_model=CommentIn,
    response_model=DecisionPublic,
    errors=(404, 409),
    tags=("cases",),
)
def approve_decision(decision_id: int) -> Response:
    """Body `{comment}` (optional, or no body). Four eyes: the approver role or an admin only, and never
    whoever proposed the decision (403 with a message saying so, admins too). Refused with 409 when the
    decision is not awaiting approval, when the evidence changed since the proposal (the message names each
    change: make a fresh proposal) or when a risk acceptance has lapsed. On approval the evidence snapshot is
    frozen with its SHA-256 and the chosen providers' status becomes approved."""
    return _decide(decision_id, service.approve, optional=True)


def _closing(action: str, decide: Any, summary: str, description: str) -> Any:
    """Register POST /decisions/<id>/<action> for an approver's closing decision (return or reject)."""

    def view(decision_id: int) -> Response:
        return _decide(decision_id, decide, optional=False)

    view.__name__ = f"{action}_decision"
    view.__doc__ = description
    route = api_route(
        bp,
        f"{ONE}/{action}",
        "POST",
        summary=summary,
        role=Role.approver,
        request_model=CommentIn,
        response_model=DecisionPublic,
        errors=(404, 409),
        tags=("cases",),
    )
    return route(view)


return_decision = _closing(
    "return",
    service.return_decision,
    "退回采购决定 (return a decision with comments)",
    """Body `{comment}`, required (422 without). Four eyes as for approval: never the proposer (403). A
    returned decision is replaced by a fresh proposal.""",
)
reject_decision = _closing(
    "reject",
    service.reject,
    "否决采购决定 (reject a decision)",
    """Body `{comment}`, required (422 without). Four eyes as for approval: never the proposer (403). A
    rejected decision stays rejected.""",
)


class DecisionPdfParams(BaseModel):
    """The language of the decision document."""

    model_config = ConfigDict(extra="forbid")

    lang: Literal["zh", "en"] | None = Field(default=None, description="zh or en (default: the reader's)")


@api_route(
    bp,
    ONE + "/pdf",
    "GET",
    summary="下载签名的采购决定书 (the signed decision document, PDF)",
    role=Role.viewer,
    query_model=DecisionPdfParams,
    media_type="application/pdf",
    errors=(404, 422),
    tags=("cases",),
)
def decision_pdf(decision_id: int) -> Response:
    """The decision document (comparison, chosen offers, conditions, risk acceptances, proposer and approver,
    evidence snapshot hash) as a PDF with a PAdES signature, numbered and recorded as a report export. While
    the decision is unchanged the same file comes back; the X-Report-SHA256 header carries its SHA-256."""
    user = g.api_user
    record = decision_document.decision_pdf(
        get_session(),
        decision_id=decision_id,
        language=request.args.get("lang") or current_language(),
        author=Author(id=user.id, name=user.username),
        renderer=renderer_for_settings(current_app.config["GPUVET_SETTINGS"]),
    )
    headers = {"X-Report-SHA256": record.sha256, "Cache-Control": "private, no-store"}
    headers["Content-Disposition"] = f'attachment; filename="{record.number}.pdf"'
    return Response(record.pdf_bytes, mimetype="application/pdf", headers=headers)
