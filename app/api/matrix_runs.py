"""/api/v1 multi-node runs: start one over N trial servers of one offer; read it as any benchmark run."""

from __future__ import annotations

from flask import Response, g, url_for

from app.api import bp
from app.api.body import json_object
from app.api.routing import api_route, created
from app.api.trials import TAGS, RunPublic, _run_body
from app.core.db import get_session
from app.models.enums import Role
from app.trials import matrix_runs


@api_route(
    bp,
    "/bench-matrix",
    "POST",
    summary="开始多节点测试 (start a multi-node run)",
    role=Role.analyst,
    request_model=matrix_runs.MatrixRequest,
    response_model=RunPublic,
    status=202,
    errors=(404, 409),
    tags=TAGS,
)
def start_matrix_run() -> Response:
    """Queue iperf3 between every pair of the nodes, then all-reduce across them and RDMA first -> second.

    The run is stored with suite "matrix"; poll GET /bench-runs/{id} until its state is final.
    """
    run = matrix_runs.start_matrix_run(get_session(), data=json_object(), user=g.api_user)
    return created(_run_body(run), url_for("api.get_bench_run", run_id=run.id), status=202)
