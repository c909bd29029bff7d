"""Trial-server pages: the provider's "试用测试" tab, server forms, host-key confirmation, runs with live
progress, charts and claims versus measurements, and the comparison of two runs."""

from __future__ import annotations

from collections import defaultdict
from functools import partial
from typing import Any

from flask import current_app, flash, jsonify, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import role_required
from app.advice.figure_names import figure_name
from app.core.db import get_session
from app.core.errors import Conflict, InvalidInput, ServiceError
from app.core.i18n import current_language
from app.core.limits import parse_id
from app.core.request_files import uploaded_file
from app.models import Offer
from app.models.enums import Role
from app.models.jobs import Job
from app.models.trials import AuthMethod, BenchRun, RunState, TrialServer
from app.registry import providers as provider_service
from app.trials import bench_runs, bench_uploads, measurements, server_addresses
from app.trials import servers as trials
from app.web import bp, labels
from app.web.actions import act_and_return
from app.web.bench_run_view import comparison_rows, current_text, error_kind_label, run_status
from app.web.jobs import job_link, job_view
from app.web.missing import or_404
from app.web.nav import provider_tab
from app.web.run_charts import run_charts, step_samples
from benchmarks.params import SuiteParams
from benchmarks.suites import SUITES

RUN_STATE_LABELS = labels.JOB_STATE


RUN_STATE_COLOURS = {
    RunState.queued: "secondary",
    RunState.running: "primary",
    RunState.succeeded: "success",
    RunState.failed: "danger",
    RunState.cancelled: "dark",
    RunState.interrupted: "warning",
}


VERDICT_COLOURS = {"pass": "success", "warn": "warning", "fail": "danger", "info": "secondary"}


VERDICT_LABELS = labels.BENCH_VERDICT


SUITE_LABELS = {
    "quick": _l("快速：清单、延迟、单流带宽、4k 随机读、存储类型"),
    "standard": _l("标准：另加多流与反向带宽、检查点写入、GPU 采样"),
    "stability": _l("稳定性：按间隔重复测带宽，识别共享带宽"),
    "gpu": _l("GPU：健康检查、多卡 all-reduce、负载下利用率、数据加载"),
}


# Parameters the start form offers (the rest keep their defaults); name -> label
RUN_FIELDS = {
    "iperf3_seconds": _l("带宽测试时长（秒）"),
    "fio_seconds": _l("随机读测试时长（秒）"),
    "storage_path": _l("数据盘目录"),
    "stability_repeats": _l("稳定性测试次数"),
    "stability_interval_s": _l("稳定性测试间隔（秒）"),
}


UPLOAD_PATHS = {"": _l("按工具默认"), "intranet": _l("内网"), "public": _l("公网"), "storage": _l("存储")}


UPLOAD_FIELDS = ("offer_id", "tool", "path", "note", "output")


SERVER_FIELDS = (
    "name",
    "host",
    "port",
    "username",
    "auth_method",
    "offer_id",
    "peer_id",
    "peer_address",
    "notes",
)


SECRET_FIELDS = ("private_key", "passphrase", "password")


def _cipher() -> Any:
    return trials.cipher_from_settings(current_app.config["GPUVET_SETTINGS"])


def _policy() -> Any:
    return server_addresses.address_policy(current_app.config["GPUVET_SETTINGS"])


def _user() -> Any:
    return current_user._get_current_object()  # type: ignore[attr-defined]


def _run_link(job: Job) -> str | None:
    run_id = (job.result or {}).get("run_id") or job.params.get("run_id")
    return url_for("web.bench_run", run_id=run_id) if run_id else None


def _server_link(job: Job) -> str | None:
    server_id = job.params.get("server_id")
    return url_for("web.trial_server", server_id=server_id) if server_id else None


provider_tab("web.provider_trials", _l("试用测试"), order=40)


job_link(bench_runs.BENCH_KIND, _run_link)


job_link(trials.HOST_KEY_KIND, _server_link)


job_link(trials.CHECK_KIND, _server_link)


def _counts(session: Any, provider_id: int) -> dict[int, str]:
    """Run id -> the figures it is the measurement that counts for (app.trials.measurements), named."""
    name = 1 if current_language() == "en" else 0  # figure_name gives (zh, en)
    separator = ", " if name else "、"
    counting = measurements.counting_runs(session, providers=[provider_id])
    return {
        run_id: separator.join(figure_name(key)[name] for key in keys)
        for run_id, keys in measurements.figures_by_run(counting).items()
    }


def _tab(provider: Any, *, upload_values: dict[str, Any], upload_errors: dict[str, list[str]]) -> Any:
    """The 试用测试 tab, with the upload form's values and errors (422 when there are errors)."""
    session = get_session()
    page = render_template(
        "trials/tab.html",
        provider=provider,
        servers=trials.list_servers(session, provider_id=provider.id),
        runs=bench_runs.list_runs(session, provider_id=provider.id, limit=30),
        counts=_counts(session, provider.id),
        state_labels=RUN_STATE_LABELS,
        state_colours=RUN_STATE_COLOURS,
        upload_tools=bench_uploads.upload_tools(),
        upload_paths=UPLOAD_PATHS,
        upload_values=upload_values,
        upload_errors=upload_errors,
    )
    return page, 422 if upload_errors else 200


@bp.get("/providers/<int(max=2147483647):provider_id>/trials")
@role_required(Role.viewer)
def provider_trials(provider_id: int) -> Any:
    """The provider's trial servers, recent runs and uploads, and the form to upload an output (?offer=ID)."""
    provider = provider_service.get_provider(get_session(), provider_id=provider_id)
    values = {"offer_id": request.args.get("offer", ""), "tool": "iperf3"}
    return _tab(provider, upload_values=values, upload_errors={})


def _uploaded_output() -> tuple[bytes | str, str | None]:
    """The chosen file (bytes and name), else the pasted text."""
    output, filename = uploaded_file("file", bench_uploads.MAX_UPLOAD_BYTES)
    return (output, filename) if output is not None else (request.form.get("output", ""), None)


@bp.post("/providers/<int(max=2147483647):provider_id>/trials/uploads")
@role_required(Role.analyst)
def trial_upload(provider_id: int) -> Any:
    """Store a tool output captured by hand as an uploaded run of one of the provider's offers."""
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=provider_id)
    values = {name: request.form.get(name, "") for name in UPLOAD_FIELDS}
    offer_id = parse_id(values["offer_id"])
    if offer_id is None or all(offer.id != offer_id for offer in provider.offers):
        errors = {"offer_id": [_("请选择该供应商的一个报价")]}
        return _tab(provider, upload_values=values, upload_errors=errors)
    output, filename = _uploaded_output()
    try:
        run = bench_uploads.upload_output(
            session,
            offer_id=offer_id,
            tool=values["tool"],
            output=output,
            path=values["path"],
            note=values["note"],
            filename=filename,
            user=_user(),
        )
    except InvalidInput as exc:
        return _tab(provider, upload_values=values, upload_errors=_errors(exc))
    flash(_("已上传，生成测试 #%(id)d", id=run.id), "success")
    return redirect(url_for("web.bench_run", run_id=run.id))


def _form_data() -> dict[str, Any]:
    data: dict[str, Any] = {name: request.form.get(name, "") for name in SERVER_FIELDS}
    data.update({name: request.form.get(name, "") for name in SECRET_FIELDS})
    fingerprint = request.form.get("host_key_fingerprint", "")
    if fingerprint.strip():
        data["host_key_fingerprint"] = fingerprint
    return data


def _render_form(
    provider: Any, server: TrialServer | None, values: dict[str, Any], errors: dict[str, list[str]]
):
    session = get_session()
    peers = [
        s
        for s in trials.list_servers(session, provider_id=provider.id)
        if server is None or s.id != server.id
    ]
    status = (409 if "version" in errors else 422) if errors else 200
    return (
        render_template(
            "trials/form.html",
            provider=provider,
            server=server,
            values=values,
            errors=errors,
            peers=peers,
            auth_methods=[(AuthMethod.key.value, _("私钥")), (AuthMethod.password.value, _("密码"))],
        ),
        status,
    )


def _errors(exc: ServiceError) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for error in exc.errors:
        found[error.field or "_"].append(error.message)
    return dict(found)


@bp.route("/providers/<int(max=2147483647):provider_id>/trials/new", methods=["GET", "POST"])
@role_required(Role.analyst)
def trial_server_new(provider_id: int) -> Any:
    """Register a trial server the provider lent."""
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=provider_id)
    if request.method == "GET":
        return _render_form(provider, None, {"port": 22, "username": "root", "auth_method": "key"}, {})
    data = _form_data()
    try:
        server = trials.create_server(
            session,
            provider_id=provider_id,
            data=data,
            cipher=_cipher(),
            user=_user(),
            policy=_policy(),
            require_offer=True,
        )
    except InvalidInput as exc:
        return _render_form(
            provider, None, {k: v for k, v in data.items() if k not in SECRET_FIELDS}, _errors(exc)
        )
    flash(_("已添加试用服务器。请获取并确认主机密钥指纹后再开始测试。"), "success")
    return redirect(url_for("web.trial_server", server_id=server.id))


@bp.route("/trial-servers/<int(max=2147483647):server_id>/edit", methods=["GET", "POST"])
@role_required(Role.analyst)
def trial_server_edit(server_id: int) -> Any:
    """Change a trial server (blank secrets keep the stored ones)."""
    server = or_404(trials.get_server, server_id=server_id)
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=server.provider_id)
    if request.method == "GET":
        return _render_form(provider, server, trials.server_values(server), {})
    data = {**_form_data(), "version": request.form.get("version", "")}
    try:
        trials.update_server(
            session, server_id=server_id, data=data, cipher=_cipher(), policy=_policy(), require_offer=True
        )
    except (InvalidInput, Conflict) as exc:
        return _render_form(
            provider, server, {k: v for k, v in data.items() if k not in SECRET_FIELDS}, _errors(exc)
        )
    flash(_("已保存"), "success")
    return redirect(url_for("web.trial_server", server_id=server_id))


@bp.post("/trial-servers/<int(max=2147483647):server_id>/delete")
@role_required(Role.admin)
def trial_server_delete(server_id: int) -> Any:
    """Delete a trial server and its runs."""
    server = or_404(trials.get_server, server_id=server_id)
    provider_id = server.provider_id
    trials.delete_server(get_session(), server_id=server_id)
    flash(_("已删除试用服务器"), "info")
    return redirect(url_for("web.provider_trials", provider_id=provider_id))


def _latest_job(server: TrialServer, kind: str) -> Job | None:
    found = trials.server_jobs(get_session(), server=server, kind=kind, limit=1)
    return found[0] if found else None


def _fetched(job: Job | None, server: TrialServer) -> tuple[str, str] | None:
    """The key a finished host-key job saw at the server's current address, while it is not the pinned one."""
    result = (job.result or {}) if job is not None and job.state == "succeeded" else {}
    fingerprint = result.get("fingerprint")
    if not fingerprint or fingerprint == server.host_key_fingerprint:
        return None
    if (result.get("host"), result.get("port")) != (server.host, server.port):
        return None  # fetched before the server moved: fetch again
    return str(result.get("key_type") or ""), str(fingerprint)


def _server_page(server: TrialServer, *, run_errors=None, run_values=None):
    session = get_session()
    key_job = _latest_job(server, trials.HOST_KEY_KIND)
    check_job = _latest_job(server, trials.CHECK_KIND)
    provider = provider_service.get_provider(session, provider_id=server.provider_id)
    offer = next((offer for offer in provider.offers if offer.id == server.offer_id), None)
    peer = session.get(TrialServer, server.peer_id) if server.peer_id else None
    defaults = SuiteParams()
    values = run_values or {name: getattr(defaults, name) for name in RUN_FIELDS}
    return (
        render_template(
            "trials/server.html",
            provider=provider,
            server=server,
            offer=offer,
            peer=peer,
            fetched=_fetched(key_job, server),
            key_job=job_view(key_job) if key_job else None,
            check_job=job_view(check_job) if check_job else None,
            runs=bench_runs.list_runs(session, server_id=server.id),
            counts=_counts(session, server.provider_id),
            suites=[(name, SUITE_LABELS.get(name, name)) for name in SUITES],
            run_fields=RUN_FIELDS,
            run_values=values,
            run_errors=run_errors or {},
            state_labels=RUN_STATE_LABELS,
            state_colours=RUN_STATE_COLOURS,
        ),
        422 if run_errors else 200,
    )


@bp.get("/trial-servers/<int(max=2147483647):server_id>")
@role_required(Role.viewer)
def trial_server(server_id: int) -> Any:
    """A trial server: connection, host key, start a run, its runs."""
    return _server_page(or_404(trials.get_server, server_id=server_id))


def _start_server_job(server_id: int, kind: str, started: str) -> Any:
    or_404(trials.get_server, server_id=server_id)
    try:
        trials.start_server_job(get_session(), server_id=server_id, kind=kind, user=_user(), policy=_policy())
    except InvalidInput as exc:
        flash(exc.errors[0].message, "danger")
    else:
        flash(started, "info")
    return redirect(url_for("web.trial_server", server_id=server_id))


@bp.post("/trial-servers/<int(max=2147483647):server_id>/host-key")
@role_required(Role.analyst)
def trial_server_fetch_key(server_id: int) -> Any:
    """Queue a job that connects once and records the host key's fingerprint for the analyst to confirm."""
    return _start_server_job(server_id, trials.HOST_KEY_KIND, _("已提交：获取主机密钥指纹"))


@bp.post("/trial-servers/<int(max=2147483647):server_id>/check")
@role_required(Role.analyst)
def trial_server_check(server_id: int) -> Any:
    """Queue a connection test: log in with the pinned key and run one harmless command."""
    return _start_server_job(server_id, trials.CHECK_KIND, _("已提交：连接测试"))


@bp.post("/trial-servers/<int(max=2147483647):server_id>/host-key/pin")
@role_required(Role.analyst)
def trial_server_pin_key(server_id: int) -> Any:
    """Pin the fingerprint the analyst confirmed."""
    or_404(trials.get_server, server_id=server_id)
    try:
        trials.pin_host_key(
            get_session(),
            server_id=server_id,
            fingerprint=request.form.get("fingerprint", ""),
            key_type=request.form.get("key_type", ""),
        )
    except InvalidInput as exc:
        flash(exc.errors[0].message, "danger")
    else:
        flash(_("已固定主机密钥指纹"), "success")
    return redirect(url_for("web.trial_server", server_id=server_id))


@bp.post("/trial-servers/<int(max=2147483647):server_id>/runs")
@role_required(Role.analyst)
def trial_server_start(server_id: int) -> Any:
    """Start a suite on the job queue and go to the run's page, which follows it live."""
    server = or_404(trials.get_server, server_id=server_id)
    values = {name: request.form.get(name, "") for name in RUN_FIELDS}
    params = {name: value for name, value in values.items() if value.strip()}
    try:
        run = bench_runs.start_run(
            get_session(),
            server_id=server_id,
            suite=request.form.get("suite", ""),
            params=params,
            user=_user(),
        )
    except InvalidInput as exc:
        errors = {error.field.removeprefix("params."): error.message for error in exc.errors}
        return _server_page(server, run_errors=errors, run_values=values)
    except Conflict as exc:
        flash(exc.errors[0].message, "warning")
        return redirect(url_for("web.trial_server", server_id=server_id))
    flash(_("已提交测试 #%(id)d", id=run.id), "info")
    return redirect(url_for("web.bench_run", run_id=run.id))


def _live(run: BenchRun) -> tuple[list[Any], dict[str, Any], dict[str, Any] | None]:
    """The run's steps, its live status and its job's view, read together so that they agree."""
    session = get_session()
    steps = bench_runs.run_steps(session, run_id=run.id)
    job = session.get(Job, run.job_id) if run.job_id else None
    status = run_status(run, job, steps, RUN_STATE_LABELS, RUN_STATE_COLOURS)
    if job is None:
        return steps, status, None
    view = job_view(job)
    view["json_url"] = url_for("web.bench_run_status", run_id=run.id)  # one poll: the job and the run
    if view["progress"]:
        view["progress"] = {**view["progress"], "current": current_text(status)}
    return steps, status, view


@bp.get("/bench-runs/<int(max=2147483647):run_id>")
@role_required(Role.viewer)
def bench_run(run_id: int) -> Any:
    """One run: live status while it runs; steps, claims versus measurements, charts, raw outputs."""
    run = or_404(bench_runs.get_run, run_id=run_id)
    session = get_session()
    server = trials.get_server(session, server_id=run.trial_server_id) if run.trial_server_id else None
    provider = provider_service.get_provider(session, provider_id=run.provider_id)
    steps, status, job = _live(run)
    samples = step_samples(steps)
    return render_template(
        "trials/run.html",
        run=run,
        server=server,
        offer=session.get(Offer, run.offer_id) if run.offer_id else None,
        uploaded=bench_uploads.is_uploaded(run),
        provider=provider,
        steps=steps,
        status=status,
        step_rows={row["step"]: row for row in status["steps"]},
        job=job,
        comparisons=comparison_rows(run.comparisons or [], bench_runs.thresholds()),
        error_kind=error_kind_label(run.error_kind),
        charts=run_charts(samples, run.claims),
        others=other_runs(run),
        upload_paths=UPLOAD_PATHS,
        verdict_labels=VERDICT_LABELS,
        verdict_colours=VERDICT_COLOURS,
    )


@bp.get("/bench-runs/<int(max=2147483647):run_id>/status.json")
@role_required(Role.viewer)
def bench_run_status(run_id: int) -> Any:
    """What the run page polls: its job's view (as /jobs/<id>.json) with the run's live status under "run"."""
    run = or_404(bench_runs.get_run, run_id=run_id)
    _steps, status, job = _live(run)
    response = jsonify({**(job or {"final": run.finished}), "run": status})
    response.headers["Cache-Control"] = "no-store"
    return response


def other_runs(run: BenchRun) -> list[BenchRun]:
    """Runs to compare with: the same trial server's, or for an upload those of the same offer."""
    session = get_session()
    if run.trial_server_id is not None:
        found = bench_runs.list_runs(session, server_id=run.trial_server_id)
    else:
        found = [
            r
            for r in bench_runs.list_runs(session, provider_id=run.provider_id)
            if r.offer_id == run.offer_id
        ]
    return [other for other in found if other.id != run.id]


@bp.post("/bench-runs/<int(max=2147483647):run_id>/cancel")
@role_required(Role.analyst)
def bench_run_cancel(run_id: int) -> Any:
    """Cancel a queued run, or ask a running one to stop."""
    or_404(bench_runs.get_run, run_id=run_id)
    return act_and_return(
        partial(bench_runs.cancel_run, get_session(), run_id=run_id),
        _("已请求停止测试"),
        url_for("web.bench_run", run_id=run_id),
    )
