"""Multi-node runner overhead: gpuvet's intranet matrix against the same iperf3 commands over plain paramiko.

Usage (root, needs sshd, iperf3 and ip netns; about four minutes with the defaults):
    .venv/bin/python perf/matrix_perf.py [--nodes 3] [--iperf3-seconds 5] [--repeat 4]

Three nodes (network namespaces meshed by veth pairs, tests/bench_support/cluster.py), an sshd in each.
gpuvet's run (benchmarks.matrix.run_matrix: one connection per node, tool look-ups, the iperf3 probe per
pair, parsing) is timed against a replay of exactly the commands it ran (same argv, same order, the same
remote `timeout` wrapper, the iperf3 client retried while the server is not listening yet as the probe does),
each through plain paramiko exec on one connection per node, with the client's JSON loaded. After a warm-up,
the two run `--repeat` times, each going first every other time; the medians are compared.
Target: gpuvet / plain <= 1.10.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from benchmarks.matrix import MatrixResult, Node, run_matrix  # noqa: E402
from benchmarks.params import SuiteParams  # noqa: E402
from benchmarks.ssh import KILL_AFTER_S, SSHTarget, load_private_key, shell_join  # noqa: E402
from benchmarks.suites import SuiteStatus  # noqa: E402
from tests.bench_support.cluster import MeshCluster  # noqa: E402
from tests.bench_support.sshd import Sshd  # noqa: E402

TARGET = 1.10
REPLAY_TIMEOUT_S = 120  # the wrapper's limit in the replay (gpuvet's is per command; the text is alike)
CONNECT_ATTEMPTS, CONNECT_RETRY_S = 5, 0.3  # as benchmarks/probes/iperf3.py


def gpuvet_run(nodes: list[Node], params: SuiteParams) -> tuple[float, float, MatrixResult]:
    """Seconds gpuvet's matrix takes, of which inside its recorded commands, and its result."""
    started = time.monotonic()
    result = run_matrix(nodes, params)
    elapsed = time.monotonic() - started
    if result.status != SuiteStatus.succeeded:
        raise SystemExit(f"the matrix run failed: {result.error}")
    outputs = [o for _a, _b, run in result.pairs for probe in run.probes for o in probe.outputs]
    return elapsed, sum(output.duration for output in outputs), result


Command = tuple[str, list[str], bool, str]


def recorded_commands(result: MatrixResult) -> list[Command]:
    """(host, argv, is the iperf3 client, recorded stdout) of every command the run recorded, in order,
    retried attempts left out."""
    commands = []
    for _source, _target, run in result.pairs:
        for output in (o for probe in run.probes for o in probe.outputs):
            if not output.metadata.get("retried"):
                commands.append((output.host, list(output.argv), output.parser == "iperf3", output.stdout))
    return commands


def _exec(client: Any, command: str) -> tuple[int, str]:
    """Run one shell command on a paramiko client; (exit status, stdout)."""
    channel = client.get_transport().open_session()
    channel.exec_command(command)
    channel.shutdown_write()
    chunks = []
    while True:
        data = channel.recv(65536)
        if not data:
            break
        chunks.append(data)
    status = channel.recv_exit_status()
    channel.close()
    return status, b"".join(chunks).decode("utf-8", "replace")


def plain_replay(targets: dict[str, SSHTarget], commands: list[Command]) -> tuple[float, float]:
    """Seconds the same commands take through plain paramiko (one connection per node), of which inside
    the commands."""
    import paramiko

    started = time.monotonic()
    with ExitStack() as stack:
        clients = {}
        for host, target in targets.items():
            client = stack.enter_context(paramiko.SSHClient())
            client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
            client.connect(
                target.host,
                port=target.port,
                username=target.username,
                pkey=load_private_key(target.private_key or ""),
                allow_agent=False,
                look_for_keys=False,
            )
            clients[host] = client
        workdirs: dict[str, str] = {}  # the run's temp dir -> the replay's
        inside = 0.0
        for host, recorded, is_client, recorded_out in commands:
            argv = [_renamed(arg, workdirs) for arg in recorded]
            line = f"timeout -k {KILL_AFTER_S} {REPLAY_TIMEOUT_S} {shell_join(argv)}"
            for _attempt in range(CONNECT_ATTEMPTS if is_client else 1):
                command_started = time.monotonic()
                status, out = _exec(clients[host], line)
                inside += time.monotonic() - command_started
                if not is_client or "connection refused" not in out.lower():
                    break
                time.sleep(CONNECT_RETRY_S)
            if status != 0:
                raise SystemExit(f"the replay of {line!r} on {host} exited with {status}: {out[-300:]}")
            if is_client:
                json.loads(out)
            if argv[:2] == ["mktemp", "-d"]:
                workdirs[recorded_out.strip()] = out.strip()
    return time.monotonic() - started, inside


def _renamed(arg: str, workdirs: dict[str, str]) -> str:
    for old, new in workdirs.items():
        arg = arg.replace(old, new)
    return arg


def main() -> None:
    """Build the mesh, run both alternately, print each run, the medians and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--iperf3-seconds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=4)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="matrix-perf-") as scratch,
        MeshCluster(args.nodes) as mesh,
        ExitStack() as servers,
    ):
        nodes = []
        for node in mesh.nodes:
            sshd = servers.enter_context(
                Sshd(Path(scratch) / node.name, address=node.address, port=2222, netns=node.namespace)
            )
            target = SSHTarget(
                node.address,
                2222,
                private_key=sshd.user_key_text,
                host_key_fingerprint=sshd.host_fingerprint,
            )
            nodes.append(Node(node.name, target, node.intranet_address))
        params = SuiteParams(iperf3_seconds=args.iperf3_seconds, storage_path=scratch)
        targets = {node.target.host: node.target for node in nodes}
        warm_up, _inside, result = gpuvet_run(nodes, params)  # its commands are the first replay's
        print(f"warm-up: gpuvet {warm_up:.2f} s (not counted)")
        gpuvet: list[tuple[float, float]] = []
        plain: list[tuple[float, float]] = []
        for repeat in range(args.repeat):  # alternately first, so that neither gains from going second
            commands = recorded_commands(result)
            if repeat % 2:
                plain.append(plain_replay(targets, commands))
            elapsed, inside, result = gpuvet_run(nodes, params)
            gpuvet.append((elapsed, inside))
            if not repeat % 2:
                plain.append(plain_replay(targets, commands))
            print(
                f"run {repeat + 1}: gpuvet {elapsed:.2f} s ({elapsed - inside:.2f} outside its commands), "
                f"plain paramiko {plain[-1][0]:.2f} s ({plain[-1][0] - plain[-1][1]:.2f} outside)"
            )
    pairs = args.nodes * (args.nodes - 1) // 2
    totals = statistics.median(t for t, _i in gpuvet), statistics.median(t for t, _i in plain)
    outside = statistics.median(t - i for t, i in gpuvet), statistics.median(t - i for t, i in plain)
    ratio = totals[0] / totals[1]
    print(f"{args.nodes} nodes, {pairs} pairs, iperf3 {args.iperf3_seconds} s each, {args.repeat} runs each")
    print(f"gpuvet matrix   median {totals[0]:.2f} s, {outside[0]:.2f} s outside its commands")
    print(f"plain paramiko  median {totals[1]:.2f} s, {outside[1]:.2f} s outside its commands")
    print(f"ratio {ratio:.3f} (target <= {TARGET:.2f}): {'OK' if ratio <= TARGET else 'OVER'}")


if __name__ == "__main__":
    main()
