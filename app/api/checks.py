"""/api/v1/providers/<id>/checks: a provider's check runs and the findings of the latest one."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from flask import Response, jsonify
from flask_babel import gettext as _
from pydantic import BaseModel

from app.api import bp
from app.api.routing import MAX_ID, api_route
from app.core.clock import aware
from app.core.db import get_session
from app.core.errors import NotFound
from app.credentials import checks
from app.models.checks import CheckRun
from app.models.enums import Role
from app.registry.providers import get_provider

ONE = f"/providers/<int(max={MAX_ID}):provider_id>"


class FindingPublic(BaseModel):
    """One stored finding: rule, severity, message in both languages, evidence, how to verify."""

    rule_id: str
    red_flag: int | None
    severity: str
    subject: str
    message_zh: str
    message_en: str
    how_to_verify_zh: str
    how_to_verify_en: str
    evidence: list[dict[str, Any]]


class CheckRunSummary(BaseModel):
    """A stored check run without its findings."""

    id: int
    provider_id: int
    verdict: str
    blockers: int
    warnings: int
    infos: int
    checked_on: date
    provider_version: int
    rules_version: str
    created_by: str
    created_at: datetime


class CheckRunPublic(CheckRunSummary):
    """A stored check run with its findings, most severe first."""

    findings: list[FindingPublic]


class CheckRunList(BaseModel):
    """A provider's check runs, newest first."""

    items: list[CheckRunSummary]


def _summary(run: CheckRun) -> dict[str, Any]:
    created = aware(run.created_at)
    return CheckRunSummary(
        id=run.id,
        provider_id=run.provider_id,
        verdict=run.verdict,
        blockers=run.blockers,
        warnings=run.warnings,
        infos=run.infos,
        checked_on=run.checked_on,
        provider_version=run.provider_version,
        rules_version=run.rules_version,
        created_by=run.created_by_name,
        created_at=created,
    ).model_dump(mode="json")


@api_route(
    bp,
    ONE + "/checks/latest",
    "GET",
    summary="最新核查结论及全部发现 (latest verdict and findings)",
    role=Role.viewer,
    response_model=CheckRunPublic,
    errors=(404,),
    tags=("checks",),
)
def latest_check_run(provider_id: int) -> Response:
    """The provider's most recent stored check run with its findings; 404 when never checked."""
    session = get_session()
    get_provider(session, provider_id=provider_id)
    run = checks.latest_check(session, provider_id=provider_id)
    if run is None:
        raise NotFound(_("该供应商尚未核查"), field="provider_id")
    stored = checks.run_findings(session, check_run_id=run.id)
    return jsonify({**_summary(run), "findings": [checks.finding_dict(finding) for finding in stored]})


@api_route(
    bp,
    ONE + "/checks",
    "GET",
    summary="核查历史 (check history)",
    role=Role.viewer,
    response_model=CheckRunList,
    errors=(404,),
    tags=("checks",),
)
def list_check_runs(provider_id: int) -> Response:
    """The provider's stored check runs, newest first (at most 50)."""
    session = get_session()
    get_provider(session, provider_id=provider_id)
    runs = checks.check_history(session, provider_id=provider_id)
    return jsonify({"items": [_summary(run) for run in runs]})
