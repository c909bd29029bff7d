"""Collective bandwidth: the table nccl-tests prints (all_reduce_perf and its siblings).

Each size row gives time (us), algbw and busbw (GB/s) out-of-place and in-place, and a correctness column:
"#wrong" (a count, or N/A without validation) in current releases, "error" (a float) in old ones. Any
non-zero value there means the collective returned wrong data: the run failed, whatever its speed.
"""

from __future__ import annotations

import re
from typing import Any

from benchmarks.probes import register_parser
from benchmarks.sample import ParseError, Sample, ToolError

TOOL = "nccl-tests"
ACCEPTED = "the nccl-tests table (all_reduce_perf and siblings, with a '#wrong' or 'error' column)"
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
        raise ParseError(TOOL, f"no '#  size  count  type ...' header line: expected {ACCEPTED}")
    names = header["columns"].split()
    check = "#wrong" if "#wrong" in names else "error" if "error" in names else None
    if check is None:
        raise ParseError(
            TOOL, f"the header has neither a '#wrong' nor an 'error' column: expected {ACCEPTED}"
        )
    return "root" in names[: names.index("time")], check


def _wrong(text: str, column: str) -> float | None:
    if text.upper() == "N/A":
        return None
    try:
        return float(text)
    except ValueError:
        raise ParseError(TOOL, f"{column} value {text!r} is not a number") from None


def _float(text: str, what: str, size: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ParseError(
            TOOL, f"size {size}: {what} {text!r} is not a number (output cut or garbled?)"
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
                TOOL, f"size {cells[0]}: {len(cells)} columns, expected {lead + 8} (row cut short?)"
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
        raise ParseError(TOOL, "the table has a header but no measured size rows (output cut short?)")
    metadata = {"tool": TOOL, **_ranks(text)}
    failed = [
        f"{row['size']} B ({placement.replace('_', '-')}: {row[placement]['wrong']:g})"
        for row in rows
        for placement in PLACEMENTS
        if placement in row and row[placement]["wrong"]
    ]
    bounds = _OUT_OF_BOUNDS.search(text)
    if failed or (bounds is not None and int(bounds["count"]) > 0):
        where = ", ".join(failed) or f"{bounds['count']} values out of bounds"
        raise ToolError(
            TOOL, f"the collective returned wrong data ({check} above zero at {where}): a failed test"
        )
    samples = []
    for row in rows:
        for placement in (name for name in PLACEMENTS if name in row):
            figures = row[placement]
            extra = {**metadata, "size_bytes": row["size"], "placement": placement, "redop": row["redop"]}
            samples.append(Sample("nccl_time", figures["time"], "us", extra))  # one dict shared by the three
            samples.append(Sample("nccl_algbw", figures["algbw"], "GB/s", extra))
            samples.append(Sample("nccl_busbw", figures["busbw"], "GB/s", extra))
    largest = max(rows, key=lambda row: row["size"])
    peak = max(row[placement]["busbw"] for row in rows for placement in PLACEMENTS if placement in row)
    samples.append(
        Sample("nccl_busbw_peak", peak, "GB/s", {**metadata, "largest_size_bytes": largest["size"]})
    )
    average = _AVERAGE.search(text)
    if average is not None:
        samples.append(Sample("nccl_busbw_average", float(average["value"]), "GB/s", dict(metadata)))
    return samples
