"""The plain `nvidia-smi` table that providers paste: GPU names, memory, utilisation, power, driver, CUDA.

Reads the layouts of drivers 4xx (narrow columns, names cut to "Tesla V100-SXM2...") and 5xx (wide
columns); the process list below the GPU table is ignored.
"""

from __future__ import annotations

import re
from typing import Any

from benchmarks.messages import message as _
from benchmarks.sample import ParseError, Sample

TOOL = "nvidia-smi"
_VERSIONS = re.compile(
    r"NVIDIA-SMI\s+(?P<smi>\S+)\s+Driver Version:\s+(?P<driver>\S+)(?:\s+CUDA Version:\s+(?P<cuda>[\w.]+))?"
)
_FIRST = re.compile(
    r"^\|\s+(?P<index>\d+)\s+(?P<name>.+?)\s+(?P<persistence>On|Off)\s*\|"
    r"\s*(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s+(?P<display>On|Off)\s*\|"
    r"\s*(?P<ecc>\S+)\s*\|\s*$"
)
_SECOND = re.compile(
    r"^\|\s*(?P<fan>\d+%|N/A|ERR!)\s+(?P<temp>\d+C|N/A|ERR!)\s+(?P<perf>P\d+|N/A|ERR!)\s+"
    r"(?:(?P<power>\d+W|N/A|ERR!)\s*/\s*(?P<cap>\d+W|N/A|ERR!))?\s*\|"
    r"\s*(?P<used>\d+)MiB\s*/\s*(?P<total>\d+)MiB\s*\|\s*(?P<util>\d+%|N/A|ERR!)\s+(?P<mode>[\w.]+)\s*\|\s*$"
)
_NUMERIC = {
    "used": ("gpu_memory_used", "MiB"),
    "total": ("gpu_memory_total", "MiB"),
    "util": ("gpu_utilization", "%"),
    "power": ("gpu_power_draw", "W"),
    "cap": ("gpu_power_limit", "W"),
    "temp": ("gpu_temperature", "C"),
}


def looks_like_table(text: str) -> bool:
    """Whether `text` is the plain nvidia-smi table rather than CSV query output."""
    return "NVIDIA-SMI" in text and "+---" in text


def _number(text: str | None) -> float | None:
    digits = (text or "").rstrip("%CW")
    return float(digits) if digits.isdigit() else None


def _gpu_samples(first: re.Match, second: re.Match, common: dict[str, Any]) -> list[Sample]:
    name = first["name"]
    metadata: dict[str, Any] = {
        **common,
        "gpu_index": int(first["index"]),
        "name": name,
        "pci.bus_id": first["bus"],
        "persistence_mode": first["persistence"],
        "compute_mode": second["mode"],
        "performance_state": second["perf"],
    }
    if name.endswith("..."):
        metadata["name_truncated"] = True
    ecc = _number(first["ecc"])
    if ecc is not None:
        metadata["ecc_volatile_uncorrected"] = int(ecc)
    samples = [Sample("gpu", name, "", dict(metadata))]
    for group, (metric, unit) in _NUMERIC.items():
        value = _number(second[group])
        if value is not None:
            samples.append(Sample(metric, value, unit, dict(metadata)))
    if ecc is not None:  # "Volatile Uncorr. ECC": the count the health query calls ecc.errors.uncorrected
        samples.append(Sample("gpu_ecc_uncorrected", ecc, "count", dict(metadata)))
    return samples


def parse_table(text: str) -> list[Sample]:
    """Per-GPU samples and the GPU count from the plain table; ParseError when a GPU row is cut short."""
    versions = _VERSIONS.search(text)
    if versions is None:
        raise ParseError(TOOL, _("没有 'NVIDIA-SMI ... Driver Version' 行：这是 nvidia-smi 的表格吗？"))
    common = {"driver_version": versions["driver"], "cuda_version": versions["cuda"], "layout": "table"}
    lines = text.splitlines()
    samples: list[Sample] = []
    names: list[str] = []
    for number, line in enumerate(lines):
        first = _FIRST.match(line)
        if first is None:
            continue
        second = _SECOND.match(lines[number + 1]) if number + 1 < len(lines) else None
        if second is None:
            raise ParseError(TOOL, _("GPU %(index)s：缺少温度、功耗和显存那一行", index=first["index"]))
        samples += _gpu_samples(first, second, common)
        names.append(first["name"])
    if not names:
        raise ParseError(TOOL, _("表格里没有 GPU（没有带序号、名称和总线 ID 的行）"))
    samples.append(Sample("gpu_count", float(len(names)), "count", {**common, "models": sorted(set(names))}))
    return samples
