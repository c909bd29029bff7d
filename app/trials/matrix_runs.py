"""Multi-node runs: N trial servers of one offer measured together as one stored run (suite "matrix").

The run belongs to its first server (the target: mpirun and the RDMA client run there; the second server is
its RDMA peer). Its params hold the nodes (server id, name, intranet address), the cluster steps asked for
and the suite parameters; its steps are one row per pair (`pair_N`, options naming both ends) and one per
cluster step, each stored as soon as it finished, so an interrupted run keeps what it measured.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import logging
from collections.abc import Callable
from typing import Any

from cryptography.fernet import Fernet
from flask_babel import gettext as _
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from sqlmodel import Session, col, select

from app.core import clock
from app.core.errors import Conflict, FieldError, InvalidInput, from_validation_error
from app.core.events import EvidenceChanged, publish
from app.core.jobs import background, enqueue, report_progress
from app.models import Offer
from app.models.jobs import Job
from app.models.trials import BenchRun, BenchStep, RunState, TrialServer
from app.trials import bench_runs
from app.trials.server_addresses import STRICT, address_error, current_policy
from app.trials.servers import HOSTNAME, get_server, ssh_target
from benchmarks.compare import Claims, compare
from benchmarks.matrix import CLUSTER_STEPS, MAX_NODES, Node, cluster_steps, pair_step, pairs_of, run_matrix
from benchmarks.params import SuiteParams
from benchmarks.suites import ProbeResult, SuiteStatus
from scrapers.addresses import AddressPolicy

logger = logging.getLogger(__name__)

MATRIX_KIND = "bench.matrix"
MATRIX_SUITE = "matrix"
MAX_ID = 2**31 - 1


class MatrixNodeIn(BaseModel):
    """One chosen trial server, and the intranet address the other nodes reach it on (default: see below)."""

    model_config = ConfigDict(extra="forbid")

    server_id: int = Field(ge=1, le=MAX_ID)
    address: str | None = Field(None, max_length=255)

    @field_validator("address", mode="before")
    @classmethod
    def _address(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip() or None
        if value is None:
            return None
        try:
            return str(ipaddress.ip_address(value))
        except ValueError:
            if isinstance(value, str) and HOSTNAME.match(value):
                return value.lower()
        raise ValueError(_("须为主机名或 IP 地址"))


class MatrixRequest(BaseModel):
    """Which servers (2 to 8, of one offer), which cluster steps, and suite parameters (else defaults)."""

    model_config = ConfigDict(extra="forbid")

    nodes: list[MatrixNodeIn] = Field(min_length=2, max_length=MAX_NODES)
    cluster: list[str] = Field(default_factory=lambda: list(CLUSTER_STEPS), max_length=len(CLUSTER_STEPS))
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("cluster")
    @classmethod
    def _cluster(cls, value: list[str]) -> list[str]:
        unknown = [name for name in value if name not in CLUSTER_STEPS]
        if unknown:
            raise ValueError(
                _(
                    "未知步骤 %(names)s；可选：%(known)s",
                    names=", ".join(unknown),
                    known=", ".join(CLUSTER_STEPS),
                )
            )
        return [name for name in CLUSTER_STEPS if name in value]  # run order, without repeats


# ---------------------------------------------------------------- creating
def _request(data: dict[str, Any]) -> MatrixRequest:
    try:
        request = MatrixRequest.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc) from None
    ids = [node.server_id for node in request.nodes]
    if len(set(ids)) != len(ids):
        raise InvalidInput(_("每台服务器只能选一次"), field="nodes")
    try:
        SuiteParams.model_validate(request.params)
    except ValidationError as exc:
        raise from_validation_error(exc, prefix="params") from None
    return request


def _servers(session: Session, request: MatrixRequest) -> list[TrialServer]:
    """The chosen servers: all of one offer, host keys pinned, none busy with another run."""
    servers = [get_server(session, server_id=node.server_id) for node in request.nodes]
    offers = {server.offer_id for server in servers}
    if len(offers) != 1 or None in offers or len({server.provider_id for server in servers}) != 1:
        raise InvalidInput(_("须为同一报价的试用服务器（每台都要选定该报价）"), field="nodes")
    errors = [
        FieldError(
            f"nodes[{index}].server_id", _("请先确认并固定服务器 %(name)s 的主机密钥指纹", name=server.name)
        )
        for index, server in enumerate(servers)
        if not server.host_key_fingerprint
    ]
    if errors:
        raise InvalidInput(errors)
    for server in servers:
        busy = session.exec(
            select(BenchRun).where(
                BenchRun.trial_server_id == server.id,
                col(BenchRun.state).in_([RunState.queued, RunState.running]),
            )
        ).all()
        if any(not bench_runs.refresh_state(session, run).finished for run in busy):
            raise Conflict(
                _("服务器 %(name)s 已有测试在进行，请等待其结束或取消", name=server.name), field="nodes"
            )
    return servers


def _intranet_address(server: TrialServer, given: str | None, servers: list[TrialServer]) -> str:
    """The address given, else the one another chosen server names for it as its peer, else its host."""
    if given:
        return given
    named = next(
        (other.peer_address for other in servers if other.peer_id == server.id and other.peer_address), None
    )
    return named or server.host


def _node_names(servers: list[TrialServer]) -> list[str]:
    """Server names, with the id added where two share a name (the matrix needs distinct names)."""
    names = [server.name for server in servers]
    return [
        name if names.count(name) == 1 else f"{name} #{server.id}"
        for name, server in zip(names, servers, strict=True)
    ]


def _check_node_addresses(servers: list[TrialServer], addresses: list[str], policy: AddressPolicy) -> None:
    """Refuse node addresses the trial address policy refuses (the other nodes connect to them)."""
    errors = [
        error
        for index, (server, address) in enumerate(zip(servers, addresses, strict=True))
        if (error := address_error(address, server.port, policy, field=f"nodes[{index}].address"))
    ]
    if errors:
        raise InvalidInput(errors)


def create_matrix_run(
    session: Session, *, data: dict[str, Any], user: Any = None, policy: AddressPolicy | None = None
) -> BenchRun:
    """A queued multi-node run (not started): one step row per pair, then one per cluster step.

    The node addresses are checked against `policy` (default: the running app's trial address policy).
    """
    request = _request(data)
    servers = _servers(session, request)
    nodes = [
        {"server_id": server.id, "name": name, "address": _intranet_address(server, node.address, servers)}
        for server, name, node in zip(servers, _node_names(servers), request.nodes, strict=True)
    ]
    _check_node_addresses(servers, [node["address"] for node in nodes], policy or current_policy())
    suite_params = SuiteParams.model_validate(request.params).model_dump(mode="json", exclude_defaults=True)
    actor_id, actor_name = (
        (user.id, user.username) if user is not None else session.info.get("actor", (None, "system"))
    )
    first = servers[0]
    offer = session.get(Offer, first.offer_id)
    run = BenchRun(
        trial_server_id=first.id,
        provider_id=first.provider_id,
        offer_id=first.offer_id,
        suite=MATRIX_SUITE,
        params={**suite_params, "nodes": nodes, "cluster": request.cluster},
        host=first.host,
        claims=dataclasses.asdict(bench_runs.claims_of(offer)),
        created_by_id=actor_id,
        created_by_name=actor_name,
    )
    session.add(run)
    session.flush()
    session.add_all(_step_rows(run.id, nodes, request.cluster))
    session.commit()
    return run


def _step_rows(run_id: int, nodes: list[dict[str, Any]], cluster: list[str]) -> list[BenchStep]:
    matrix_nodes = [Node(node["name"], None, node["address"]) for node in nodes]  # type: ignore[arg-type]
    rows = [
        BenchStep(
            run_id=run_id,
            position=number - 1,
            step=pair_step(number),
            probe="iperf3",
            options={"from": a.name, "to": b.name},
        )
        for number, (a, b) in enumerate(pairs_of(matrix_nodes), start=1)
    ]
    rows += [
        BenchStep(
            run_id=run_id, position=len(rows) + index, step=step.name, probe=step.probe, options=step.options
        )
        for index, step in enumerate(cluster_steps(matrix_nodes, tuple(cluster)))
    ]
    return rows


def start_matrix_run(
    session: Session, *, data: dict[str, Any], user: Any = None, policy: AddressPolicy | None = None
) -> BenchRun:
    """Create a multi-node run (node addresses checked, see create_matrix_run) and queue it."""
    run = create_matrix_run(session, data=data, user=user, policy=policy)
    job = enqueue(
        session, kind=MATRIX_KIND, params={"run_id": run.id}, user=user, provider_id=run.provider_id
    )
    run.job_id = job.id
    session.add(run)
    session.commit()
    session.refresh(run)
    return run


def is_matrix(run: BenchRun) -> bool:
    """Whether a run is a multi-node one."""
    return run.suite == MATRIX_SUITE


def run_nodes(run: BenchRun) -> list[dict[str, Any]]:
    """The nodes of a multi-node run, in order: server_id, name, address."""
    return list((run.params or {}).get("nodes") or [])


# ---------------------------------------------------------------- executing
class _Recorder:
    """Stores each finished step into its row and reports the job's progress, committing each time."""

    def __init__(
        self, session: Session, run: BenchRun, job: Job | None, echo: Callable[[int, int, str], None] | None
    ):
        self.session, self.run, self.job, self.echo = session, run, job, echo
        self.rows = {row.step: row for row in bench_runs.run_steps(session, run_id=run.id)}
        self.done = 0

    def _progress(self, current: str) -> None:
        if self.job is not None:
            report_progress(self.session, self.job, done=self.done, total=len(self.rows), current=current)
        else:
            self.session.commit()
        if self.echo is not None:
            self.echo(self.done, len(self.rows), current)

    def pair(self, client: str, server: str, done: int, total: int) -> None:
        row = self.rows.get(pair_step(done + 1))
        if row is not None:
            row.status, row.started_at = "running", clock.now()
            self.session.add(row)
        self._progress(f"[{self.done}/{len(self.rows)}] {client} → {server}")

    def step(self, name: str, result: ProbeResult) -> None:
        row = self.rows.get(name)
        if row is None:
            return
        row.status, row.error = result.status, result.error
        row.started_at = row.started_at or clock.now()
        row.outputs = [bench_runs._clip(output.to_dict()) for output in result.outputs]
        row.samples = [sample.to_dict() for sample in result.samples]
        row.parse_errors = list(result.parse_errors)
        row.duration = result.duration
        self.session.add(row)
        self.done += 1
        self._progress(f"[{self.done}/{len(self.rows)}] {name} {result.status}")


def _finish(session: Session, run: BenchRun, state: RunState, error: str | None, kind: str | None) -> None:
    """Set the run's final state; steps that never ran are marked skipped."""
    for row in bench_runs.run_steps(session, run_id=run.id):
        if row.status in ("pending", "running"):
            row.status = "skipped"
            session.add(row)
    run.state, run.error, run.error_kind = state, error, kind
    run.finished_at = clock.now()
    session.add(run)
    session.commit()


def execute_matrix_run(
    session: Session,
    *,
    run_id: int,
    cipher: Fernet,
    job: Job | None = None,
    should_cancel: Callable[[], bool] | None = None,
    echo: Callable[[int, int, str], None] | None = None,
    policy: AddressPolicy = STRICT,
) -> BenchRun:
    """Run a created multi-node run in this process, storing each step as it finishes; returns the run.

    Every server's address and intranet address is checked against `policy` first (a refused one fails
    the run before anything ran); the intranet addresses are used between the nodes only, never by gpuvet.
    """
    run = bench_runs.get_run(session, run_id=run_id)
    run.state, run.started_at = RunState.running, clock.now()
    session.add(run)
    session.commit()
    try:
        listed = run_nodes(run)
        servers = [get_server(session, server_id=node["server_id"]) for node in listed]
        _check_node_addresses(servers, [node["address"] for node in listed], policy)
        nodes = [
            Node(node["name"], ssh_target(server, cipher, policy=policy), node["address"])
            for node, server in zip(listed, servers, strict=True)
        ]
    except InvalidInput as exc:
        error = "; ".join(f"{item.field}: {item.message}" for item in exc.errors)[:2000]
        _finish(session, run, RunState.failed, error, "refused")
        return run
    suite_params = {key: value for key, value in run.params.items() if key not in ("nodes", "cluster")}
    recorder = _Recorder(session, run, job, echo)
    result = run_matrix(
        nodes,
        SuiteParams.model_validate(suite_params),
        cluster=tuple(run.params.get("cluster") or ()),
        on_pair=recorder.pair,
        on_step=recorder.step,
        should_cancel=should_cancel,
    )
    run.comparisons = [
        comparison.to_dict()
        for comparison in compare(
            Claims(**run.claims),
            result.samples,
            thresholds=bench_runs.thresholds(),
            missing_tools=result.missing_tools,
        )
        if comparison.check != "bandwidth"  # every throughput is a pair's: the matrix check names both ends
    ]
    kind = "ssh" if result.status == SuiteStatus.failed else None
    _finish(session, run, bench_runs.STATE_FROM_SUITE[result.status], result.error, kind)
    if run.state == RunState.succeeded:
        publish(
            session,
            EvidenceChanged(provider_id=run.provider_id, since=run.finished_at, cause=f"bench run {run.id}"),
        )
    return run


@background(MATRIX_KIND, title_zh="多节点测试", title_en="Multi-node benchmark")
def run_matrix_job(session: Session, job: Job, *, run_id: int) -> dict[str, Any]:
    """The job: execute the multi-node run; a failed run fails the job with the run's error."""
    return bench_runs.execute_for_job(
        session, job, execute_matrix_run, run_id=run_id, name_zh="多节点测试", name_en="multi-node run"
    )


# ---------------------------------------------------------------- reading
def offer_servers(session: Session, *, provider_id: int) -> dict[int, list[TrialServer]]:
    """The provider's trial servers that stand for an offer, by offer id (candidates for a matrix)."""
    found: dict[int, list[TrialServer]] = {}
    stmt = select(TrialServer).where(TrialServer.provider_id == provider_id).order_by(col(TrialServer.id))
    for server in session.exec(stmt).all():
        if server.offer_id is not None:
            found.setdefault(server.offer_id, []).append(server)
    return found
