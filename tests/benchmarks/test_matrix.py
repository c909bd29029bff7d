"""The intranet matrix over three nodes in network namespaces, one link shaped: the matrix finds it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from benchmarks.compare import Claims, Verdict, compare
from benchmarks.matrix import MAX_NODES, Node, pairs_of, run_matrix
from benchmarks.suites import StepStatus, SuiteStatus
from tests.bench_support.cluster import MeshCluster
from tests.bench_support.netns import netns_supported
from tests.bench_support.sshd import Sshd
from tests.benchmarks.conftest import needs_root, short_params, target_for
from tests.conftest import missing_tool

SHAPED_MBIT = 100


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Node]]:
    """Three nodes, each an sshd in its own namespace; the link between node2 and node3 is shaped."""
    supported, reason = netns_supported()
    if not supported:
        missing_tool(reason)
    base = tmp_path_factory.mktemp("cluster")
    with MeshCluster(3, shaped={(1, 2): SHAPED_MBIT}) as mesh, ExitStack() as servers:
        nodes = []
        for node in mesh.nodes:
            sshd = servers.enter_context(
                Sshd(base / node.name, address=node.address, port=2222, netns=node.namespace)
            )
            nodes.append(Node(node.name, target_for(sshd), node.intranet_address))
        yield nodes


@pytest.mark.slow
@needs_root
def test_the_matrix_finds_the_shaped_link(cluster: list[Node], tmp_path: Path):
    seen: list[tuple[str, str]] = []
    result = run_matrix(
        cluster,
        short_params(tmp_path, iperf3_seconds=2),
        on_pair=lambda a, b, done, total: seen.append((a, b)),
    )
    assert result.status == SuiteStatus.succeeded, result.error
    assert seen == [("node1", "node2"), ("node1", "node3"), ("node2", "node3")]
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
