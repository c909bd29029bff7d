"""Throughput: an iperf3 server on the peer (or on the target), the client on the target (or here), JSON out.

Without a peer the server runs on the target and the client on the gpuvet host, which measures the
public path the provider sells (public_mbps); with a peer, target -> peer measures the intranet link.
The server is started per test as a one-off daemon with a pidfile and always stopped afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from benchmarks.messages import message as _
from benchmarks.probes import UploadTool, register_parser, register_probe, register_upload
from benchmarks.probes._json import dig, load_json_object, number
from benchmarks.probes.base import LOCAL, PEER, TARGET, Probe, ProbeContext, ProbeFailed, check_result
from benchmarks.probes.iperf3_text import looks_like_text, parse_text
from benchmarks.sample import ParseError, Sample, ToolError

TOOL = "iperf3"
CONNECT_ATTEMPTS = 5  # the daemon may not listen yet when the client starts
CONNECT_RETRY_S = 0.3
# Kill the pid in the pidfile only if it is still an iperf3 process (pids are reused).
STOP_SERVER = (
    'f="$1"; [ -f "$f" ] || exit 0; p=$(cat "$f" 2>/dev/null); '
    '[ -n "$p" ] && [ "$(cat /proc/"$p"/comm 2>/dev/null)" = iperf3 ] && kill "$p" 2>/dev/null; '
    'rm -f "$f"; exit 0'
)
REMOVE_DIR = 'case "$1" in */gpuvet-iperf3.*) rm -rf -- "$1";; esac'


@register_parser(
    "iperf3", accepts=_("iperf3 3.0 及以上版本的 -J 输出，或普通文本报告（客户端或服务器端），TCP 或 UDP")
)
def parse_output(text: str) -> list[Sample]:
    """Receiver throughput, sender throughput, retransmits and per-interval throughput (Mbit/s)."""
    if looks_like_text(text):
        return parse_text(text)
    data = load_json_object(text, TOOL)
    if data.get("error"):
        raise ToolError(TOOL, str(data["error"]))
    test = dig(data, "start", "test_start", tool=TOOL, expected=dict)
    end = dig(data, "end", tool=TOOL, expected=dict)
    udp = str(test.get("protocol", "")).upper() == "UDP"
    if "sum_received" not in end and udp and isinstance(end.get("sum"), dict):
        end = {**end, "sum_received": end["sum"]}  # iperf3 before 3.2 sums a UDP test in end.sum only
    if "sum_received" not in end:
        raise ParseError(TOOL, _("缺少 end.sum_received：测试没有完成（输出被截断？）"))
    metadata: dict[str, Any] = {
        "tool_version": data["start"].get("version"),
        "protocol": test.get("protocol"),
        "streams": test.get("num_streams"),
        "reverse": bool(test.get("reverse")),
        "bidirectional": bool(test.get("bidirectional")) or "sum_received_bidir_reverse" in end,
        "duration": test.get("duration"),
        "remote_host": (data["start"].get("connecting_to") or {}).get("host"),
    }
    received = number(end, "sum_received", "bits_per_second", tool=TOOL)
    samples = [
        Sample("throughput", received / 1e6, "Mbit/s", dict(metadata)),
    ]
    if udp:
        samples += _udp_samples(end.get("sum") or end["sum_received"], metadata)
    if isinstance(end.get("sum_received_bidir_reverse"), dict):  # --bidir (iperf 3.7 on): the other way
        back = number(end, "sum_received_bidir_reverse", "bits_per_second", tool=TOOL)
        samples.append(Sample("throughput_reverse", back / 1e6, "Mbit/s", dict(metadata)))
    if "sum_sent" in end:
        sent = number(end, "sum_sent", "bits_per_second", tool=TOOL)
        samples.append(Sample("throughput_sender", sent / 1e6, "Mbit/s", dict(metadata)))
        if "retransmits" in end["sum_sent"]:
            retransmits = number(end, "sum_sent", "retransmits", tool=TOOL)
            samples.append(Sample("retransmits", retransmits, "count", dict(metadata)))
    samples += _interval_samples(dig(data, "intervals", tool=TOOL, expected=list), metadata)
    return samples


def _interval_samples(intervals: list[Any], metadata: dict[str, Any]) -> list[Sample]:
    """Per-interval throughput of the measured intervals (the -O warm-up ones are marked omitted)."""
    samples = []
    totals = [dig(interval, "sum", tool=TOOL, expected=dict) for interval in intervals]
    for index, total in enumerate(total for total in totals if total.get("omitted") is not True):
        extra = {
            "interval": index,
            "start": number(total, "start", tool=TOOL),
            "end": number(total, "end", tool=TOOL),
        }
        if "retransmits" in total:
            extra["retransmits"] = total["retransmits"]
        bits = number(total, "bits_per_second", tool=TOOL)
        samples.append(Sample("throughput_interval", bits / 1e6, "Mbit/s", {**metadata, **extra}))
    return samples


def _udp_samples(total: dict[str, Any], metadata: dict[str, Any]) -> list[Sample]:
    """Jitter (ms) and datagram loss (%) of a UDP test."""
    samples = []
    if "jitter_ms" in total:
        samples.append(Sample("udp_jitter", number(total, "jitter_ms", tool=TOOL), "ms", dict(metadata)))
    if "lost_percent" in total:
        samples.append(Sample("udp_loss", number(total, "lost_percent", tool=TOOL), "%", dict(metadata)))
    return samples


def uploaded_step(samples: Sequence[Sample]) -> str:
    """The suite step an uploaded test stands for: iperf3_reverse (-R), iperf3_parallel (-P), else iperf3."""
    first = next((sample for sample in samples if sample.metric == "throughput"), None)
    if first is not None and first.metadata.get("reverse"):
        return "iperf3_reverse"
    if first is not None and (first.metadata.get("streams") or 1) > 1:
        return "iperf3_parallel"
    return "iperf3"


def _refused(stdout: str) -> bool:
    lowered = stdout.lower()
    return '"error"' in lowered and "connection refused" in lowered


@register_probe
class Iperf3Probe(Probe):
    """Options: parallel (bool), reverse (bool), purpose ("throughput" or "stability": repeated)."""

    name = "iperf3"
    tool = TOOL

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.parallel = bool(options.get("parallel", False))
        self.reverse = bool(options.get("reverse", False))
        self.purpose = options.get("purpose", "throughput")
        self.workdir: str | None = None
        self.server_started = False

    def _roles(self, ctx: ProbeContext) -> tuple[str, str, str, str]:
        """(server role, client role, address the client connects to, path name)."""
        if ctx.peer is not None:
            return PEER, TARGET, ctx.peer_address, "intranet"
        return TARGET, LOCAL, ctx.target_address, "public"

    def _seconds(self, ctx: ProbeContext) -> int:
        stability = self.purpose == "stability"
        return ctx.params.stability_test_seconds if stability else ctx.params.iperf3_seconds

    def _pidfile(self) -> str:
        return f"{self.workdir}/server.pid"

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """iperf3 on both ends, mktemp on the server end."""
        server, client, _address, _path = self._roles(ctx)
        return {client: (TOOL,), server: (TOOL, "mktemp")}

    def prepare(self, ctx: ProbeContext) -> None:
        """iperf3 on both ends; a private temp dir on the server end for the pidfile."""
        super().prepare(ctx)
        server = self._roles(ctx)[0]
        result = ctx.execute(
            server, "iperf3 workdir", ["mktemp", "-d", "-t", "gpuvet-iperf3.XXXXXXXX"], timeout=15
        )
        check_result(result, _("iperf3 服务端上的 mktemp"))
        self.workdir = result.stdout.strip()
        if "gpuvet-iperf3." not in self.workdir:
            raise ProbeFailed(_("mktemp 输出了意外的路径：%(path)s", path=repr(self.workdir)))

    def run(self, ctx: ProbeContext) -> None:
        """One test, or `stability_repeats` tests `stability_interval_s` apart for the stability suite."""
        repeats = ctx.params.stability_repeats if self.purpose == "stability" else 1
        for repeat in range(repeats):
            if repeat and ctx.sleep(ctx.params.stability_interval_s):
                return
            if ctx.should_cancel():
                return
            if repeats > 1:
                ctx.on_detail(f"{repeat + 1}/{repeats}")
            try:
                self._one_test(ctx, repeat)
            finally:
                self._stop_server(ctx)

    def _one_test(self, ctx: ProbeContext, repeat: int) -> None:
        params = ctx.params
        server, client, address, path = self._roles(ctx)
        seconds = self._seconds(ctx)
        port = str(params.iperf3_port)
        start = ["iperf3", "-s", "-1", "-D", "-p", port, "--pidfile", self._pidfile()]
        self.server_started = True  # even a failed start may have left a daemon behind
        check_result(
            ctx.execute(server, "iperf3 server start", start, timeout=15), "starting the iperf3 server"
        )
        argv = ["iperf3", "-c", address, "-p", port, "-t", str(seconds), "-J"]
        if self.parallel:
            argv += ["-P", str(params.iperf3_parallel)]
        if self.reverse:
            argv.append("-R")
        metadata = {
            "path": path,
            "purpose": self.purpose,
            "repeat": repeat,
            "parallel": self.parallel,
            "reverse": self.reverse,
            "server_role": server,
            "client_role": client,
        }
        for attempt in range(CONNECT_ATTEMPTS):
            result = ctx.execute(
                client,
                f"iperf3 {'parallel ' if self.parallel else ''}{'reverse ' if self.reverse else ''}{path}",
                argv,
                timeout=seconds + 10 + params.command_grace_s,
                parser="iperf3",
                metadata=metadata,
            )
            if not _refused(result.stdout) or attempt == CONNECT_ATTEMPTS - 1:
                break
            ctx.outputs[-1].parser = None  # a retried attempt: kept verbatim, not counted
            ctx.outputs[-1].metadata["retried"] = True
            if ctx.sleep(CONNECT_RETRY_S):
                return
        if result.timed_out:
            raise ProbeFailed(_("iperf3 客户端在 %(seconds).0f 秒后超时", seconds=result.duration))

    def _stop_server(self, ctx: ProbeContext) -> None:
        if self.workdir and self.server_started:
            server = self._roles(ctx)[0]
            ctx.execute(
                server, "iperf3 server stop", ["sh", "-c", STOP_SERVER, "sh", self._pidfile()], timeout=15
            )
            self.server_started = False

    def cleanup(self, ctx: ProbeContext) -> None:
        """Stop the server if it still runs and remove the temp dir."""
        if not self.workdir:
            return
        server = self._roles(ctx)[0]
        with contextlib.suppress(Exception):
            self._stop_server(ctx)
        ctx.execute(
            server, "iperf3 workdir removal", ["sh", "-c", REMOVE_DIR, "sh", self.workdir], timeout=15
        )
        self.workdir = None

    def estimated_seconds(self, params) -> float:
        """Test length (times repeats and pauses for stability)."""
        if self.purpose == "stability":
            repeats = params.stability_repeats
            return repeats * (params.stability_test_seconds + 1) + (repeats - 1) * params.stability_interval_s
        return params.iperf3_seconds + 1


# Outputs of this tool captured by hand and uploaded (the upload form, the API, `flask bench upload`).
register_upload(
    UploadTool(
        "iperf3",
        "iperf3",
        "iperf3",
        ("intranet", "public"),
        "iperf3 -c ADDRESS -t 10 -J [-P 4] [-R]",
        path_required=True,
        order=20,
        step_of=uploaded_step,
        purpose="throughput",
    )
)
