"""Latency: iputils `ping -c N`, from the gpuvet host to the target and from the target to its peer."""

from __future__ import annotations

import re

from benchmarks.messages import message as _
from benchmarks.probes import UploadTool, register_parser, register_probe, register_upload
from benchmarks.probes.base import LOCAL, TARGET, Probe, ProbeContext, ProbeFailed
from benchmarks.sample import ParseError, Sample

TOOL = "ping"
# iputils, busybox, macOS: "PING name (addr)"; iputils ping6: "PING name(addr)" or "PING name(name (addr))";
# BSD and macOS ping6: "PING6(56=40+8+8 bytes) source --> destination".
_HEADER = re.compile(
    r"^PING\s+(?P<name>[^\s(]+)\s*\((?:[^\s()]+\s+\()?(?P<address>[^\s()]+)\)"
    r"|^PING6\([^)]*\)\s+\S+\s+-->\s+(?P<target>\S+)",
    re.MULTILINE,
)
_COUNTS = re.compile(
    r"^(?P<sent>\d+) packets transmitted, (?P<received>\d+) (?:packets )?received"
    r"(?:, \+(?P<duplicates>\d+) duplicates)?(?:, \+(?P<corrupted>\d+) corrupted)?"
    r"(?:, \+(?P<errors>\d+) errors)?, (?P<loss>[\d.]+)% packet loss",
    re.MULTILINE,
)
_RTT = re.compile(
    r"^(?:rtt|round-trip) min/avg/max(?:/(?:mdev|stddev|std-dev))? = "
    r"(?P<min>[\d.]+)/(?P<avg>[\d.]+)/(?P<max>[\d.]+)(?:/(?P<mdev>[\d.]+))? ms",
    re.MULTILINE,
)


@register_parser("ping", accepts=_("Linux iputils、busybox、macOS 或 FreeBSD 的 ping / ping6 统计摘要"))
def parse_output(text: str) -> list[Sample]:
    """Loss and min/avg/max/mdev from ping's summary; ParseError when the summary is missing."""
    counts = _COUNTS.search(text)
    if counts is None:
        raise ParseError(TOOL, _("没有 'packets transmitted' 统计行（输出被截断，或不是 ping 的输出）"))
    header = _HEADER.search(text)
    metadata = {
        "destination": (header["name"] or header["target"]) if header else None,
        "address": (header["address"] or header["target"]) if header else None,
        "packets_transmitted": int(counts["sent"]),
        "packets_received": int(counts["received"]),
        "duplicates": int(counts["duplicates"] or 0),
        "errors": int(counts["errors"] or 0),
    }
    sent = int(counts["sent"])
    if sent == 0:
        raise ParseError(TOOL, _("ping 没有发送任何数据包"))
    samples = [Sample("packet_loss", float(counts["loss"]), "%", dict(metadata))]
    rtt = _RTT.search(text)
    if rtt is not None:
        for name in ("min", "avg", "max", "mdev"):
            if rtt[name] is not None:
                samples.append(Sample(f"rtt_{name}", float(rtt[name]), "ms", dict(metadata)))
    elif int(counts["received"]) > 0:
        raise ParseError(TOOL, _("收到了回复，但缺少 rtt 统计行（输出被截断？）"))
    return samples


@register_probe
class PingProbe(Probe):
    """ping the target from here, and the peer from the target when there is one."""

    name = "ping"
    tool = TOOL

    def _routes(self, ctx: ProbeContext) -> list[tuple[str, str, str]]:
        routes = [(LOCAL, ctx.target_address, "gpuvet->target")]
        if ctx.peer is not None:
            routes.append((TARGET, ctx.peer_address, "target->peer"))
        return routes

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """ping wherever it is run from."""
        return {role: (TOOL,) for role, _address, _path in self._routes(ctx)}

    def run(self, ctx: ProbeContext) -> None:
        """One ping series per route; a series with no summary fails the probe."""
        params = ctx.params
        for role, address, path in self._routes(ctx):
            argv = ["ping", "-n", "-c", str(params.ping_count), "-i", f"{params.ping_interval_s:g}"]
            argv += ["-W", "2", address]
            version = ctx.tool_version(role, ["ping", "-V"])
            result = ctx.execute(
                role,
                f"ping {path}",
                argv,
                timeout=params.ping_count * params.ping_interval_s + 5 + params.command_grace_s,
                parser="ping",
                metadata={"path": path, "count": params.ping_count, "tool_version": version},
            )
            if result.timed_out:
                raise ProbeFailed(_("ping %(address)s 超时", address=address))

    def estimated_seconds(self, params) -> float:
        """About count x interval per route."""
        return params.ping_count * params.ping_interval_s + 1


# Outputs of this tool captured by hand and uploaded (the upload form, the API, `flask bench upload`).
register_upload(UploadTool("ping", "ping", "ping", ("public", "intranet"), "ping -c 20 ADDRESS", order=10))
