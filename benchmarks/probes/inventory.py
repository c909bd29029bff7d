"""Inventory: OS, kernel, CPU, memory, GPUs, NVIDIA driver and CUDA versions, in one round trip.

The script is fixed text (no caller values); each section starts with a `### name` line.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from benchmarks.messages import message as _
from benchmarks.probes import register_parser, register_probe
from benchmarks.probes.base import TARGET, Probe, ProbeContext, check_result
from benchmarks.probes.nvidia_smi import INVENTORY_FIELDS
from benchmarks.probes.nvidia_smi import parse_output as parse_nvidia_smi
from benchmarks.sample import ParseError, Sample

TOOL = "inventory"
SCRIPT = f"""
echo '### os-release'; cat /etc/os-release 2>/dev/null
echo '### uname'; uname -srm
echo '### nproc'; nproc 2>/dev/null || getconf _NPROCESSORS_ONLN
echo '### cpuinfo'; grep -m1 -E '^(model name|Model)' /proc/cpuinfo
echo '### meminfo'; grep -E '^(MemTotal|MemAvailable):' /proc/meminfo
echo '### nvidia-smi'
if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu={",".join(INVENTORY_FIELDS)} --format=csv 2>&1
  echo '### nvidia-smi banner'; nvidia-smi 2>/dev/null | grep -m1 -o 'CUDA Version: *[0-9.]*'
else echo 'not installed'; fi
echo '### nvcc'
if command -v nvcc >/dev/null 2>&1; then nvcc --version | tail -n 2; else echo 'not installed'; fi
""".strip()
_SECTION = re.compile(r"^### (.+)$", re.MULTILINE)
REQUIRED = ("uname", "nproc", "meminfo")


def _sections(text: str) -> dict[str, str]:
    parts = _SECTION.split(text)
    return {parts[i].strip(): parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _os(body: str) -> list[Sample]:
    lines = [line for line in body.splitlines() if "=" in line and not line.startswith("#")]
    values = dict(shlex.split(line)[0].split("=", 1) for line in lines)
    name = values.get("PRETTY_NAME") or " ".join(filter(None, [values.get("NAME"), values.get("VERSION")]))
    if not name:
        return []
    return [Sample("os", name, "", {"id": values.get("ID"), "version_id": values.get("VERSION_ID")})]


def _uname(body: str) -> list[Sample]:
    return [Sample("kernel", body.splitlines()[0].strip(), "")] if body else []


def _nproc(body: str) -> list[Sample]:
    if not body.splitlines() or not body.splitlines()[0].strip().isdigit():
        raise ParseError(TOOL, _("CPU 数量 %(value)s 不是数字", value=repr(body[:40])))
    return [Sample("cpu_count", float(body.splitlines()[0]), "count")]


def _cpuinfo(body: str) -> list[Sample]:
    _name, _colon, model = body.partition(":")
    return [Sample("cpu_model", " ".join(model.split()), "")] if model.strip() else []


def _meminfo(body: str) -> list[Sample]:
    samples = []
    for key, metric in (("MemTotal", "memory_total"), ("MemAvailable", "memory_available")):
        match = re.search(rf"^{key}:\s+(\d+) kB", body, re.MULTILINE)
        if match:
            samples.append(Sample(metric, int(match[1]) / 2**20, "GiB"))
    if not samples:
        raise ParseError(TOOL, _("/proc/meminfo 的输出中没有 MemTotal"))
    return samples


def _nvidia_smi(body: str) -> list[Sample]:
    if body.startswith("not installed"):
        return [Sample("gpu_count", 0.0, "count", {"nvidia_smi": "not installed"})]
    lines = body.splitlines()
    if (lines and "failed" in lines[0].lower()) or "NVIDIA-SMI has failed" in body:
        return [Sample("nvidia_smi_error", lines[0][:300], "")]
    samples = parse_nvidia_smi(body)
    drivers = {sample.metadata.get("driver_version") for sample in samples if sample.metric == "gpu"}
    samples += [Sample("driver_version", driver, "") for driver in sorted(filter(None, drivers))]
    return samples


def _banner(body: str) -> list[Sample]:
    match = re.search(r"CUDA Version:\s*([\d.]+)", body)
    return [Sample("cuda_driver_version", match[1], "")] if match else []


def _nvcc(body: str) -> list[Sample]:
    match = re.search(r"release ([\d.]+)", body)
    return [Sample("cuda_toolkit_version", match[1], "")] if match else []


SECTION_PARSERS: dict[str, Callable[[str], list[Sample]]] = {
    "os-release": _os,
    "uname": _uname,
    "nproc": _nproc,
    "cpuinfo": _cpuinfo,
    "meminfo": _meminfo,
    "nvidia-smi": _nvidia_smi,
    "nvidia-smi banner": _banner,
    "nvcc": _nvcc,
}


@register_parser("inventory")
def parse_output(text: str) -> list[Sample]:
    """OS, kernel, CPU, memory, GPU, driver and CUDA samples from the inventory script's output."""
    sections = _sections(text)
    missing = [name for name in REQUIRED if name not in sections]
    if missing:
        raise ParseError(TOOL, _("缺少段落：%(sections)s（输出被截断？）", sections=", ".join(missing)))
    samples: list[Sample] = []
    for name, body in sections.items():
        parser = SECTION_PARSERS.get(name)
        if parser is not None:
            try:
                samples += parser(body)
            except ValueError as exc:  # includes ParseError from the nvidia-smi CSV
                raise ParseError(TOOL, _("段落 %(section)s：%(problem)s", section=name, problem=exc)) from exc
    return samples


@register_probe
class InventoryProbe(Probe):
    """What the server is: one shell script, fixed text."""

    name = "inventory"
    tool = "sh"

    def run(self, ctx: ProbeContext) -> None:
        """Run the inventory script."""
        result = ctx.execute(TARGET, "inventory", ["sh", "-c", SCRIPT], timeout=60, parser="inventory")
        check_result(result, _("硬件清单脚本"))

    def estimated_seconds(self, params) -> float:
        """Quick."""
        return 1.0
