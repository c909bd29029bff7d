"""The intranet matrix over three nodes in network namespaces, one link shaped: the matrix finds it."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.compare import Claims, Verdict, compare
from benchmarks.matrix import (
    CLUSTER_STEPS,
    MAX_NODES,
    MatrixResult,
    Node,
    cluster_steps,
    pairs_of,
    run_matrix,
)
from benchmarks.probes.rdma import RDMA_FIGURE
from benchmarks.ssh import LocalRunner
from benchmarks.suites import Step, StepStatus, SuiteStatus, run_suite
from tests.bench_support.cluster_standins import logged, standin_cluster
from tests.bench_support.netns import netns_supported
from tests.benchmarks.conftest import needs_root, short_params, target_for
from tests.conftest import missing_tool

SHAPED_MBIT = 100


@dataclass
class Cluster:
    """The three nodes as the matrix reaches them, and the log the stand-in tools write their calls to."""

    nodes: list[Node]
    log: Path


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Three nodes, each an sshd in its own namespace with the stand-in cluster tools; node2-node3 shaped."""
    if os.geteuid() != 0:
        missing_tool("sshd privilege separation and ip netns need root")
    supported, reason = netns_supported()
    if not supported:
        missing_tool(reason)
    base = tmp_path_factory.mktemp("cluster")
    with standin_cluster(base, 3, shaped={(1, 2): SHAPED_MBIT}) as (cluster, sshds, log):
        nodes = [
            Node(node.name, target_for(sshd), node.intranet_address)
            for node, sshd in zip(cluster.nodes, sshds, strict=True)
        ]
        yield Cluster(nodes, log)


@pytest.fixture
def cluster(mesh: Cluster) -> list[Node]:
    """The nodes of the module's mesh."""
    return mesh.nodes


@pytest.fixture(scope="module")
def full_run(mesh: Cluster, tmp_path_factory: pytest.TempPathFactory) -> tuple[MatrixResult, list, list]:
    """One matrix run with the cluster steps: (result, the pairs announced, the steps handed back)."""
    seen: list[tuple[str, str]] = []
    finished: list[tuple[str, str]] = []
    result = run_matrix(
        mesh.nodes,
        short_params(tmp_path_factory.mktemp("full-run"), iperf3_seconds=1),
        cluster=CLUSTER_STEPS,
        on_pair=lambda a, b, done, total: seen.append((a, b)),
        on_step=lambda name, step: finished.append((name, step.status)),
    )
    return result, seen, finished


@pytest.mark.slow
@needs_root
def test_the_matrix_finds_the_shaped_link(full_run):
    result, seen, finished = full_run
    assert result.status == SuiteStatus.succeeded, result.error
    assert seen == [("node1", "node2"), ("node1", "node3"), ("node2", "node3")]
    assert [name for name, _status in finished] == ["pair_1", "pair_2", "pair_3", *CLUSTER_STEPS]
    for _source, _target, run in result.pairs:
        assert [probe.status for probe in run.probes] == [StepStatus.ok], [p.error for p in run.probes]
    throughput = result.throughput()
    assert throughput[("node2", "node3")] < SHAPED_MBIT * 1.1
    assert throughput[("node1", "node2")] > 2 * SHAPED_MBIT
    comparisons = [c for c in compare(Claims(intranet_gbps=1), result.samples) if c.check == "matrix"]
    slow = [
        c for c in comparisons if c.verdict is Verdict.warn and c.evidence == {} and "median" in c.reason_en
    ]
    assert [c.subject for c in slow] == ["node2->node3"]
    assert "node2" in slow[0].reason_zh and "交换机" in slow[0].reason_zh
    against_claim = {c.subject: c.verdict for c in comparisons if "claimed" in c.reason_en}
    assert against_claim["node2->node3"] is Verdict.failed  # 0.1 of the claimed 1 Gbps


@pytest.mark.slow
@needs_root
def test_all_reduce_runs_through_mpirun_over_every_node(full_run, mesh: Cluster):
    result, _seen, _finished = full_run
    step = result.cluster.step("collective_cluster")
    assert step.status == StepStatus.ok, (step.error, step.outputs[-1].stdout[-300:])
    [argv] = logged(mesh.log, "mpirun")
    hosts = ",".join(f"{node.address}:8" for node in mesh.nodes)  # 8 GPUs listed by the stand-in nvidia-smi
    assert argv[argv.index("-np") + 1] == "24" and argv[argv.index("-H") + 1] == hosts
    assert "--allow-run-as-root" in argv  # Open MPI (from mpirun --version) refuses root without it
    launched = argv[argv.index("all_reduce_perf") :]
    assert launched == ["all_reduce_perf", "-b", "8", "-e", str(8 * 2**30), "-f", "2", "-g", "1"]
    assert step.outputs[-1].stdout.startswith("### nccl-tests all_reduce_perf over 3 nodes x 8 GPUs")
    [peak] = [s for s in step.samples if s.metric == "nccl_busbw_peak"]
    assert peak.value == pytest.approx(78.79) and peak.metadata["nodes"] == 2  # what the recorded table says
    claims = Claims(intranet_gbps=100, rdma_gbps=3200)  # 8 x 400G: what each node can send, 400 GB/s
    [collective] = [c for c in compare(claims, result.samples) if c.check == "collective"]
    assert collective.claimed == 400.0 and collective.verdict is Verdict.failed
    assert "RDMA 3200 Gbps" in collective.reason_zh


@pytest.mark.slow
@needs_root
def test_rdma_runs_perftest_servers_on_the_peer_and_clients_on_the_target(full_run, mesh: Cluster):
    result, _seen, _finished = full_run
    step = result.cluster.step("rdma")
    assert step.status == StepStatus.ok, step.error
    peer = mesh.nodes[1].address
    calls = logged(mesh.log, "ib_write_bw")
    assert len(calls) == 2 and calls[0][-1] != peer and calls[1][-1] == peer  # server first, then client
    assert {"--report_gbits", "-D"} <= set(calls[1]) and logged(mesh.log, "ib_read_lat")[1][-1] == peer
    servers = [o for o in step.outputs if o.label.endswith(" server")]
    assert [o.role for o in servers] == ["peer", "peer"] and "Waiting for client" in servers[0].stdout
    [figure] = [s for s in step.samples if s.metric == RDMA_FIGURE]
    assert figure.value == pytest.approx(391.87) and figure.unit == "Gbit/s"
    verdicts = {
        claimed: [c for c in compare(Claims(rdma_gbps=claimed), result.samples) if c.check == "rdma"]
        for claimed in (400, 800, None)
    }
    assert verdicts[400][0].verdict is Verdict.passed and verdicts[800][0].verdict is Verdict.failed
    assert "网卡" in verdicts[800][0].reason_zh and verdicts[None][0].verdict is Verdict.info
    assert [c.unit for c in verdicts[400]] == ["Gbit/s", "us"]  # the read latency comes as information


def test_the_matrix_is_bounded_and_names_repeat_nowhere():
    node = Node("a", target=None, address="10.0.0.1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2 to 8"):
        pairs_of([node])
    many = [Node(f"n{index}", None, f"10.0.0.{index}") for index in range(MAX_NODES + 1)]  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2 to 8"):
        pairs_of(many)
    with pytest.raises(ValueError, match="repeat"):
        pairs_of([node, node])
    assert len(pairs_of(many[:MAX_NODES])) == MAX_NODES * (MAX_NODES - 1) // 2


@pytest.mark.slow
@needs_root
def test_a_cancelled_matrix_stops_between_pairs(cluster: list[Node], tmp_path: Path):
    calls = []
    result = run_matrix(
        cluster,
        short_params(tmp_path, iperf3_seconds=1),
        should_cancel=lambda: len(calls) > 0,
        on_pair=lambda *args: calls.append(args),
    )
    assert result.status == SuiteStatus.cancelled and len(result.pairs) == 1


def test_without_mpirun_the_collective_across_nodes_is_not_run_and_says_why(tmp_path: Path):
    """This machine has neither mpirun nor all_reduce_perf: the step names the launcher it lacks."""
    if shutil.which("mpirun"):
        missing_tool("this test needs a machine without mpirun")
    nodes = [Node("a", None, "10.0.0.1"), Node("b", None, "10.0.0.2")]  # type: ignore[arg-type]
    steps = cluster_steps(nodes, ("collective_cluster",))
    result = run_suite(LocalRunner(), steps, short_params(tmp_path))
    step = result.step("collective_cluster")
    assert step.status == StepStatus.not_installed and step.missing_tool == "mpirun"
    assert "mpirun" in step.error and step.outputs == []
    with pytest.raises(ValueError, match="unknown cluster steps"):
        cluster_steps([], ("nccl",))


def test_rdma_needs_a_peer(tmp_path: Path):
    result = run_suite(LocalRunner(), [Step("rdma", "rdma")], short_params(tmp_path))
    step = result.step("rdma")
    assert step.status == StepStatus.failed and "对端" in step.error and step.outputs == []
