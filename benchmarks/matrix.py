"""The intranet matrix: iperf3 between every pair of N trial servers of one offer, over one connection each,
then the cluster steps: all-reduce across every node (mpirun on the first) and RDMA between the first two.

A cluster is only as fast as its slowest link: one node on a degraded port or a different switch drags
every all-reduce down. Each pair is measured once (the first node as client, the second as server) with
the same probe a single run uses; the number of nodes is bounded, and so is every test.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from itertools import combinations

from benchmarks.params import SuiteParams
from benchmarks.sample import Sample
from benchmarks.ssh import SSHError, SSHRunner, SSHTarget
from benchmarks.ssh_messages import ssh_message
from benchmarks.suites import ProbeResult, Progress, Step, SuiteResult, SuiteStatus, run_suite

MAX_NODES = 8  # 28 pairs: with 10 s tests, under five minutes
STEP = Step("iperf3", "iperf3")
PAIR_TOOLS = ("timeout", "iperf3", "mktemp")  # looked up on every node at once before the first pair
CLUSTER_STEPS = ("collective_cluster", "rdma")  # after the pairs, on the first node (the second its peer)


def pair_step(number: int) -> str:
    """The stored step name of the `number`-th pair (from 1)."""
    return f"pair_{number}"


def cluster_steps(nodes: list[Node], names: tuple[str, ...] = CLUSTER_STEPS) -> list[Step]:
    """The cluster steps to run: collective over every node's intranet address, RDMA first -> second."""
    known = {
        "collective_cluster": Step(
            "collective_cluster", "collective_cluster", {"hosts": [n.address for n in nodes]}
        ),
        "rdma": Step("rdma", "rdma"),
    }
    unknown = sorted(set(names) - set(known))
    if unknown:
        raise ValueError(f"unknown cluster steps {unknown}; known: {sorted(known)}")
    return [known[name] for name in names]


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
    cluster: SuiteResult | None = None  # the cluster steps, run on the first node
    status: str = SuiteStatus.running
    error: str | None = None

    @property
    def samples(self) -> list[Sample]:
        """Each pair's samples with `from` and `to` (node names) in their metadata, then the cluster's."""
        return [
            sample.with_metadata(**{"from": source, "to": target, "matrix": True})
            for source, target, result in self.pairs
            for sample in result.samples
        ] + (self.cluster.samples if self.cluster is not None else [])

    @property
    def missing_tools(self) -> set[str]:
        """Tools that steps found missing on any node."""
        runs = [result for _a, _b, result in self.pairs] + ([self.cluster] if self.cluster else [])
        return {tool for run in runs for tool in run.missing_tools}

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
    cluster: tuple[str, ...] = (),
    on_pair: Callable[[str, str, int, int], None] | None = None,
    on_step: Callable[[str, ProbeResult], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
) -> MatrixResult:
    """Connect to every node (all at once), run iperf3 for each pair in turn, then the `cluster` steps (of
    CLUSTER_STEPS) on the first node with the second as its peer; SSH failures end the run.

    `on_step(name, result)` gets each finished step: `pair_N` (samples tagged with both ends) or a
    cluster step.
    """
    params = params or SuiteParams()
    cancelled = should_cancel or (lambda: False)
    pairs = pairs_of(nodes)
    steps = cluster_steps(nodes, cluster)
    result = MatrixResult(nodes=[node.name for node in nodes])
    with ExitStack() as stack:
        runners, failures = _connect_all(nodes, stack)
        if failures:
            result.status, result.error = SuiteStatus.failed, "; ".join(failures)
            return result
        for done, (client, server) in enumerate(pairs):
            if cancelled():
                result.status = SuiteStatus.cancelled
                return result
            if on_pair is not None:
                on_pair(client.name, server.name, done, len(pairs))
            pair_params = params.model_copy(update={"peer_address": server.address})
            run = run_suite(runners[client.name], [STEP], pair_params, peer=runners[server.name])
            tags = {"from": client.name, "to": server.name, "matrix": True}
            for probe in run.probes:
                probe.samples = [sample.with_metadata(**tags) for sample in probe.samples]
            result.pairs.append((client.name, server.name, run))
            if on_step is not None:
                on_step(pair_step(done + 1), run.probes[0])
            if run.status == SuiteStatus.failed:
                result.status, result.error = (
                    SuiteStatus.failed,
                    f"{client.name} -> {server.name}: {run.error}",
                )
                return result
        if steps and not cancelled():
            first, second = nodes[0], nodes[1]
            result.cluster = run_suite(
                runners[first.name],
                steps,
                params.model_copy(update={"peer_address": second.address}),
                peer=runners[second.name],
                on_progress=_finished_steps(on_step),
                should_cancel=cancelled,
            )
            if result.cluster.status == SuiteStatus.failed:
                result.status, result.error = SuiteStatus.failed, f"{first.name}: {result.cluster.error}"
                return result
    result.status = SuiteStatus.cancelled if cancelled() else SuiteStatus.succeeded
    return result


def _ready(target: SSHTarget) -> SSHRunner:
    """A connected runner that already knows whether the pairs' tools are there (one round trip)."""
    runner = SSHRunner(target).connect()
    try:
        runner.check_tools(PAIR_TOOLS)
    except BaseException:
        runner.close()
        raise
    return runner


def _connect_all(nodes: list[Node], stack: ExitStack) -> tuple[dict[str, SSHRunner], list[str]]:
    """Connect to every node at once (and look up its tools); (runners by name, 'node: why' failures)."""
    runners: dict[str, SSHRunner] = {}
    failures: list[str] = []
    with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
        futures = [(node, pool.submit(_ready, node.target)) for node in nodes]
    for node, future in futures:
        try:
            runners[node.name] = stack.enter_context(future.result())
        except SSHError as exc:
            failures.append(f"{node.name}: {ssh_message(exc)}")
    return runners, failures


def _finished_steps(on_step: Callable[[str, ProbeResult], None] | None) -> Callable[[Progress], None] | None:
    """A run_suite progress listener that hands each finished step to `on_step`."""
    if on_step is None:
        return None

    def listen(progress: Progress) -> None:
        if progress.event == "finished" and progress.step is not None:
            on_step(progress.step, progress.result.step(progress.step))

    return listen


def slow_links(throughput: dict[tuple[str, str], float], share: float) -> list[tuple[str, str, float, float]]:
    """(client, server, Mbit/s, median) of the pairs below `share` x the median of all pairs."""
    if len(throughput) < 2:
        return []
    median = statistics.median(throughput.values())
    return [(a, b, value, median) for (a, b), value in throughput.items() if value < share * median]
