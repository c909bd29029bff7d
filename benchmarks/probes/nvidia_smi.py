"""GPUs: nvidia-smi inventory CSV, and utilisation / memory / power sampled with -lms while a workload runs.

The CSV parser reads every layout nvidia-smi prints: with or without the header line, with or without
units ("98 %", "70321 MiB"), and with "[N/A]" / "[Not Supported]" for values a GPU does not report.
Without a header the columns must be given (`fields=`) or be one of the probe's own queries. The plain
table (benchmarks.probes.nvidia_smi_table) and `nvidia-smi -q` text or XML (nvidia_smi_query) are told
apart from the CSV by their first lines and read by their own modules into the same samples.
"""

from __future__ import annotations

import csv
import functools
import re
import time
from datetime import datetime
from typing import Any

from benchmarks.messages import message as _
from benchmarks.probes import UploadTool, register_parser, register_probe, register_upload
from benchmarks.probes.base import TARGET, Probe, ProbeContext, ProbeFailed
from benchmarks.probes.nvidia_smi_query import NUMERIC_FIELDS, looks_like_query, parse_query
from benchmarks.probes.nvidia_smi_table import looks_like_table, parse_table
from benchmarks.sample import ParseError, Sample, new_sample

TOOL = "nvidia-smi"
INVENTORY_FIELDS = ("index", "name", "memory.total", "driver_version", "pci.bus_id")
SAMPLING_FIELDS = ("timestamp", "index", "utilization.gpu", "memory.used", "power.draw")
KNOWN_QUERIES = (INVENTORY_FIELDS, SAMPLING_FIELDS, INVENTORY_FIELDS[:4])
NOT_AVAILABLE = {"[n/a]", "n/a", "[not supported]", "not supported", "[unknown error]", "[gpu is lost]"}
_HEADER_UNIT = re.compile(r"\s*\[[^\]]*\]\s*$")
VALUE_UNITS = {"", "%", "MiB", "W", "MHz", "C", "GiB", "KiB"}
_VALUE_UNIT = re.compile(r"^\s*(-?[\d.]+)\s*(%|MiB|W|MHz|C|GiB|KiB)?\s*$")
WORKLOAD_MARK = "### workload exit="
NO_WORKLOAD = "none"  # what the sampling script prints after the mark when it was given no workload
# Health fields kept as text on every sample of the GPU (the health check reads them).
HEALTH_TEXT_FIELDS = {
    "clocks_throttle_reasons.active",
    "clocks_event_reasons.active",
    "retired_pages.pending",
}
TEXT_FIELDS = {"name", "driver_version", "pci.bus_id", "uuid", "serial", "vbios_version", *HEALTH_TEXT_FIELDS}
# Shapes of text fields, so that a row cut short inside one is caught rather than kept.
TEXT_SHAPES = {
    "name": re.compile(r"^\S.*$"),
    "driver_version": re.compile(r"^\d+(\.\d+)+$"),
    "pci.bus_id": re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$"),
    "uuid": re.compile(r"^(GPU|MIG)-[0-9a-fA-F-]{36}$"),
}
TIMESTAMP_FORMAT = "%Y/%m/%d %H:%M:%S.%f"


def _looks_like_header(cells: list[str]) -> bool:
    first = _HEADER_UNIT.sub("", cells[0]).strip()
    return first in {"index", "timestamp", "name", "uuid", "pci.bus_id", "driver_version"}


def _rows(text: str) -> list[list[str]]:
    try:
        rows = [[cell.strip() for cell in row] for row in csv.reader(text.splitlines())]
    except csv.Error as exc:
        raise ParseError(TOOL, _("不是 CSV：%(problem)s", problem=exc)) from exc
    return [row for row in rows if len(row) > 1 or (row and row[0])]  # blank lines dropped


@functools.lru_cache(maxsize=16384)  # readings repeat ("98 %", "70321 MiB"): each text is parsed once
def _value(text: str, field: str) -> float | None:
    number, _space, unit = text.partition(" ")
    if unit in VALUE_UNITS:  # "98 %", "70321 MiB", or a bare number (nounits): no regex needed
        try:
            return float(number)
        except ValueError:
            pass
    if text.lower() in NOT_AVAILABLE:
        return None
    match = _VALUE_UNIT.match(text)
    if match is None:
        raise ParseError(TOOL, _("%(field)s 的值 %(value)s 不是数字", field=field, value=repr(text)))
    return float(match[1])


_STAMP = re.compile(r"^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d)(?:\.(\d{1,6}))?$")


@functools.lru_cache(maxsize=4096)
def _whole_seconds(text: str) -> float | None:
    try:
        return datetime.strptime(text, TIMESTAMP_FORMAT.removesuffix(".%f")).timestamp()
    except ValueError:
        return None


@functools.lru_cache(maxsize=4096)
def _timestamp(text: str) -> float | None:
    """nvidia-smi's local 'YYYY/MM/DD HH:MM:SS.fff' as epoch seconds (every GPU's row of a reading shares
    it: cached)."""
    match = _STAMP.match(text)
    if match is None:
        return None
    whole = _whole_seconds(match[1])
    if whole is None:
        return None
    fraction = match[2] or "0"
    return whole + int(fraction) / 10 ** len(fraction)


ACCEPTED_LAYOUTS = _(
    "nvidia-smi --query-gpu=... --format=csv 的输出（可带 noheader、nounits）、nvidia-smi 的表格、"
    "nvidia-smi -q 的文本（可带 -d 选择）或 nvidia-smi -q -x 的 XML"
)


def _fits(query: tuple[str, ...], row: list[str]) -> bool:
    """Whether `row` can be a row of `query`: a GPU index where it has one, a timestamp where it has one."""
    stamp = query.index("timestamp") if "timestamp" in query else None
    return row[query.index("index")].isdigit() and (stamp is None or _timestamp(row[stamp]) is not None)


def _columns(first: list[str], fields: tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    """The query fields of a CSV without header: given, or the probe's own query of that width and shape
    (the inventory and the sampling query both have five columns)."""
    if fields:
        return tuple(fields)
    if len(first) == 1:
        raise ParseError(
            TOOL,
            _("第一行 %(line)s 不是 CSV 表头，也不像已知的 nvidia-smi 输出", line=repr(first[0][:80])),
        )
    same_width = [query for query in KNOWN_QUERIES if len(query) == len(first)]
    if not same_width:
        raise ParseError(TOOL, _("没有表头，且有 %(count)s 列：请给出查询字段", count=len(first)))
    return next((query for query in same_width if _fits(query, first)), same_width[-1])


@register_parser("nvidia-smi", accepts=ACCEPTED_LAYOUTS)
def parse_output(text: str, *, fields: tuple[str, ...] | list[str] | None = None) -> list[Sample]:
    """Per-GPU samples from `--query-gpu ... --format=csv[,noheader][,nounits]` output, the plain table or
    `nvidia-smi -q` text / XML."""
    if looks_like_table(text):
        return parse_table(text)
    if looks_like_query(text):
        return parse_query(text)
    rows = _rows(text)
    if not rows:
        raise ParseError(TOOL, _("输出为空"))
    if _looks_like_header(rows[0]):
        columns = tuple(_HEADER_UNIT.sub("", cell).strip() for cell in rows[0])
        rows = rows[1:]
    else:
        columns = _columns(rows[0], fields)
    samples: list[Sample] = []
    gpus: dict[str, str] = {}
    numeric = [
        (position, field, *NUMERIC_FIELDS[field])
        for position, field in enumerate(columns)
        if field in NUMERIC_FIELDS
    ]
    text_positions = [(position, field) for position, field in enumerate(columns) if field in TEXT_FIELDS]
    shapes = [
        (position, field, TEXT_SHAPES[field]) for position, field in text_positions if field in TEXT_SHAPES
    ]
    index_at = columns.index("index") if "index" in columns else None
    name_at = columns.index("name") if "name" in columns else None
    stamp_at = columns.index("timestamp") if "timestamp" in columns else None
    now = time.time()  # the time of reading, for rows without a timestamp column
    for number, row in enumerate(rows, start=1):
        if len(row) != len(columns):
            raise ParseError(
                TOOL,
                _(
                    "第 %(row)s 行有 %(values)s 个值，但有 %(columns)s 列（被截断？）",
                    row=number,
                    values=len(row),
                    columns=len(columns),
                ),
            )
        index = row[index_at] if index_at is not None else str(number - 1)
        if not index.isdigit():
            raise ParseError(
                TOOL, _("第 %(row)s 行：GPU 序号 %(index)s 不是数字", row=number, index=repr(index))
            )
        # one metadata dict per row, shared by the row's samples (nothing mutates sample metadata in place)
        metadata: dict[str, Any] = {"gpu_index": int(index)}
        metadata |= {field: row[position] for position, field in text_positions}
        for position, field, shape in shapes:
            value_text = row[position]
            if not shape.match(value_text) and value_text.lower() not in NOT_AVAILABLE:
                raise ParseError(
                    TOOL,
                    _(
                        "第 %(row)s 行：%(field)s %(value)s 格式不对（被截断？）",
                        row=number,
                        field=field,
                        value=repr(value_text),
                    ),
                )
        values = [
            (field, metric, unit, _value(row[position], field)) for position, field, metric, unit in numeric
        ]
        missing = [field for field, _metric, _unit, value in values if value is None]
        if missing:
            metadata["not_available"] = missing
        stamp = now
        if stamp_at is not None:
            stamp = _timestamp(row[stamp_at])
            if stamp is None:
                raise ParseError(
                    TOOL, _("第 %(row)s 行：时间戳 %(value)s 格式不对", row=number, value=repr(row[stamp_at]))
                )
        if name_at is not None:
            gpus[index] = row[name_at]
            samples.append(new_sample("gpu", row[name_at], "", metadata, stamp))
        samples += [
            new_sample(metric, value, unit, metadata, stamp)
            for _f, metric, unit, value in values
            if value is not None
        ]
    if gpus:
        samples.append(Sample("gpu_count", float(len(gpus)), "count", {"models": sorted(set(gpus.values()))}))
    return samples


@register_parser("nvidia-smi-sampling")
def parse_sampling(text: str) -> list[Sample]:
    """The probe's sampling output: CSV, then a workload marker line with its exit code and output."""
    csv_text, _mark, workload = text.partition(WORKLOAD_MARK)
    samples = parse_output(csv_text)
    code_text, _newline, output = workload.partition("\n")
    if workload and code_text.strip() != NO_WORKLOAD:
        if not code_text.strip().lstrip("-").isdigit():
            raise ParseError(TOOL, _("负载的退出码 %(value)s 不是数字", value=repr(code_text.strip())))
        last_line = output.strip().splitlines()[-1] if output.strip() else ""
        samples.append(Sample("gpu_workload_exit_code", float(code_text), "", {"workload_output": last_line}))
    return samples


# A bounded default workload: fp16 matmuls on every GPU torch can see; it says plainly when it cannot run.
TORCH_WORKLOAD = """
import sys, time
seconds = float(sys.argv[1])
try:
    import torch
except ImportError:
    print("workload: torch is not installed; GPUs sampled idle"); sys.exit(3)
if not torch.cuda.is_available():
    print("workload: torch sees no CUDA device"); sys.exit(4)
count = torch.cuda.device_count()
mats = [torch.randn(8192, 8192, device=f"cuda:{i}", dtype=torch.float16) for i in range(count)]
end, rounds = time.monotonic() + seconds, 0
while time.monotonic() < end:
    for m in mats:
        torch.matmul(m, m)
    rounds += 1
    if rounds % 20 == 0:
        torch.cuda.synchronize()
torch.cuda.synchronize()
print(f"workload: torch {torch.__version__} fp16 matmul 8192x8192 on {count} GPU(s), {rounds} rounds")
"""
# Sample while the workload runs: $1 seconds, $2 ms, then the workload argv (also bounded to $1 seconds;
# exit 124 then means it was still busy). Its output goes to a temp file, printed after a marker line.
SAMPLING_SCRIPT = (
    'd="$1"; ms="$2"; shift 2; out=$(mktemp); w=""; '
    'if [ "$#" -gt 0 ]; then timeout -k 5 "$d" "$@" >"$out" 2>&1 & w=$!; fi; '
    f'timeout "$d" nvidia-smi --query-gpu={",".join(SAMPLING_FIELDS)} --format=csv -lms "$ms"; s=$?; '
    f'code={NO_WORKLOAD}; if [ -n "$w" ]; then wait "$w"; code=$?; fi; '
    f'echo "{WORKLOAD_MARK}$code"; tail -n 5 "$out"; rm -f "$out"; '
    '[ "$s" -eq 124 ] && s=0; exit "$s"'
)


@register_probe
class NvidiaSmiProbe(Probe):
    """Options: mode "inventory" or "sampling" (utilisation while the workload runs)."""

    name = "nvidia-smi"
    tool = TOOL

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.mode = options.get("mode", "sampling")

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """nvidia-smi on the target (and coreutils timeout and mktemp for the bounded sampling)."""
        return {TARGET: (TOOL, "timeout", "mktemp")}

    def _workload(self, ctx: ProbeContext) -> list[str]:
        workload = ctx.params.gpu_workload
        if workload is None:
            return ["python3", "-c", TORCH_WORKLOAD, str(ctx.params.gpu_seconds)]
        return list(workload)

    def run(self, ctx: ProbeContext) -> None:
        """The inventory query, and for sampling the bounded workload with -lms sampling alongside."""
        version = ctx.tool_version(TARGET, [TOOL, "--version"])
        inventory = ["nvidia-smi", f"--query-gpu={','.join(INVENTORY_FIELDS)}", "--format=csv"]
        result = ctx.execute(
            TARGET,
            "nvidia-smi inventory",
            inventory,
            timeout=60,
            parser="nvidia-smi",
            metadata={"tool_version": version},
        )
        if result.exit_code != 0:
            detail = result.stderr.strip()[-200:]
            raise ProbeFailed(
                _(
                    "%(what)s 以状态 %(code)s 退出：%(detail)s",
                    what="nvidia-smi",
                    code=result.exit_code,
                    detail=detail,
                )
            )
        if self.mode != "sampling":
            return
        params = ctx.params
        workload = self._workload(ctx)
        argv = ["sh", "-c", SAMPLING_SCRIPT, "sh", str(params.gpu_seconds), str(params.gpu_sample_ms)]
        argv += workload
        result = ctx.execute(
            TARGET,
            "nvidia-smi sampling",
            argv,
            timeout=params.gpu_seconds + params.command_grace_s,
            parser="nvidia-smi-sampling",
            metadata={
                "tool_version": version,
                "interval_ms": params.gpu_sample_ms,
                "seconds": params.gpu_seconds,
                "workload": "built-in torch matmul" if params.gpu_workload is None else workload,
            },
        )
        if result.timed_out:
            raise ProbeFailed(_("GPU 采样超时"))

    def estimated_seconds(self, params) -> float:
        """The sampling window."""
        return params.gpu_seconds + 2 if self.mode == "sampling" else 2


# Outputs of this tool captured by hand and uploaded (the upload form, the API, `flask bench upload`).
register_upload(
    UploadTool(
        "nvidia-smi",
        "nvidia-smi",
        "gpu",
        (),
        "nvidia-smi --query-gpu=index,name,memory.total,driver_version,pci.bus_id --format=csv",
        order=60,
    )
)
