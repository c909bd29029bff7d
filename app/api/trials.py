"""/api/v1 trial servers and benchmark runs: register a server, start a run on the queue, read results."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import Response, current_app, g, jsonify, url_for
from flask_babel import gettext as _
from pydantic import BaseModel, Field

from app.api import bp
from app.api.body import json_object
from app.api.routing import MAX_ID, api_route, created
from app.core.clock import aware
from app.core.db import get_session
from app.core.errors import FieldError, InvalidInput
from app.models.enums import Role
from app.models.trials import BenchRun
from app.registry.providers import get_provider
from app.trials import bench_runs, server_addresses
from app.trials import servers as trials
from app.trials.servers import TrialServerIn

PROVIDER = f"/providers/<int(max={MAX_ID}):provider_id>/trial-servers"
SERVER = f"/trial-servers/<int(max={MAX_ID}):server_id>"
RUN = f"/bench-runs/<int(max={MAX_ID}):run_id>"
TAGS = ("benchmarks",)


class TrialServerPublic(BaseModel):
    """A trial server without its secrets."""

    id: int
    provider_id: int
    name: str
    host: str
    port: int
    username: str
    auth_method: str
    host_key_fingerprint: str | None
    host_key_type: str | None
    offer_id: int | None
    peer_id: int | None
    peer_address: str | None
    notes: str | None


class TrialServerList(BaseModel):
    """A provider's trial servers."""

    items: list[TrialServerPublic]


class RunRequest(BaseModel):
    """Which suite to run, and parameters (see benchmarks.params.SuiteParams; defaults otherwise)."""

    suite: str = "quick"
    params: dict[str, Any] = Field(default_factory=dict)


class StepPublic(BaseModel):
    """One step of a run (raw outputs and samples with ?detail=full on the run)."""

    step: str
    probe: str
    status: str
    error: str | None
    duration: float
    parse_errors: list[str]


class RunPublic(BaseModel):
    """A benchmark run: origin, state, claims snapshot, comparisons, steps."""

    id: int
    trial_server_id: int | None  # None for an uploaded output
    provider_id: int
    offer_id: int | None
    origin: str  # executed (gpuvet ran it) or uploaded (an analyst's output, trusted less)
    uploaded_by: str | None
    raw_sha256: str | None
    job_id: int | None
    suite: str
    params: dict[str, Any]
    state: str
    error: str | None
    error_kind: str | None
    claims: dict[str, Any]
    comparisons: list[dict[str, Any]]
    created_by: str
    created_at: datetime
    finished_at: datetime | None
    steps: list[StepPublic]


def _run_body(run: BenchRun) -> dict[str, Any]:
    steps = bench_runs.run_steps(get_session(), run_id=run.id)
    return {
        "id": run.id,
        "trial_server_id": run.trial_server_id,
        "provider_id": run.provider_id,
        "offer_id": run.offer_id,
        "origin": run.origin,
        "uploaded_by": run.uploaded_by_name,
        "raw_sha256": run.raw_sha256,
        "job_id": run.job_id,
        "suite": run.suite,
        "params": run.params,
        "state": run.state,
        "error": run.error,
        "error_kind": run.error_kind,
        "claims": run.claims,
        "comparisons": run.comparisons,
        "created_by": run.created_by_name,
        "created_at": aware(run.created_at).isoformat(),
        "finished_at": aware(run.finished_at).isoformat() if run.finished_at else None,
        "steps": [
            {
                "step": step.step,
                "probe": step.probe,
                "status": step.status,
                "error": step.error,
                "duration": step.duration,
                "parse_errors": step.parse_errors,
                "samples": step.samples,
            }
            for step in steps
        ],
    }


def _cipher() -> Any:
    return trials.cipher_from_settings(current_app.config["GPUVET_SETTINGS"])


@api_route(
    bp,
    PROVIDER,
    "GET",
    summary="试用服务器列表 (trial servers)",
    role=Role.viewer,
    response_model=TrialServerList,
    errors=(404,),
    tags=TAGS,
)
def list_trial_servers(provider_id: int) -> Response:
    """The provider's trial servers, newest first; secrets are never returned."""
    session = get_session()
    get_provider(session, provider_id=provider_id)
    servers = trials.list_servers(session, provider_id=provider_id)
    return jsonify({"items": [trials.server_public(server) for server in servers]})


@api_route(
    bp,
    PROVIDER,
    "POST",
    summary="登记试用服务器 (register a trial server)",
    role=Role.analyst,
    request_model=TrialServerIn,
    response_model=TrialServerPublic,
    status=201,
    errors=(404,),
    tags=TAGS,
)
def create_trial_server(provider_id: int) -> Response:
    """Key or password is encrypted at rest; give host_key_fingerprint (SHA256:...) to pin it at once."""
    session = get_session()
    policy = server_addresses.address_policy(current_app.config["GPUVET_SETTINGS"])
    server = trials.create_server(
        session, provider_id=provider_id, data=json_object(), cipher=_cipher(), policy=policy
    )
    return created(trials.server_public(server), url_for("api.get_trial_server", server_id=server.id))


@api_route(
    bp,
    SERVER,
    "GET",
    summary="试用服务器详情 (read a trial server)",
    role=Role.viewer,
    response_model=TrialServerPublic,
    errors=(404,),
    tags=TAGS,
)
def get_trial_server(server_id: int) -> Response:
    """One trial server without its secrets."""
    return jsonify(trials.server_public(trials.get_server(get_session(), server_id=server_id)))


@api_route(
    bp,
    SERVER + "/runs",
    "POST",
    summary="开始测试 (start a benchmark run)",
    role=Role.analyst,
    request_model=RunRequest,
    response_model=RunPublic,
    status=202,
    errors=(404, 409),
    tags=TAGS,
)
def start_bench_run(server_id: int) -> Response:
    """Queue a suite (quick, standard, stability) on the server; poll the run until its state is final."""
    body = json_object()
    unknown = sorted(set(body) - {"suite", "params"})
    if unknown:
        raise InvalidInput([FieldError(name, _("不认识的字段")) for name in unknown])
    params = body.get("params") or {}
    if not isinstance(params, dict):
        raise InvalidInput(_("须为对象"), field="params")
    run = bench_runs.start_run(
        get_session(),
        server_id=server_id,
        suite=str(body.get("suite", "quick")),
        params=params,
        user=g.api_user,
    )
    return created(_run_body(run), url_for("api.get_bench_run", run_id=run.id), status=202)


@api_route(
    bp,
    RUN,
    "GET",
    summary="测试结果 (read a benchmark run)",
    role=Role.viewer,
    response_model=RunPublic,
    errors=(404,),
    tags=TAGS,
)
def get_bench_run(run_id: int) -> Response:
    """State (interrupted when its worker died), claims versus measurements, steps with their samples."""
    return jsonify(_run_body(bench_runs.get_run(get_session(), run_id=run_id)))


@api_route(
    bp,
    RUN + "/cancel",
    "POST",
    summary="取消测试 (cancel a run)",
    role=Role.analyst,
    response_model=RunPublic,
    errors=(404, 409),
    tags=TAGS,
)
def cancel_bench_run(run_id: int) -> Response:
    """Cancel a queued run at once, or ask a running one to stop."""
    return jsonify(_run_body(bench_runs.cancel_run(get_session(), run_id=run_id)))
