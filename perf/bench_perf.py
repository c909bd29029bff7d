"""Benchmark-runner performance: gpuvet's quick suite against the same commands over plain OpenSSH.

Usage (root, needs sshd, iperf3, fio; about a minute with the defaults):
    .venv/bin/python perf/bench_perf.py [--iperf3-seconds 3] [--fio-seconds 3] [--servers 4] [--repeat 1]

1. Overhead: the quick suite through gpuvet (paramiko, one connection, tool checks, parsing) against a
   replay of exactly the commands it ran (same argv, same order, same remote `timeout` wrapper; the
   iperf3 client and ping run locally as in gpuvet) through the `ssh` client: once with a new connection
   per command, as a script would, and once multiplexed over one ControlMaster connection (the fairest
   baseline). Target: gpuvet / ssh <= 1.10.
2. Parallel: four trial servers (four sshd on loopback, each with its own iperf3 port and storage dir)
   run the quick suite at once, each in its own thread as the job queue would. Target: wall time
   <= 1.3 x one server's.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from benchmarks.params import SuiteParams  # noqa: E402
from benchmarks.ssh import KILL_AFTER_S, SSHTarget  # noqa: E402
from benchmarks.suites import SuiteResult, SuiteStatus, run_on_server  # noqa: E402
from tests.bench_support.sshd import Sshd, free_port  # noqa: E402

TARGETS = {"overhead": 1.10, "parallel": 1.3}


@dataclass
class Server:
    """One trial server for the benchmark: its sshd and where its fio files go."""

    sshd: Sshd
    storage: Path

    def target(self) -> SSHTarget:
        """gpuvet's view of it."""
        return SSHTarget(
            "127.0.0.1",
            self.sshd.port,
            private_key=self.sshd.user_key_text,
            host_key_fingerprint=self.sshd.host_fingerprint,
        )


def params_for(args: argparse.Namespace, storage: Path) -> SuiteParams:
    """Quick-suite parameters, shortened as asked."""
    return SuiteParams(
        iperf3_seconds=args.iperf3_seconds,
        iperf3_port=free_port(),
        fio_seconds=args.fio_seconds,
        fio_size_mib=args.fio_size_mib,
        ping_count=args.ping_count,
        storage_path=str(storage),
    )


def run_gpuvet(server: Server, args: argparse.Namespace) -> tuple[float, SuiteResult]:
    """Wall time of the quick suite through gpuvet, and its result."""
    started = time.perf_counter()
    result = run_on_server(server.target(), "quick", params_for(args, server.storage))
    elapsed = time.perf_counter() - started
    if result.status != SuiteStatus.succeeded or any(p.status != "ok" for p in result.probes):
        raise SystemExit(f"gpuvet run failed: {result.error or [(p.step, p.error) for p in result.probes]}")
    return elapsed, result


class PlainSsh:
    """Runs recorded commands with the OpenSSH client (optionally over one multiplexed connection)."""

    def __init__(self, server: Server, workdir: Path, *, multiplex: bool) -> None:
        known_hosts = workdir / "known_hosts"
        public = server.sshd.host_key.with_suffix(".pub").read_text().split()
        known_hosts.write_text(f"[127.0.0.1]:{server.sshd.port} {public[0]} {public[1]}\n")
        self.base = [
            "ssh",
            "-p",
            str(server.sshd.port),
            "-i",
            str(server.sshd.user_key),
            "-o",
            "BatchMode=yes",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            f"UserKnownHostsFile={known_hosts}",
            "-o",
            "LogLevel=ERROR",
        ]
        if multiplex:
            self.base += [
                "-o",
                "ControlMaster=auto",
                "-o",
                f"ControlPath={workdir}/cm-%p",
                "-o",
                "ControlPersist=60",
            ]
        self.base.append("root@127.0.0.1")
        self.multiplex = multiplex

    def remote(self, command_line: str, timeout: float) -> str:
        """Run shell text on the server; its stdout."""
        completed = subprocess.run(
            [*self.base, command_line], capture_output=True, text=True, timeout=timeout + KILL_AFTER_S + 30
        )
        return completed.stdout

    def close(self) -> None:
        """Stop the control master."""
        if self.multiplex:
            subprocess.run([*self.base[:-1], "-O", "exit", self.base[-1]], capture_output=True, timeout=10)


def replay(result: SuiteResult, ssh: PlainSsh) -> float:
    """Run the commands gpuvet ran, in order, over `ssh`; wall time. Temp paths are mapped to new ones."""
    renamed: dict[str, str] = {}
    started = time.perf_counter()
    for probe in result.probes:
        for output in probe.outputs:
            argv = list(output.argv)
            for old, new in renamed.items():
                argv = [arg.replace(old, new) for arg in argv]
            timeout = 60 + float(result.params["iperf3_seconds"]) + float(result.params["fio_seconds"])
            if output.role == "local":
                stdout = subprocess.run(argv, capture_output=True, text=True, timeout=timeout).stdout
            else:
                line = f"timeout -k {KILL_AFTER_S} {timeout:g} {shlex.join(argv)}"
                stdout = ssh.remote(line, timeout)
            if argv[0] == "mktemp":
                renamed[output.stdout.strip()] = stdout.strip()
    return time.perf_counter() - started


def parallel(servers: list[Server], args: argparse.Namespace) -> tuple[float, list[SuiteResult]]:
    """Wall time of the quick suite on all servers at once, and each server's result."""
    results: list[SuiteResult | None] = [None] * len(servers)
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            results[index] = run_gpuvet(servers[index], args)[1]
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - reported after join
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(index,)) for index in range(len(servers))]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    if errors:
        raise SystemExit(f"parallel run failed: {errors[0]}")
    return time.perf_counter() - started, [result for result in results if result is not None]


def main() -> None:
    """Measure and print the figures side by side."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iperf3-seconds", type=int, default=3)
    parser.add_argument("--fio-seconds", type=int, default=3)
    parser.add_argument("--fio-size-mib", type=int, default=64)
    parser.add_argument("--ping-count", type=int, default=5)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1, help="repeat each measurement, report the median")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="gpuvet-bench-perf-") as tmp:
        base = Path(tmp)
        servers = []
        for index in range(args.servers):
            storage = base / f"storage{index}"
            storage.mkdir()
            servers.append(Server(Sshd(base / f"sshd{index}").start(), storage))
        try:
            one = servers[0]
            gpuvet_times, plain_times, muxed_times = [], [], []
            for _ in range(args.repeat):
                elapsed, result = run_gpuvet(one, args)
                gpuvet_times.append(elapsed)
                ssh = PlainSsh(one, base, multiplex=False)
                plain_times.append(replay(result, ssh))
                muxed = PlainSsh(one, base, multiplex=True)
                try:
                    muxed.remote("true", 10)  # open the master connection outside the timing
                    muxed_times.append(replay(result, muxed))
                finally:
                    muxed.close()
            commands = sum(len(probe.outputs) for probe in result.probes)
            gpuvet, plain, muxed_time = (
                statistics.median(t) for t in (gpuvet_times, plain_times, muxed_times)
            )
            walls = []
            for _ in range(args.repeat):
                wall, together = parallel(servers, args)
                walls.append(wall)
            wall = statistics.median(walls)
        finally:
            for server in servers:
                server.sshd.stop()

    print(
        f"quick suite: iperf3 {args.iperf3_seconds} s, fio {args.fio_seconds} s / {args.fio_size_mib} MiB, "
        f"ping {args.ping_count}; {commands} recorded commands; median of {args.repeat}"
    )
    print(f"{'':42}{'seconds':>10}{'gpuvet / it':>14}")
    print(f"{'gpuvet (paramiko, one connection)':42}{gpuvet:10.2f}{'':>14}")
    print(f"{'ssh, one connection per command':42}{plain:10.2f}{gpuvet / plain:14.2f}")
    print(f"{'ssh, multiplexed (ControlMaster)':42}{muxed_time:10.2f}{gpuvet / muxed_time:14.2f}")
    ratio = gpuvet / muxed_time
    verdict = "ok" if ratio <= TARGETS["overhead"] else "OVER TARGET"
    print(f"overhead vs the fairest baseline: {ratio:.2f} (target <= {TARGETS['overhead']:.2f}) {verdict}")
    print()
    print(f"{'':42}{'seconds':>10}{'x one server':>14}")
    print(f"{'one server':42}{gpuvet:10.2f}{1.0:14.2f}")
    print(f"{f'{args.servers} servers in parallel (wall)':42}{wall:10.2f}{wall / gpuvet:14.2f}")
    print()
    print(f"{'step (last repeat)':42}{'one server':>12}{'parallel, slowest':>19}")
    for index, probe in enumerate(result.probes):
        slowest = max(run.probes[index].duration for run in together)
        print(f"{probe.step:42}{probe.duration:12.2f}{slowest:19.2f}")
    verdict = "ok" if wall / gpuvet <= TARGETS["parallel"] else "OVER TARGET"
    print(f"parallel: {wall / gpuvet:.2f} x one server (target <= {TARGETS['parallel']:.1f}) {verdict}")


if __name__ == "__main__":
    main()
