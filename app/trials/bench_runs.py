"""Benchmark runs on trial servers: start (job queue or foreground), store every step as it happens,
compare with the offer's claims, and serve the "benchmarks" fact to the vetting rules.

Each step's raw outputs are committed as soon as the probe finished running (before parsing), then its
samples; so a run whose worker dies keeps everything it measured and is shown as interrupted.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cryptography.fernet import Fernet
from flask_babel import gettext as _
from pydantic import ValidationError
from sqlmodel import Session, col, select

from app.advice.knowledge import benchmark_thresholds
from app.core import clock
from app.core.errors import Conflict, InvalidInput, from_validation_error
from app.core.events import EvidenceChanged, publish
from app.core.jobs import background, enqueue, job_cancelled, job_result_outcome, report_progress
from app.core.records import get_or_404
from app.credentials.facts import fact_source
from app.models import Offer
from app.models.jobs import FINAL_STATES, Job, JobState
from app.models.trials import BenchRun, BenchStep, RunState, TrialServer
from app.trials.measurements import fact_entries
from app.trials.server_addresses import STRICT, address_policy, checked_peer_address
from app.trials.servers import get_server, ssh_target
from benchmarks.compare import Claims, Thresholds, compare
from benchmarks.params import SuiteParams
from benchmarks.sample import Sample
from benchmarks.ssh import Runner
from benchmarks.suites import SUITES, ProbeResult, Progress, SuiteStatus, resolve, run_on_server
from scrapers.addresses import AddressPolicy

logger = logging.getLogger(__name__)

BENCH_KIND = "bench.run"
CANCEL_POLL_S = 1.0
MAX_STORED_OUTPUT = 1024 * 1024  # characters of one stream kept per command in the database
STATE_FROM_SUITE = {
    SuiteStatus.succeeded: RunState.succeeded,
    SuiteStatus.failed: RunState.failed,
    SuiteStatus.cancelled: RunState.cancelled,
}


RUN_STATE_ZH = {RunState.cancelled: "已取消", RunState.interrupted: "已中断", RunState.failed: "失败"}


def _run_state(state: RunState) -> str:
    """A finished run's state in the current language."""
    names = {
        RunState.succeeded: _("已完成"),
        RunState.cancelled: _("已取消"),
        RunState.interrupted: _("已中断"),
        RunState.failed: _("失败"),
    }
    return names.get(state, str(state))


class BenchRunFailed(Exception):
    """The run could not measure (SSH refused, key changed ...); the run row says why."""


# ---------------------------------------------------------------- claims and thresholds
def thresholds(path: Path | None = None) -> Thresholds:
    """Verdict thresholds from app/knowledge/benchmarks.yaml (the loader the ranking reads too)."""
    return benchmark_thresholds(path)


def claims_of(offer: Offer | None) -> Claims:
    """What an offer claims, as benchmarks.compare reads it (nothing when there is no offer)."""
    if offer is None:
        return Claims()
    return Claims(
        public_mbps=offer.public_mbps,
        intranet_gbps=offer.intranet_gbps,
        bandwidth_type=str(offer.bandwidth_type),  # StrEnum: its value
        storage_type=str(offer.storage_type),
        nominal_iops=offer.nominal_iops,
        gpu_model=offer.gpu_model,
        gpus_per_node=offer.gpus_per_node,
        rdma_gbps=offer.rdma_gbps,
    )


# ---------------------------------------------------------------- starting
def _validated_params(suite: str, params: dict[str, Any] | None) -> SuiteParams:
    if suite not in SUITES:
        raise InvalidInput(
            _("未知测试套件 %(suite)s；可选：%(known)s", suite=suite, known=", ".join(SUITES)), field="suite"
        )
    try:
        return SuiteParams.model_validate(params or {})
    except ValidationError as exc:
        raise from_validation_error(exc, prefix="params") from None


def create_run(
    session: Session, *, server_id: int, suite: str, params: dict[str, Any] | None = None, user: Any = None
) -> BenchRun:
    """A queued run row (not started): checks the suite, the parameters and that the host key is pinned."""
    server = get_server(session, server_id=server_id)
    validated = _validated_params(suite, params)
    if not server.host_key_fingerprint:
        raise InvalidInput(
            _("请先确认并固定服务器的主机密钥指纹"),
            field="host_key_fingerprint",
        )
    busy = session.exec(
        select(BenchRun).where(
            BenchRun.trial_server_id == server.id,
            col(BenchRun.state).in_([RunState.queued, RunState.running]),
        )
    ).all()
    for other in busy:
        refresh_state(session, other)
    if any(not other.finished for other in busy):
        raise Conflict(
            _("该服务器已有测试在进行，请等待其结束或取消"),
            field="trial_server_id",
        )
    actor_id, actor_name = (
        (user.id, user.username) if user is not None else session.info.get("actor", (None, "system"))
    )
    offer = session.get(Offer, server.offer_id) if server.offer_id else None
    run = BenchRun(
        trial_server_id=server.id,
        provider_id=server.provider_id,
        offer_id=server.offer_id,
        suite=suite,
        params=validated.model_dump(mode="json", exclude_defaults=True),
        host=server.host,
        claims=dataclasses.asdict(claims_of(offer)),
        created_by_id=actor_id,
        created_by_name=actor_name,
    )
    session.add(run)
    session.flush()
    _suite_name, steps = resolve(suite)
    session.add_all(
        BenchStep(run_id=run.id, position=index, step=step.name, probe=step.probe, options=dict(step.options))
        for index, step in enumerate(steps)
    )
    session.commit()
    return run


def start_run(
    session: Session, *, server_id: int, suite: str, params: dict[str, Any] | None = None, user: Any = None
) -> BenchRun:
    """Create a run and put it on the job queue; runs on different servers go in parallel."""
    run = create_run(session, server_id=server_id, suite=suite, params=params, user=user)
    job = enqueue(session, kind=BENCH_KIND, params={"run_id": run.id}, user=user, provider_id=run.provider_id)
    run.job_id = job.id
    session.add(run)
    session.commit()
    session.refresh(run)
    return run


def cancel_run(session: Session, *, run_id: int) -> BenchRun:
    """Ask the run's job to stop (a queued run is cancelled at once)."""
    from app.core import jobs

    run = get_run(session, run_id=run_id)
    if run.finished or run.job_id is None:
        raise Conflict(_("测试已结束（%(state)s）", state=_run_state(run.state)), field="run_id")
    jobs.cancel(session, run.job_id)
    refresh_state(session, run)
    return run


# ---------------------------------------------------------------- executing
def _clip(output: dict[str, Any]) -> dict[str, Any]:
    """A raw output for storage: verbatim, but each stream cut at MAX_STORED_OUTPUT characters."""
    clipped = dict(output)
    for stream in ("stdout", "stderr"):
        text = clipped.get(stream) or ""
        if len(text) > MAX_STORED_OUTPUT:
            clipped[stream] = text[:MAX_STORED_OUTPUT]
            clipped["stored_truncated"] = True
    return clipped


class _Recorder:
    """Writes progress events into the run's step rows (and the job's progress), committing each."""

    def __init__(
        self, session: Session, run: BenchRun, job: Job | None, echo: Callable[[Progress], None] | None
    ):
        self.session, self.run, self.job, self.echo = session, run, job, echo
        self.steps = {step.step: step for step in run_steps(session, run_id=run.id)}

    def __call__(self, progress: Progress) -> None:
        if progress.step is not None and progress.event in ("started", "outputs", "finished"):
            self._store(progress.result.step(progress.step), progress.event)
        if self.job is not None:
            current = progress.detail  # the run's final state
            if progress.event != "done":
                step = f"{progress.step} {progress.detail}".strip()
                current = f"[{progress.done}/{progress.total}] {step} · {progress.elapsed:.0f} s"
            report_progress(self.session, self.job, done=progress.done, total=progress.total, current=current)
        else:
            self.session.commit()
        if self.echo is not None:
            self.echo(progress)

    def _store(self, result: ProbeResult, event: str) -> None:
        row = self.steps.get(result.step)
        if row is None:
            return
        row.status = result.status
        if result.started_at and row.started_at is None:
            row.started_at = clock.now()
        if event in ("outputs", "finished"):
            row.outputs = [_clip(output.to_dict()) for output in result.outputs]
            row.error = result.error
        if event == "finished":
            row.samples = [sample.to_dict() for sample in result.samples]
            row.parse_errors = list(result.parse_errors)
            row.duration = result.duration
            row.error = result.error
        self.session.add(row)


def execute_run(
    session: Session,
    *,
    run_id: int,
    cipher: Fernet,
    job: Job | None = None,
    local: Runner | None = None,
    should_cancel: Callable[[], bool] | None = None,
    echo: Callable[[Progress], None] | None = None,
    policy: AddressPolicy = STRICT,
) -> BenchRun:
    """Run a created run in this process, storing each step as it goes; returns the finished run.

    The server's and the peer's addresses are resolved and checked against `policy` first, and the
    connections go to the checked addresses; a refused one fails the run before any step.
    """
    run = get_run(session, run_id=run_id)
    server = get_server(session, server_id=run.trial_server_id)
    peer = get_server(session, server_id=server.peer_id) if server.peer_id else None
    run.state, run.started_at = RunState.running, clock.now()
    session.add(run)
    session.commit()
    try:
        target = ssh_target(server, cipher, policy=policy)
        peer_target = ssh_target(peer, cipher, policy=policy) if peer else None
        # The target reaches its peer on the peer address: it follows the policy too (README).
        peer_address = checked_peer_address(server, policy) if peer is not None else None
        extra = {"peer_address": peer_address} if peer_address else {}
    except InvalidInput as exc:
        return _refuse_run(session, run, exc)
    params = SuiteParams.model_validate(run.params | extra)
    result = run_on_server(
        target,
        run.suite,
        params,
        peer=peer_target,
        local=local,
        on_progress=_Recorder(session, run, job, echo),
        should_cancel=should_cancel,
    )
    if result.error_kind and result.status == SuiteStatus.failed:  # failed before any step (connect)
        for row in run_steps(session, run_id=run.id):
            row.status = "skipped"
            session.add(row)
    run.state = STATE_FROM_SUITE[result.status]
    run.error, run.error_kind = result.error, result.error_kind
    run.comparisons = [
        comparison.to_dict()
        for comparison in compare(
            Claims(**run.claims), result.samples, thresholds=thresholds(), missing_tools=result.missing_tools
        )
    ]
    run.finished_at = clock.now()
    session.add(run)
    session.commit()
    if run.state == RunState.succeeded:
        publish(
            session,
            EvidenceChanged(provider_id=run.provider_id, since=run.finished_at, cause=f"bench run {run.id}"),
        )
    return run


def _refuse_run(session: Session, run: BenchRun, exc: InvalidInput) -> BenchRun:
    """Fail a run whose target may not be reached (address policy, undecryptable secret); nothing ran."""
    for row in run_steps(session, run_id=run.id):
        row.status = "skipped"
        session.add(row)
    run.state, run.error_kind = RunState.failed, "refused"
    run.error = "; ".join(f"{error.field}: {error.message}" for error in exc.errors)[:2000]
    run.finished_at = clock.now()
    session.add(run)
    session.commit()
    return run


def _throttled(check: Callable[[], bool], every: float) -> Callable[[], bool]:
    """`check`, asked at most once per `every` seconds (it reads the database)."""
    state = {"at": 0.0, "value": False}

    def wrapped() -> bool:
        now = time.monotonic()
        if not state["value"] and now - state["at"] >= every:
            state["at"], state["value"] = now, check()
        return state["value"]

    return wrapped


@background(BENCH_KIND, title_zh="试用服务器测试", title_en="Trial-server benchmark")
def run_bench_job(session: Session, job: Job, *, run_id: int) -> dict[str, Any]:
    """The job: execute the run; an SSH failure fails the job with the run's error."""
    return execute_for_job(session, job, execute_run, run_id=run_id, name_zh="测试", name_en="benchmark run")


def execute_for_job(
    session: Session, job: Job, execute: Callable[..., BenchRun], *, run_id: int, name_zh: str, name_en: str
) -> dict[str, Any]:
    """Execute a run as its job does: a failed run fails the job with the run's error; a run that did not
    finish (cancelled, interrupted) makes the job's outcome "failed"."""
    from flask import current_app

    from app.trials.servers import cipher_from_settings

    settings = current_app.config["GPUVET_SETTINGS"]
    cancelled = _throttled(lambda: job_cancelled(session, job), CANCEL_POLL_S)
    run = execute(
        session,
        run_id=run_id,
        cipher=cipher_from_settings(settings),
        job=job,
        should_cancel=cancelled,
        policy=address_policy(settings),
    )
    if run.state == RunState.failed:
        raise BenchRunFailed(run.error or f"{name_en} failed")
    result = {"run_id": run.id, "state": run.state, "comparisons": len(run.comparisons)}
    if run.state != RunState.succeeded:
        result |= job_result_outcome(
            "failed",
            f"{name_zh}未完成（{RUN_STATE_ZH.get(run.state, run.state)}）",
            f"The {name_en} did not finish ({run.state})",
        )
    return result


# ---------------------------------------------------------------- reading
JOB_TO_RUN = {
    JobState.failed: RunState.failed,
    JobState.cancelled: RunState.cancelled,
    JobState.interrupted: RunState.interrupted,
    JobState.succeeded: RunState.failed,  # the job ended but the run never finished: should not happen
}


def refresh_state(session: Session, run: BenchRun) -> BenchRun:
    """Bring an unfinished run in line with its job (e.g. interrupted when its worker died)."""
    if run.finished or run.job_id is None:
        return run
    job = session.get(Job, run.job_id)
    if job is None or job.state not in FINAL_STATES:
        return run
    run.state = JOB_TO_RUN[JobState(job.state)]
    run.error = run.error or job.error
    run.finished_at = job.finished_at or clock.now()
    for row in run_steps(session, run_id=run.id):
        if row.status in ("pending", "running"):
            row.status = "interrupted" if run.state == RunState.interrupted else "skipped"
            session.add(row)
    session.add(run)
    session.commit()
    return run


def get_run(session: Session, *, run_id: int) -> BenchRun:
    """One run (state refreshed from its job), or NotFound."""
    run = get_or_404(session, BenchRun, run_id, _("测试 %(id)s 不存在", id=run_id), field="run_id")
    return refresh_state(session, run)


def list_runs(
    session: Session, *, server_id: int | None = None, provider_id: int | None = None, limit: int = 50
) -> list[BenchRun]:
    """Runs newest first (of one server or provider), states refreshed."""
    stmt = select(BenchRun)
    if server_id is not None:
        stmt = stmt.where(BenchRun.trial_server_id == server_id)
    if provider_id is not None:
        stmt = stmt.where(BenchRun.provider_id == provider_id)
    runs = list(session.exec(stmt.order_by(col(BenchRun.id).desc()).limit(limit)).all())
    return [refresh_state(session, run) for run in runs]


def run_steps(session: Session, *, run_id: int) -> list[BenchStep]:
    """A run's steps in suite order."""
    stmt = select(BenchStep).where(BenchStep.run_id == run_id).order_by(col(BenchStep.position))
    return list(session.exec(stmt).all())


def run_samples(session: Session, *, run_id: int) -> list[Sample]:
    """Every stored sample of a run."""
    return [Sample.from_dict(data) for step in run_steps(session, run_id=run_id) for data in step.samples]


KEY_METRICS = (  # (metric, metadata filter, label zh, label en, unit)
    ("throughput", {"step": "iperf3"}, "单流吞吐", "single-stream throughput", "Mbit/s"),
    ("throughput", {"step": "iperf3_parallel"}, "多流吞吐", "parallel throughput", "Mbit/s"),
    ("throughput", {"step": "iperf3_reverse"}, "反向吞吐", "reverse throughput", "Mbit/s"),
    ("packet_loss", {}, "丢包率", "packet loss", "%"),
    ("rtt_avg", {}, "平均延迟", "average latency", "ms"),
    ("rtt_mdev", {}, "延迟抖动", "latency jitter (mdev)", "ms"),
    ("read_iops", {}, "4k 随机读 IOPS", "4k random-read IOPS", "IOPS"),
    ("read_latency", {"percentile": 99.0}, "读延迟 p99", "read latency p99", "us"),
    ("write_effective_bandwidth", {}, "检查点写入", "checkpoint writes", "MiB/s"),
    ("storage_class", {}, "存储类型", "storage type", ""),
    ("gpu_count", {}, "GPU 数量", "GPU count", "GPUs"),
)


def key_figures(samples: list[Sample]) -> dict[tuple[str, str], Any]:
    """The headline value of each KEY_METRICS row (mean when several samples match)."""
    figures: dict[tuple[str, str], Any] = {}
    for metric, where, _zh, en, _unit in KEY_METRICS:
        matching = [
            sample.value
            for sample in samples
            if sample.metric == metric and all(sample.metadata.get(k) == v for k, v in where.items())
        ]
        if not matching:
            continue
        numbers = [value for value in matching if isinstance(value, int | float)]
        figures[(metric, en)] = round(sum(numbers) / len(numbers), 2) if numbers else matching[0]
    return figures


def compare_runs(session: Session, *, run_ids: list[int]) -> list[dict[str, Any]]:
    """Rows of key figures with one value per run (None where a run did not measure it)."""
    figures = [key_figures(run_samples(session, run_id=get_run(session, run_id=i).id)) for i in run_ids]
    rows = []
    for metric, _where, zh, en, unit in KEY_METRICS:
        values = [figure.get((metric, en)) for figure in figures]
        if any(value is not None for value in values):
            rows.append({"metric": metric, "label_zh": zh, "label_en": en, "unit": unit, "values": values})
    return rows


# ---------------------------------------------------------------- the fact the vetting rules read
@fact_source("benchmarks")
def benchmarks_fact(session: Session, provider: Any) -> dict[str, Any] | None:
    """The latest finished run of each trial server of the provider, its latest uploads and the runs that
    count for its offers (app.trials.measurements), each with the comparisons that count."""
    servers = session.exec(select(TrialServer).where(TrialServer.provider_id == provider.id)).all()
    candidates: list[tuple[BenchRun, Any]] = []
    for server in servers:
        runs = session.exec(
            select(BenchRun)
            .where(BenchRun.trial_server_id == server.id, BenchRun.state == RunState.succeeded)
            .order_by(col(BenchRun.id).desc())
            .limit(1)
        ).all()
        candidates += [(run, server) for run in runs]
    from app.trials.bench_uploads import latest_uploads  # it imports this module

    # outputs uploaded by analysts count as evidence too
    candidates += [(run, None) for run in latest_uploads(session, provider.id)]
    latest = fact_entries(session, {provider.id: candidates})[provider.id]
    return {"runs": latest} if latest else None
