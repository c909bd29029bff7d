"""RDMA: the adapter inventory (`ibv_devinfo [-v]`) and perftest results (ib_write_bw, ib_read_lat ...).

perftest prints bandwidth in MB/sec (2^20 bytes) by default and in Gb/sec with --report_gbits; both become
Gbit/s here, so a measured RDMA rate reads like the intranet Gbps of an offer.
"""

from __future__ import annotations

import re
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from benchmarks.probes import register_parser
from benchmarks.sample import ParseError, Sample

_DEVICE = re.compile(r"^hca_id:\s*(?P<device>\S+)", re.MULTILINE)
_FIELD = re.compile(r"^\s*(?P<key>[a-z_]+):\s*(?P<value>.+?)\s*$")
_SPEED = re.compile(r"(?P<gbps>[\d.]+)\s*Gbps")
_WIDTH = re.compile(r"(?P<lanes>\d+)X")
_BW_HEADER = re.compile(
    r"#bytes\s+#iterations\s+BW peak\[(?P<unit>MB|Gb)/sec\]\s+BW average\[(?:MB|Gb)/sec\]"
)
_LAT_HEADER = re.compile(r"#bytes\s+#iterations\s+t_min\[usec\]")
_TITLE = re.compile(r"^\s*(?P<title>\S.*\b(?:BW|Latency) Test)\s*$", re.MULTILINE)
_SETTING = re.compile(
    r"^\s*(?P<key>Device|Link type|Transport type|Connection type|Mtu)\s*:\s*(?P<value>[^\t]+?)\s*$"
)
MB_PER_SEC_TO_GBIT = 2**20 * 8 / 1e9
LATENCY_COLUMNS = ("t_min", "t_max", "t_typical", "t_avg", "t_stdev", "p99", "p99.9")


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


@register_parser("ibv_devinfo", accepts=_l("ibv_devinfo 或 ibv_devinfo -v 的输出（rdma-core）"))
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
        for part in line.split("\t"):
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


def _rows_after(text: str, header: re.Match) -> list[str]:
    rows = []
    for line in text[header.end() :].splitlines()[1:]:
        if line.strip().startswith("---") or not line.strip():
            break
        rows.append(line)
    return rows


@register_parser("perftest", accepts=_l("ib_write_bw / ib_read_bw / ib_send_bw 或 *_lat 的输出（perftest）"))
def parse_perftest(text: str) -> list[Sample]:
    """Bandwidth rows (peak and average, Gbit/s, per message size) or latency rows (us) of a perftest run."""
    tool = "perftest"
    metadata = _settings(text)
    bandwidth, latency = _BW_HEADER.search(text), _LAT_HEADER.search(text)
    if bandwidth is None and latency is None:
        raise ParseError(tool, _("没有 '#bytes #iterations BW ...' 或 '#bytes #iterations t_min' 结果表"))
    samples: list[Sample] = []
    if bandwidth is not None:
        scale = 1.0 if bandwidth["unit"] == "Gb" else MB_PER_SEC_TO_GBIT
        for line in _rows_after(text, bandwidth):
            size, _iterations, peak, average, rate = _numbers(line, 5, tool)
            extra = {**metadata, "message_bytes": int(size), "message_rate_mpps": rate}
            samples.append(Sample("rdma_bw_peak", peak * scale, "Gbit/s", dict(extra)))
            samples.append(Sample("rdma_bw", average * scale, "Gbit/s", dict(extra)))
    else:
        for line in _rows_after(text, latency):
            values = _numbers(line, 2 + len(LATENCY_COLUMNS), tool)
            extra = {**metadata, "message_bytes": int(values[0])}
            for name, value in zip(LATENCY_COLUMNS, values[2:], strict=True):
                samples.append(Sample(f"rdma_latency_{name.replace('.', '_')}", value, "us", dict(extra)))
    if not samples:
        raise ParseError(tool, _("结果表没有数据行（测试没有完成？）"))
    return samples
