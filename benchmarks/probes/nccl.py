"""Collective bandwidth: the table nccl-tests prints (all_reduce_perf and its siblings).

Each size row gives time (us), algbw and busbw (GB/s) out-of-place and in-place, and a correctness column:
"#wrong" (a count, or N/A without validation) in current releases, "error" (a float) in old ones. Any
non-zero value there means the collective returned wrong data: the run failed, whatever its speed.
"""

from __future__ import annotations

import re
import time
from typing import Any

from benchmarks.messages import message as _
from benchmarks.probes import UploadTool, register_parser, register_upload
from benchmarks.sample import ParseError, Sample, ToolError, new_sample

TOOL = "nccl-tests"
ACCEPTED = _("nccl-tests 的结果表（all_reduce_perf 等，带 '#wrong' 或 'error' 列）")
_HEADER = re.compile(r"^\s*#?\s*size\s+count\s+type\s+(?P<columns>.*)$", re.MULTILINE)
_RANK = re.compile(
    r"^\s*#?\s*Rank\s+(?P<rank>\d+)\b.*?\bon\s+(?P<host>\S+)\s+device\s+(?P<device>\d+)\s+\[[^\]]*\]\s+(?P<gpu>.+?)\s*$",
    re.MULTILINE,
)
_SETTINGS = re.compile(r"^\s*#?\s*nThread (?P<threads>\d+) nGpus (?P<gpus>\d+)", re.MULTILINE)
_AVERAGE = re.compile(r"^\s*#?\s*Avg bus bandwidth\s*:\s*(?P<value>[\d.]+)", re.MULTILINE)
_OUT_OF_BOUNDS = re.compile(
    r"^\s*#?\s*Out of bounds values\s*:\s*(?P<count>\d+)\s+(?P<verdict>\w+)", re.MULTILINE
)
PLACEMENTS = ("out_of_place", "in_place")
# mpirun --tag-output prefixes ("[0]", "[1,0]<stdout>:") that multi-node runs put before every line and cell
_MPI_TAG = re.compile(r"\[\d+(?:,\d+)?\](?:<std(?:out|err)>:)?")


def _columns(text: str) -> tuple[bool, str]:
    """Whether rows carry a root column, and the name of the correctness column."""
    header = _HEADER.search(text)
    if header is None:
        raise ParseError(
            TOOL, _("没有 '#  size  count  type ...' 表头行：应为%(accepted)s", accepted=ACCEPTED)
        )
    names = header["columns"].split()
    check = "#wrong" if "#wrong" in names else "error" if "error" in names else None
    if check is None:
        raise ParseError(
            TOOL, _("表头既没有 '#wrong' 列也没有 'error' 列：应为%(accepted)s", accepted=ACCEPTED)
        )
    return "root" in names[: names.index("time")], check


def _wrong(text: str, column: str) -> float | None:
    if text.upper() == "N/A":
        return None
    try:
        return float(text)
    except ValueError:
        raise ParseError(
            TOOL, _("%(field)s 的值 %(value)s 不是数字", field=column, value=repr(text))
        ) from None


def _float(text: str, what: str, size: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ParseError(
            TOOL,
            _(
                "大小 %(size)s：%(field)s %(value)s 不是数字（输出被截断或损坏？）",
                size=size,
                field=what,
                value=repr(text),
            ),
        ) from None


def _rows(text: str, has_root: bool, check: str) -> list[dict[str, Any]]:
    rows = []
    lead = 5 if has_root else 4
    for line in text.splitlines():
        cells = line.split()
        if not cells or line.lstrip().startswith("#") or not cells[0].isdigit():
            continue
        if len(cells) != lead + 8:
            raise ParseError(
                TOOL,
                _(
                    "大小 %(size)s：有 %(count)s 列，应为 %(expected)s 列（行被截断？）",
                    size=cells[0],
                    count=len(cells),
                    expected=lead + 8,
                ),
            )
        row: dict[str, Any] = {
            "size": int(cells[0]),
            "count": int(cells[1]),
            "type": cells[2],
            "redop": cells[3],
        }
        for offset, placement in zip((lead, lead + 4), PLACEMENTS, strict=True):
            time_us, algbw, busbw, wrong = cells[offset : offset + 4]
            if time_us.upper() == "N/A":
                continue  # a placement the benchmark did not run (gpuvet's torch script: in-place only)
            row[placement] = {
                "time": _float(time_us, "time", cells[0]),
                "algbw": _float(algbw, "algbw", cells[0]),
                "busbw": _float(busbw, "busbw", cells[0]),
                "wrong": _wrong(wrong, check),
            }
        rows.append(row)
    return rows


def _ranks(text: str) -> dict[str, Any]:
    ranks = list(_RANK.finditer(text))
    hosts = sorted({match["host"] for match in ranks})
    settings = _SETTINGS.search(text)
    info: dict[str, Any] = {"ranks": len(ranks) or None, "hosts": hosts, "nodes": len(hosts) or None}
    info["gpu_models"] = sorted({match["gpu"] for match in ranks})
    if settings is not None:
        info["gpus_per_thread"] = int(settings["gpus"])
    return info


@register_parser("nccl", accepts=ACCEPTED)
def parse_output(text: str) -> list[Sample]:
    """Per size and placement: time (us), algbw and busbw (GB/s); the peak and average bus bandwidth.

    Also reads tables pasted through chat or markdown that lost their leading '#', and mpirun's tagged output.
    """
    text = _MPI_TAG.sub(" ", text)
    has_root, check = _columns(text)
    rows = _rows(text, has_root, check)
    if not any(placement in row for row in rows for placement in PLACEMENTS):
        raise ParseError(TOOL, _("表格有表头，但没有测量数据行（输出被截断？）"))
    metadata = {"tool": TOOL, **_ranks(text)}
    failed = [
        f"{row['size']} B ({placement.replace('_', '-')}: {row[placement]['wrong']:g})"
        for row in rows
        for placement in PLACEMENTS
        if placement in row and row[placement]["wrong"]
    ]
    bounds = _OUT_OF_BOUNDS.search(text)
    if failed or (bounds is not None and int(bounds["count"]) > 0):
        where = ", ".join(failed) or _("%(count)s 个值越界", count=bounds["count"])
        raise ToolError(
            TOOL,
            _("集合通信返回了错误数据（%(column)s 大于零：%(where)s）：测试失败", column=check, where=where),
        )
    samples = []
    now = time.time()
    for row in rows:
        for placement in (name for name in PLACEMENTS if name in row):
            figures = row[placement]
            extra = {**metadata, "size_bytes": row["size"], "placement": placement, "redop": row["redop"]}
            # one dict shared by the three; new_sample: a 10 MB table makes half a million samples
            samples.append(new_sample("nccl_time", figures["time"], "us", extra, now))
            samples.append(new_sample("nccl_algbw", figures["algbw"], "GB/s", extra, now))
            samples.append(new_sample("nccl_busbw", figures["busbw"], "GB/s", extra, now))
    largest = max(rows, key=lambda row: row["size"])
    peak = max(row[placement]["busbw"] for row in rows for placement in PLACEMENTS if placement in row)
    samples.append(
        Sample("nccl_busbw_peak", peak, "GB/s", {**metadata, "largest_size_bytes": largest["size"]})
    )
    average = _AVERAGE.search(text)
    if average is not None:
        samples.append(Sample("nccl_busbw_average", float(average["value"]), "GB/s", dict(metadata)))
    return samples


# Outputs of this tool captured by hand and uploaded (the upload form, the API, `flask bench upload`).
register_upload(
    UploadTool("nccl-tests", "nccl", "collective", (), "all_reduce_perf -b 8 -e 8G -f 2 -g GPUS", order=100)
)
