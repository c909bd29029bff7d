"""Multi-node runs on pages: pick N trial servers of one offer (with their intranet addresses), start the run,
and the pair table (Gbit/s, flagged pairs highlighted) that the run page shows for such a run."""

from __future__ import annotations

from typing import Any

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import role_required
from app.core.db import get_session
from app.core.errors import Conflict, InvalidInput
from app.core.i18n import current_language
from app.core.limits import parse_id
from app.models.enums import Role
from app.models.jobs import Job
from app.models.trials import BenchRun, BenchStep
from app.registry import providers as provider_service
from app.trials import matrix_runs
from app.web import bp
from app.web.bench_run_view import number_text
from app.web.jobs import job_link
from benchmarks.matrix import CLUSTER_STEPS, MAX_NODES
from benchmarks.params import SuiteParams

CLUSTER_LABELS = {
    "collective_cluster": _l("跨节点 all-reduce（需目标服务器上有 mpirun 与 nccl-tests）"),
    "rdma": _l("RDMA 带宽与延迟（perftest：对端为服务端，目标为客户端）"),
}
VERDICT_RANK = {"fail": 2, "warn": 1}
VERDICT_CLASS = {"fail": "table-danger", "warn": "table-warning"}


def _run_link(job: Job) -> str | None:
    run_id = (job.result or {}).get("run_id") or job.params.get("run_id")
    return url_for("web.bench_run", run_id=run_id) if run_id else None


job_link(matrix_runs.MATRIX_KIND, _run_link)


# ---------------------------------------------------------------- the pair table of a run
def _throughput(step: BenchStep) -> float | None:
    values = [float(s["value"]) for s in step.samples if s.get("metric") == "throughput"]
    return values[0] if values else None


def _flags(run: BenchRun) -> dict[str, tuple[str, list[str]]]:
    """Per pair ('a->b'): the worst matrix verdict below pass and the reasons, in the reader's language."""
    english = current_language() == "en"
    flags: dict[str, tuple[str, list[str]]] = {}
    for comparison in run.comparisons or []:
        verdict = str(comparison.get("verdict"))
        if comparison.get("check") != "matrix" or verdict not in VERDICT_RANK:
            continue
        subject = str(comparison.get("subject") or "")
        worst, reasons = flags.get(subject, ("warn", []))
        reason = comparison.get("reason_en" if english else "reason_zh") or ""
        worst = verdict if VERDICT_RANK[verdict] >= VERDICT_RANK[worst] else worst
        flags[subject] = (worst, [*reasons, str(reason)])
    return flags


@bp.app_template_global()
def matrix_view(run: BenchRun, steps: list[BenchStep]) -> dict[str, Any] | None:
    """The pair table of a multi-node run: nodes, a symmetric grid of Gbit/s, and the pairs with flags."""
    if not matrix_runs.is_matrix(run):
        return None
    nodes = matrix_runs.run_nodes(run)
    flags = _flags(run)
    pairs: dict[frozenset[str], dict[str, Any]] = {}
    for step in steps:
        source, target = step.options.get("from"), step.options.get("to")
        if not source or not target:
            continue
        mbit_s = _throughput(step)
        verdict, reasons = flags.get(f"{source}->{target}", ("", []))
        pairs[frozenset((source, target))] = {
            "from": source,
            "to": target,
            "status": step.status,
            "gbps": number_text(round(mbit_s / 1000, 2)) if mbit_s is not None else "",
            "verdict": verdict,
            "css": VERDICT_CLASS.get(verdict, ""),
            "reasons": reasons,
        }
    rows = [
        {
            "name": node["name"],
            "address": node["address"],
            "cells": [
                None if node["name"] == other["name"] else pairs.get(frozenset((node["name"], other["name"])))
                for other in nodes
            ],
        }
        for node in nodes
    ]
    return {"nodes": nodes, "rows": rows, "pairs": list(pairs.values())}


# ---------------------------------------------------------------- choosing the servers
def _candidates(provider: Any) -> list[dict[str, Any]]:
    """Each offer with at least two trial servers: the offer and its servers."""
    by_offer = matrix_runs.offer_servers(get_session(), provider_id=provider.id)
    return [
        {"offer": offer, "servers": by_offer[offer.id]}
        for offer in provider.offers
        if len(by_offer.get(offer.id, [])) >= 2
    ]


def _form_request() -> tuple[dict[str, Any], dict[str, Any]]:
    """(the service's request, the values to show again) from the posted form."""
    chosen = [value for value in request.form.getlist("server_id") if value.strip()]
    nodes = []
    for value in chosen:
        server_id = parse_id(value)
        nodes.append(
            {
                "server_id": server_id if server_id is not None else value,
                "address": request.form.get(f"address_{value}", ""),
            }
        )
    params = {"iperf3_seconds": request.form.get("iperf3_seconds", "").strip()}
    data = {
        "nodes": nodes,
        "cluster": request.form.getlist("cluster"),
        "params": {name: value for name, value in params.items() if value},
    }
    values = {
        "chosen": set(chosen),
        "addresses": {
            key.removeprefix("address_"): value
            for key, value in request.form.items()
            if key.startswith("address_")
        },
        "cluster": set(data["cluster"]),
        "iperf3_seconds": params["iperf3_seconds"],
    }
    return data, values


def _errors(exc: InvalidInput | Conflict) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for error in exc.errors:
        key = "params" if error.field.startswith("params") else "nodes"
        found.setdefault(key, []).append(error.message)
    return found


@bp.route("/providers/<int(max=2147483647):provider_id>/trials/matrix", methods=["GET", "POST"])
@role_required(Role.analyst)
def matrix_run_new(provider_id: int) -> Any:
    """Pick 2 to 8 trial servers of one offer and start a multi-node run (pairs, all-reduce, RDMA)."""
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=provider_id)
    values: dict[str, Any] = {
        "chosen": set(),
        "addresses": {},
        "cluster": set(CLUSTER_STEPS),
        "iperf3_seconds": SuiteParams().iperf3_seconds,
    }
    errors: dict[str, list[str]] = {}
    status = 200
    if request.method == "POST":
        data, values = _form_request()
        try:
            run = matrix_runs.start_matrix_run(
                session,
                data=data,
                user=current_user._get_current_object(),  # type: ignore[attr-defined]
            )
        except (InvalidInput, Conflict) as exc:
            errors, status = _errors(exc), exc.status
        else:
            flash(_("已提交多节点测试 #%(id)d", id=run.id), "info")
            return redirect(url_for("web.bench_run", run_id=run.id))
    page = render_template(
        "trials/matrix_form.html",
        provider=provider,
        candidates=_candidates(provider),
        cluster_labels=CLUSTER_LABELS,
        values=values,
        errors=errors,
        max_nodes=MAX_NODES,
    )
    return page, status
