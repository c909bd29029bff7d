"""iperf3's plain-text report (without -J), as analysts paste it: client or server side, TCP or UDP, -P.

The summary after the last dashed line gives the figures: the receiver line is the throughput, the sender line
the sender's (with TCP retransmits), UDP lines their jitter and loss; with -P the [SUM] lines stand for all
streams. A server log holding several tests is read from its last one. Samples carry the names the -J reader
gives, so comparison reads either alike.
"""

from __future__ import annotations

import re
from typing import Any

from benchmarks.messages import message as _
from benchmarks.sample import ParseError, Sample, ToolError

TOOL = "iperf3"
_LINE = re.compile(
    r"^\[\s*(?P<stream>\d+|SUM)\]\s+(?P<start>\d+(?:\.\d+)?)-\s*(?P<end>\d+(?:\.\d+)?)\s+sec\s+"
    r"(?P<transfer>\d+(?:\.\d+)?)\s+(?P<transfer_unit>[KMGT]?Bytes)\s+"
    r"(?P<rate>\d+(?:\.\d+)?)\s+(?P<rate_unit>[KMGT]?bits/sec)(?P<rest>.*)$"
)
_ROLE = re.compile(r"\b(sender|receiver)\s*$")
_JITTER = re.compile(
    r"(?P<jitter>\d+(?:\.\d+)?)\s+ms\s+(?P<lost>\d+)/(?P<total>\d+)\s+\((?P<percent>[\d.e+-]+)%\)"
)
_RETRANSMITS = re.compile(r"^\s*(?P<retr>\d+)\b")
_SEPARATOR = "- - - - -"
_ERROR = re.compile(r"^iperf3: error - (?P<message>.+)$", re.MULTILINE)
_TEST_START = re.compile(r"^Server listening on .*$", re.MULTILINE)
_HOST = re.compile(r"^Connecting to host (?P<host>\S+), port \d+", re.MULTILINE)
RATE_TO_MBIT = {"bits/sec": 1e-6, "Kbits/sec": 1e-3, "Mbits/sec": 1.0, "Gbits/sec": 1e3, "Tbits/sec": 1e6}


def looks_like_text(text: str) -> bool:
    """Whether `text` is iperf3's plain report (or its error line) rather than -J JSON."""
    return not text.lstrip().startswith("{") and ("iperf3" in text or "bits/sec" in text)


def _last_test(text: str) -> str:
    """A server log holds one block per test (and may end waiting for the next): the last finished one."""
    starts = [match.start() for match in _TEST_START.finditer(text)]
    if not starts:
        return text
    blocks = [text[start:end] for start, end in zip(starts, [*starts[1:], len(text)], strict=True)]
    finished = [block for block in blocks if _SEPARATOR in block and "receiver" in block]
    return finished[-1] if finished else blocks[-1]


def _rows(lines: list[str]) -> list[dict[str, Any]]:
    rows = []
    for line in lines:
        match = _LINE.match(line.strip())
        if match is None or "(omitted)" in line:
            continue
        row: dict[str, Any] = match.groupdict()
        role = _ROLE.search(row["rest"])
        row["role"] = role.group(1) if role else None
        row["mbit"] = float(row["rate"]) * RATE_TO_MBIT[row["rate_unit"]]
        rows.append(row)
    return rows


def _metadata(text: str, summary: list[dict[str, Any]], udp: bool) -> dict[str, Any]:
    host = _HOST.search(text)
    streams = {row["stream"] for row in summary if row["stream"] != "SUM"}
    return {
        "format": "text",
        "protocol": "UDP" if udp else "TCP",
        "streams": len(streams) or None,
        "reverse": "Reverse mode" in text,
        "bidirectional": False,
        "duration": float(summary[0]["end"]) if summary else None,
        "remote_host": host.group("host") if host else None,
    }


def _side(summary: list[dict[str, Any]], role: str) -> dict[str, Any] | None:
    """The [SUM] line of a side (-P), else its one stream's line."""
    lines = [row for row in summary if row["role"] == role]
    total = [row for row in lines if row["stream"] == "SUM"]
    return (total or lines or [None])[0]


def parse_text(text: str) -> list[Sample]:
    """Throughput (receiver), sender throughput, retransmits, UDP jitter and loss, per-interval throughput."""
    error = _ERROR.search(text)
    if error and _SEPARATOR not in text:
        raise ToolError(TOOL, error.group("message").strip())
    body = _last_test(text)
    if _SEPARATOR not in body:
        raise ParseError(TOOL, _("不是完整的 iperf3 报告：没有结尾的汇总行（sender / receiver）"))
    head, _sep, tail = body.rpartition(_SEPARATOR)
    summary = [row for row in _rows(tail.splitlines()) if row["role"]]
    receiver = _side(summary, "receiver")
    if receiver is None:
        raise ParseError(TOOL, _("iperf3 报告的汇总中没有 receiver 行：测试没有完成（输出被截断？）"))
    udp = "Jitter" in tail or "Datagrams" in tail
    metadata = _metadata(body, summary, udp)
    samples = [Sample("throughput", receiver["mbit"], "Mbit/s", dict(metadata))]
    sender = _side(summary, "sender")
    if sender is not None:
        samples.append(Sample("throughput_sender", sender["mbit"], "Mbit/s", dict(metadata)))
        retransmits = _RETRANSMITS.match(sender["rest"]) if not udp else None
        if retransmits:
            samples.append(Sample("retransmits", float(retransmits.group("retr")), "count", dict(metadata)))
    if udp:
        loss = _JITTER.search(receiver["rest"])
        if loss:
            samples.append(Sample("udp_jitter", float(loss.group("jitter")), "ms", dict(metadata)))
            samples.append(Sample("udp_loss", float(loss.group("percent")), "%", dict(metadata)))
    return samples + _intervals(head, metadata)


def _intervals(head: str, metadata: dict[str, Any]) -> list[Sample]:
    """Per-interval throughput before the summary: the [SUM] lines with -P, else the one stream's."""
    rows = [row for row in _rows(head.splitlines()) if row["role"] is None]
    if any(row["stream"] == "SUM" for row in rows):
        rows = [row for row in rows if row["stream"] == "SUM"]
    samples = []
    for index, row in enumerate(rows):
        extra = {"interval": index, "start": float(row["start"]), "end": float(row["end"])}
        samples.append(Sample("throughput_interval", row["mbit"], "Mbit/s", {**metadata, **extra}))
    return samples
