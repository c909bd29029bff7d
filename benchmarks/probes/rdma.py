"""RDMA: the adapter inventory (`ibv_devinfo [-v]`), perftest results (ib_write_bw, ib_read_lat ...), and the
probe that runs perftest between a target and its peer.

perftest prints bandwidth in MB/sec (2^20 bytes) by default and in Gb/sec with --report_gbits; both become
Gbit/s here, so a measured RDMA rate reads like the intranet Gbps of an offer. Older perftest (OFED 1.5 to
2.x) prints no MsgRate column and fewer latency columns; settings aligned with tabs or, once pasted, with
spaces are both read, and perftest's own warnings between the header and the rows ("Conflicting CPU
frequency values detected") are kept as metadata instead of being read as rows.
"""

from __future__ import annotations

import re
from typing import Any

from benchmarks.messages import message as _
from benchmarks.params import SuiteParams
from benchmarks.probes import UploadTool, register_parser, register_probe, register_upload
from benchmarks.probes.base import PEER, TARGET, Probe, ProbeContext, ProbeFailed, check_result
from benchmarks.sample import ParseError, Sample
from benchmarks.ssh import CommandResult

_DEVICE = re.compile(r"^hca_id:\s*(?P<device>\S+)", re.MULTILINE)
_FIELD = re.compile(r"^\s*(?P<key>[a-z_]+):\s*(?P<value>.+?)\s*$")
_SPEED = re.compile(r"(?P<gbps>[\d.]+)\s*Gbps")
_WIDTH = re.compile(r"(?P<lanes>\d+)X")
_BW_HEADER = re.compile(
    r"#bytes\s+#iterations\s+BW peak\[(?P<unit>MB|Gb)/sec\]\s+BW average\[(?:MB|Gb)/sec\]"
    r"(?P<rate>[ \t]+MsgRate\[Mpps\])?"
)
_LAT_HEADER = re.compile(r"#bytes\s+#iterations\s+t_min\[usec\].*$", re.MULTILINE)
_LAT_COLUMN = re.compile(r"\b(t_[a-z]+)\[usec\]|\b(99(?:\.9)?)% percentile\[usec\]")
_TITLE = re.compile(r"^\s*(?P<title>\S.*\b(?:BW|Latency) Test)\s*$", re.MULTILINE)
_SETTING = re.compile(
    r"^\s*(?P<key>Device|Link type|Transport type|Connection type|Mtu|Number of qps)\s*:\s*(?P<value>.+?)\s*$"
)
# Two settings share a line, parted by tabs as perftest prints them or by spaces once pasted.
_SETTINGS_APART = re.compile(r"\t+|\s{2,}(?=[A-Za-z][\w .*'-]*?\s*:)")
MAX_WARNINGS = 5
MB_PER_SEC_TO_GBIT = 2**20 * 8 / 1e9
RDMA_FIGURE = "rdma_gbps"  # measured RDMA Gbit/s, the counterpart of an offer's rdma_gbps claim


def _ports(block: str, device: str) -> list[dict[str, Any]]:
    """Each port of one adapter block as a dict of its fields."""
    ports: list[dict[str, Any]] = []
    adapter: dict[str, str] = {"device": device}
    for line in block.splitlines():
        field = _FIELD.match(line)
        if field is None:
            continue
        key, value = field["key"], field["value"]
        if key == "port":
            ports.append({**adapter, "port": int(value)})
        elif ports:
            ports[-1][key] = value
        else:
            adapter[key] = value
    return ports


def _rate_gbps(port: dict[str, Any]) -> float | None:
    width, speed = _WIDTH.search(port.get("active_width", "")), _SPEED.search(port.get("active_speed", ""))
    if width is None or speed is None:
        return None
    return int(width["lanes"]) * float(speed["gbps"])


@register_parser("ibv_devinfo", accepts=_("ibv_devinfo 或 ibv_devinfo -v 的输出（rdma-core）"))
def parse_devinfo(text: str) -> list[Sample]:
    """One `rdma_port` sample per port (value: its state) and the link rate (Gbit/s) of each active port."""
    starts = list(_DEVICE.finditer(text))
    if not starts:
        raise ParseError("ibv_devinfo", _("没有 'hca_id:' 行：没有列出 RDMA 网卡"))
    samples: list[Sample] = []
    for number, start in enumerate(starts):
        end = starts[number + 1].start() if number + 1 < len(starts) else len(text)
        ports = _ports(text[start.end() : end], start["device"])
        if not ports:
            raise ParseError(
                "ibv_devinfo", _("%(device)s：没有列出端口（输出被截断？）", device=start["device"])
            )
        for port in ports:
            state = port.get("state", "").split(" ")[0]
            metadata = {
                "device": port["device"],
                "port": port["port"],
                "link_layer": port.get("link_layer"),
                "firmware": port.get("fw_ver"),
                "active_mtu": port.get("active_mtu", "").split(" ")[0] or None,
            }
            samples.append(Sample("rdma_port", state, "", dict(metadata)))
            rate = _rate_gbps(port)
            if rate is not None and state == "PORT_ACTIVE":
                samples.append(Sample("rdma_link_rate", rate, "Gbit/s", dict(metadata)))
    return samples


def _settings(text: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for line in text.splitlines():
        for part in _SETTINGS_APART.split(line):
            found = _SETTING.match(part)
            if found:
                settings[found["key"].lower().replace(" ", "_")] = found["value"]
    title = _TITLE.search(text)
    settings["test"] = title["title"] if title else None
    return settings


def _numbers(line: str, count: int, tool: str) -> list[float]:
    cells = line.split()
    if len(cells) != count:
        raise ParseError(
            tool,
            _(
                "结果行 %(row)s 有 %(count)s 个值，应为 %(expected)s 个",
                row=repr(line.strip()),
                count=len(cells),
                expected=count,
            ),
        )
    try:
        return [float(cell) for cell in cells]
    except ValueError:
        raise ParseError(tool, _("结果行 %(row)s 不全是数字", row=repr(line.strip()))) from None


def _rows_after(text: str, header: re.Match) -> tuple[list[str], list[str]]:
    """The result rows under `header`, and perftest's warning lines among them (distinct, the first few)."""
    rows: list[str] = []
    warnings: list[str] = []
    for line in text[header.end() :].splitlines()[1:]:
        cells = line.split()
        if not cells or cells[0].startswith("---"):
            break
        if cells[0][0].isdigit():
            rows.append(line)
        elif line.strip() not in warnings and len(warnings) < MAX_WARNINGS:
            warnings.append(line.strip())
    return rows, warnings


def _latency_columns(header: re.Match) -> list[str]:
    """The latency columns the header names: t_min, t_max, t_typical (all versions), then t_avg, t_stdev,
    p99 and p99.9 where perftest prints them."""
    return [name or f"p{percentile}" for name, percentile in _LAT_COLUMN.findall(header.group())]


PERFTEST_LAYOUTS = _(
    "perftest 的 ib_write_bw / ib_read_bw / ib_send_bw / ib_atomic_bw 或 *_lat 输出"
    "（含没有 MsgRate 列的旧版 OFED；设置行用制表符或空格对齐均可）"
)


@register_parser("perftest", accepts=PERFTEST_LAYOUTS)
def parse_perftest(text: str) -> list[Sample]:
    """Bandwidth rows (peak and average, Gbit/s, per message size) or latency rows (us) of a perftest run.

    A bandwidth run also gives one `rdma_gbps` sample: the best average rate over its message sizes.
    """
    tool = "perftest"
    metadata = _settings(text)
    bandwidth, latency = _BW_HEADER.search(text), _LAT_HEADER.search(text)
    if bandwidth is None and latency is None:
        raise ParseError(tool, _("没有 '#bytes #iterations BW ...' 或 '#bytes #iterations t_min' 结果表"))
    samples: list[Sample] = []
    if bandwidth is not None:
        scale = 1.0 if bandwidth["unit"] == "Gb" else MB_PER_SEC_TO_GBIT
        rows, warnings = _rows_after(text, bandwidth)
        metadata |= {"warnings": warnings} if warnings else {}
        for line in rows:
            size, _iterations, peak, average, *rate = _numbers(line, 5 if bandwidth["rate"] else 4, tool)
            extra = {**metadata, "message_bytes": int(size), "message_rate_mpps": rate[0] if rate else None}
            if peak or not average:  # with -D perftest prints a peak of 0.00: not measured
                samples.append(Sample("rdma_bw_peak", peak * scale, "Gbit/s", dict(extra)))
            samples.append(Sample("rdma_bw", average * scale, "Gbit/s", dict(extra)))
        best = max((s for s in samples if s.metric == "rdma_bw"), key=lambda s: float(s.value), default=None)
        if best is not None:  # the figure an offer's RDMA claim is held against: best average of any size
            samples.append(Sample(RDMA_FIGURE, best.value, "Gbit/s", dict(best.metadata)))
    else:
        columns = _latency_columns(latency)
        rows, warnings = _rows_after(text, latency)
        metadata |= {"warnings": warnings} if warnings else {}
        for line in rows:
            values = _numbers(line, 2 + len(columns), tool)
            extra = {**metadata, "message_bytes": int(values[0])}
            for name, value in zip(columns, values[2:], strict=True):
                samples.append(Sample(f"rdma_latency_{name.replace('.', '_')}", value, "us", dict(extra)))
    if not samples:
        raise ParseError(tool, _("结果表没有数据行（测试没有完成？）"))
    return samples


# ---------------------------------------------------------------- the probe: perftest between target and peer
PERFTEST_PORT = 18515  # perftest's default, given explicitly so the recorded command says it
CONNECT_ATTEMPTS = 5  # the server may not listen yet when the client starts
CONNECT_RETRY_S = 0.5
# $1 the work dir, then the server's argv: started detached (output to a file), its pid kept.
START_SERVER = (
    'd="$1"; shift; case "$d" in */gpuvet-rdma.*) ;; *) exit 2;; esac; '
    'nohup "$@" > "$d/server.out" 2>&1 < /dev/null & echo $! > "$d/server.pid"'
)
# Stop the server if it still runs, print what it wrote, and remove the work dir.
STOP_SERVER = (
    'd="$1"; case "$d" in */gpuvet-rdma.*) ;; *) exit 2;; esac; '
    'p=$(cat "$d/server.pid" 2>/dev/null); [ -n "$p" ] && kill "$p" 2>/dev/null; '
    'cat "$d/server.out" 2>/dev/null; rm -rf -- "$d"; exit 0'
)
TESTS = (  # (label, perftest program, extra arguments, whether the duration flag applies)
    ("ib_write_bw", "ib_write_bw", ("--report_gbits",), True),
    ("ib_read_lat", "ib_read_lat", (), False),
)


def _not_connected(result: CommandResult) -> bool:
    """perftest's client gave up before the server listened (no result table)."""
    text = f"{result.stdout}\n{result.stderr}".lower()
    return result.exit_code != 0 and "#bytes" not in text and "couldn't connect" in text


@register_probe
class RdmaProbe(Probe):
    """perftest between the target (client) and its peer (server): ib_write_bw, then ib_read_lat; bounded."""

    name = "rdma"
    tool = "ib_write_bw"

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """perftest on both ends; mktemp and nohup on the peer, which runs the servers."""
        programs = tuple(program for _label, program, _args, _timed in TESTS)
        if ctx.peer is None:
            return {TARGET: programs}
        return {TARGET: programs, PEER: (*programs, "mktemp", "nohup", "timeout")}

    def prepare(self, ctx: ProbeContext) -> None:
        """A peer is needed: RDMA is measured between two servers."""
        if ctx.peer is None:
            raise ProbeFailed(_("RDMA 测试需要对端服务器：请为目标服务器指定对端"))
        super().prepare(ctx)

    def run(self, ctx: ProbeContext) -> None:
        """Each test: server on the peer (detached, bounded), client on the target, server stopped."""
        params = ctx.params
        seconds = params.iperf3_seconds
        timeout = seconds + 10 + params.command_grace_s
        for label, program, extra, timed in TESTS:
            if ctx.should_cancel():
                return
            ctx.on_detail(label)
            common = [program, *extra, "-F", "-p", str(PERFTEST_PORT)] + (
                ["-D", str(seconds)] if timed else []
            )
            workdir = ctx.execute(
                PEER, f"{label} workdir", ["mktemp", "-d", "-t", "gpuvet-rdma.XXXXXXXX"], timeout=15
            )
            check_result(workdir, _("对端服务器上的 mktemp"))
            directory = workdir.stdout.strip()
            try:
                server = ["timeout", "-k", "5", str(timeout), *common]
                check_result(
                    ctx.execute(
                        PEER,
                        f"{label} server start",
                        ["sh", "-c", START_SERVER, "sh", directory, *server],
                        timeout=15,
                    ),
                    _("在对端服务器上启动 %(program)s", program=program),
                )
                self._client(ctx, label, [*common, ctx.peer_address], timeout)
            finally:
                ctx.execute(PEER, f"{label} server", ["sh", "-c", STOP_SERVER, "sh", directory], timeout=15)

    def _client(self, ctx: ProbeContext, label: str, argv: list[str], timeout: float) -> None:
        metadata = {"path": "target->peer", "peer_address": ctx.peer_address}
        for attempt in range(CONNECT_ATTEMPTS):
            result = ctx.execute(TARGET, label, argv, timeout=timeout, parser="perftest", metadata=metadata)
            if not _not_connected(result) or attempt == CONNECT_ATTEMPTS - 1:
                break
            ctx.outputs[-1].parser = None  # a retried attempt: kept verbatim, not counted
            ctx.outputs[-1].metadata["retried"] = True
            if ctx.sleep(CONNECT_RETRY_S):
                return
        if result.timed_out:
            raise ProbeFailed(
                _("%(program)s 客户端在 %(seconds).0f 秒后超时", program=label, seconds=result.duration)
            )

    def estimated_seconds(self, params: SuiteParams) -> float:
        """The bandwidth test's length plus the latency test."""
        return params.iperf3_seconds + 5


# Outputs of this tool captured by hand and uploaded (the upload form, the API, `flask bench upload`).
register_upload(UploadTool("ibv_devinfo", "ibv_devinfo", "rdma", (), "ibv_devinfo -v", order=110))
register_upload(
    UploadTool(
        "perftest", "perftest", "rdma", ("intranet",), "ib_write_bw --report_gbits PEER_ADDRESS", order=120
    )
)
