"""The intranet matrix: iperf3 between every pair of N trial servers of one offer, over one connection each.

A cluster is only as fast as its slowest link: one node on a degraded port or a different switch drags
every all-reduce down. Each pair is measured once (the first node as client, the second as server) with
the same probe a single run uses; the number of nodes is bounded, and so is every test.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from benchmarks.params import SuiteParams
from benchmarks.sample import Sample
from benchmarks.ssh import SSHError, SSHRunner, SSHTarget
from benchmarks.ssh_messages import ssh_message
from benchmarks.suites import Step, SuiteResult, SuiteStatus, run_suite

MAX_NODES = 8  # 28 pairs: with 10 s tests, under five minutes
STEP = Step("iperf3", "iperf3")


@dataclass(frozen=True)
class Node:
    """One trial server: how gpuvet reaches it, and the intranet address the other nodes use."""

    name: str
    target: SSHTarget
    address: str


@dataclass
class MatrixResult:
    """Every pair's run, in order, and the matrix as samples tagged with both ends."""

    nodes: list[str]
    pairs: list[tuple[str, str, SuiteResult]] = field(default_factory=list)
    status: str = SuiteStatus.running
    error: str | None = None

    @property
    def samples(self) -> list[Sample]:
        """Each pair's samples with `from` and `to` (node names) in their metadata."""
        return [
            sample.with_metadata(**{"from": source, "to": target, "matrix": True})
            for source, target, result in self.pairs
            for sample in result.samples
        ]

    def throughput(self) -> dict[tuple[str, str], float]:
        """Received Mbit/s of each pair that finished."""
        return {
            (source, target): float(sample.value)
            for source, target, result in self.pairs
            for sample in result.samples
            if sample.metric == "throughput"
        }


def pairs_of(nodes: list[Node]) -> list[tuple[Node, Node]]:
    """Every unordered pair, client first; refuses more than MAX_NODES nodes or duplicate names."""
    names = [node.name for node in nodes]
    if len(set(names)) != len(names):
        raise ValueError(f"node names repeat: {names}")
    if not 2 <= len(nodes) <= MAX_NODES:
        raise ValueError(f"the matrix needs 2 to {MAX_NODES} nodes, not {len(nodes)}")
    return list(combinations(nodes, 2))


def run_matrix(
    nodes: list[Node],
    params: SuiteParams | None = None,
    *,
    on_pair: Callable[[str, str, int, int], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> MatrixResult:
    """Connect to every node once, then run iperf3 for each pair in turn; SSH failures end the run."""
    params = params or SuiteParams()
    cancelled = should_cancel or (lambda: False)
    pairs = pairs_of(nodes)
    result = MatrixResult(nodes=[node.name for node in nodes])
    with ExitStack() as stack:
        runners: dict[str, Any] = {}
        for node in nodes:
            try:
                runners[node.name] = stack.enter_context(SSHRunner(node.target))
            except SSHError as exc:
                result.status, result.error = SuiteStatus.failed, f"{node.name}: {ssh_message(exc)}"
                return result
        for done, (client, server) in enumerate(pairs):
            if cancelled():
                result.status = SuiteStatus.cancelled
                return result
            if on_pair is not None:
                on_pair(client.name, server.name, done, len(pairs))
            pair_params = params.model_copy(update={"peer_address": server.address})
            run = run_suite(runners[client.name], [STEP], pair_params, peer=runners[server.name])
            result.pairs.append((client.name, server.name, run))
    result.status = SuiteStatus.succeeded
    return result


def slow_links(throughput: dict[tuple[str, str], float], share: float) -> list[tuple[str, str, float, float]]:
    """(client, server, Mbit/s, median) of the pairs below `share` x the median of all pairs."""
    if len(throughput) < 2:
        return []
    median = statistics.median(throughput.values())
    return [(a, b, value, median) for (a, b), value in throughput.items() if value < share * median]
