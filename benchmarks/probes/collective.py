"""Collective bandwidth on one node: nccl-tests' all_reduce_perf over every GPU, else gpuvet's torch script;
across nodes: all_reduce_perf launched by the MPI launcher found on the target, over it and its peers.

Both print the nccl-tests table (benchmarks/probes/nccl.py reads it). A server with neither says so by name
instead of failing obscurely; the run is bounded by `collective_seconds` plus a grace period.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.messages import message as _
from benchmarks.probes import register_probe
from benchmarks.probes.base import TARGET, Probe, ProbeContext, ProbeFailed

TORCH_SCRIPT = (Path(__file__).parent.parent / "remote" / "allreduce_torch.py").read_text()
NO_GPU, NO_BENCHMARK = 3, 4
# $1 budget seconds, $2 max bytes, $3 the torch script. Prints which benchmark ran, then its table.
SCRIPT = (
    'secs="$1"; max="$2"; n=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU ")\n'
    f'if [ "$n" -lt 1 ]; then echo "### no GPU listed by nvidia-smi -L"; exit {NO_GPU}; fi\n'
    "if command -v all_reduce_perf >/dev/null 2>&1; then\n"
    '  echo "### nccl-tests all_reduce_perf on $n GPUs"\n'
    '  exec timeout -k 5 "$secs" all_reduce_perf -b 8 -e "$max" -f 2 -g "$n"\n'
    "fi\n"
    "if python3 -c 'import torch.distributed' >/dev/null 2>&1; then\n"
    '  f=$(mktemp --suffix=.py); printf "%s" "$3" > "$f"\n'
    '  echo "### gpuvet torch all_reduce on $n GPUs"\n'
    '  timeout -k 5 "$secs" python3 -m torch.distributed.run --standalone --nproc_per_node="$n" "$f" '
    '--max-bytes "$max" --seconds "$secs"; s=$?; rm -f "$f"; exit $s\n'
    "fi\n"
    f'echo "### neither nccl-tests (all_reduce_perf) nor PyTorch is installed"; exit {NO_BENCHMARK}\n'
)


@register_probe
class CollectiveProbe(Probe):
    """All-reduce bus bandwidth across the GPUs of the target (nccl-tests, else PyTorch)."""

    name = "collective"
    tool = "nvidia-smi"

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """nvidia-smi, timeout and mktemp on the target; the script looks for the benchmark itself."""
        return {TARGET: ("nvidia-smi", "timeout", "mktemp")}

    def run(self, ctx: ProbeContext) -> None:
        """One bounded run; the table is parsed later by the nccl parser."""
        params = ctx.params
        budget = str(params.collective_seconds)
        argv = ["sh", "-c", SCRIPT, "sh", budget, str(params.collective_max_bytes), TORCH_SCRIPT]
        result = ctx.execute(
            TARGET,
            "all_reduce",
            argv,
            timeout=params.collective_seconds + params.command_grace_s,
            parser="nccl",
            metadata={"max_bytes": params.collective_max_bytes},
        )
        first_line = result.stdout.strip().splitlines()[0] if result.stdout.strip() else ""
        if result.exit_code in (NO_GPU, NO_BENCHMARK):
            raise ProbeFailed(first_line.removeprefix("### ").strip())
        if result.timed_out:
            raise ProbeFailed(
                _("all-reduce 测试没有在 %(seconds)s 秒内完成", seconds=params.collective_seconds)
            )

    def estimated_seconds(self, params) -> float:
        """At most the budget."""
        return params.collective_seconds


# $1 budget seconds, $2 max bytes, $3 node count, then the nodes' addresses (the target's first).
# One rank per GPU (-g 1): -np is nodes x the GPUs the target lists, each host given as ADDRESS:GPUS.
CLUSTER_SCRIPT = (
    'secs="$1"; max="$2"; nodes="$3"; shift 3; n=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU ")\n'
    f'if [ "$n" -lt 1 ]; then echo "### no GPU listed by nvidia-smi -L"; exit {NO_GPU}; fi\n'
    'hosts=""; for h in "$@"; do hosts="$hosts${hosts:+,}$h:$n"; done\n'
    "extra=''; if mpirun --version 2>&1 | grep -q 'Open MPI'; then\n"
    "  extra='--allow-run-as-root -x PATH -x LD_LIBRARY_PATH'; fi\n"
    'echo "### nccl-tests all_reduce_perf over $nodes nodes x $n GPUs: mpirun -np $((nodes * n)) -H $hosts"\n'
    'exec timeout -k 5 "$secs" mpirun $extra -np "$((nodes * n))" -H "$hosts" '
    'all_reduce_perf -b 8 -e "$max" -f 2 -g 1\n'
)


@register_probe
class ClusterCollectiveProbe(Probe):
    """All-reduce across nodes: nccl-tests' all_reduce_perf launched by mpirun on the target over every node.

    Option `hosts`: the nodes' intranet addresses, the target's first. Without mpirun or all_reduce_perf on
    the target the step is not run and says which is missing (PyTorch is not launched across nodes).
    """

    name = "collective_cluster"
    tool = "mpirun"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.hosts = [str(host) for host in options.get("hosts") or []]

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """nvidia-smi, the MPI launcher and nccl-tests on the target (the launcher reaches the others)."""
        return {TARGET: ("mpirun", "all_reduce_perf", "nvidia-smi")}

    def prepare(self, ctx: ProbeContext) -> None:
        """At least two nodes, then the tools."""
        if len(self.hosts) < 2:
            raise ProbeFailed(_("跨节点 all-reduce 需要至少两台服务器的内网地址"))
        super().prepare(ctx)

    def run(self, ctx: ProbeContext) -> None:
        """One bounded mpirun; the table is parsed later by the nccl parser."""
        params = ctx.params
        argv = [
            "sh",
            "-c",
            CLUSTER_SCRIPT,
            "sh",
            str(params.collective_seconds),
            str(params.collective_max_bytes),
            str(len(self.hosts)),
            *self.hosts,
        ]
        result = ctx.execute(
            TARGET,
            "all_reduce across nodes",
            argv,
            timeout=params.collective_seconds + params.command_grace_s,
            parser="nccl",
            metadata={
                "max_bytes": params.collective_max_bytes,
                "launcher": "mpirun",
                "node_count": len(self.hosts),
            },
        )
        if result.exit_code == NO_GPU:
            raise ProbeFailed(_("nvidia-smi -L 没有列出 GPU：未运行跨节点 all-reduce"))
        if result.timed_out:
            raise ProbeFailed(
                _("跨节点 all-reduce 没有在 %(seconds)s 秒内完成", seconds=params.collective_seconds)
            )

    def estimated_seconds(self, params) -> float:
        """At most the budget."""
        return params.collective_seconds
