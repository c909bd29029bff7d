"""`nvidia-smi -q` (the full text query providers paste most often) and its XML form `nvidia-smi -q -x`.

Both are read into one flat form per GPU: "section/sub section/field" -> value, every name lower case with
words split by spaces (the XML's `fb_memory_usage/total` and the text's "FB Memory Usage / Total" both
become "fb memory usage/total"), so one table of paths serves drivers 4xx to 580 and both layouts. The
samples are the ones the CSV query reader gives (same metric names and health metadata), so the health
checks, the inventory and the offer comparison read a `-q` paste exactly as they read a query.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from typing import Any

from benchmarks.messages import message as _
from benchmarks.sample import ParseError, Sample

TOOL = "nvidia-smi"
Fields = dict[str, str]
_BANNER = "NVSMI LOG"
_ATTACHED = re.compile(r"^Attached GPUs\s*:", re.MULTILINE)
_GPU_HEADER = re.compile(r"^GPU (?P<bus>[0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+(?:\.[0-7])?)\s*$")
_NUMBER = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(?:%|MiB|W|MHz|C|x|us|bank\(s\))?$")
_ENTITY = re.compile(r"<!ENTITY", re.IGNORECASE)
_PSTATE = re.compile(r"^P\d{1,2}$")
MAX_XML_DEPTH = 16  # nvidia-smi -q -x nests six levels under <gpu> (supported_clocks, mig_devices)
# Metric name and unit for each numeric query field (the CSV query reader in nvidia_smi uses it too).
NUMERIC_FIELDS = {
    "utilization.gpu": ("gpu_utilization", "%"),
    "utilization.memory": ("gpu_memory_utilization", "%"),
    "memory.used": ("gpu_memory_used", "MiB"),
    "memory.total": ("gpu_memory_total", "MiB"),
    "power.draw": ("gpu_power_draw", "W"),
    "temperature.gpu": ("gpu_temperature", "C"),
    "clocks.sm": ("gpu_sm_clock", "MHz"),
    "clocks.current.sm": ("gpu_sm_clock", "MHz"),
    "clocks.max.sm": ("gpu_sm_clock_max", "MHz"),
    "power.limit": ("gpu_power_limit", "W"),
    "pcie.link.gen.current": ("gpu_pcie_gen", ""),
    "pcie.link.gen.max": ("gpu_pcie_gen_max", ""),
    "pcie.link.width.current": ("gpu_pcie_width", "lanes"),
    "pcie.link.width.max": ("gpu_pcie_width_max", "lanes"),
    "ecc.errors.uncorrected.volatile.total": ("gpu_ecc_uncorrected", "count"),
    "ecc.errors.corrected.volatile.total": ("gpu_ecc_corrected", "count"),
    "retired_pages.single_bit_ecc.count": ("gpu_retired_pages_single_bit", "count"),
    "retired_pages.double_bit.count": ("gpu_retired_pages_double_bit", "count"),
}
# Query fields (the CSV names) and where -q / -q -x print them, oldest layout last where they differ.
FIELD_PATHS: dict[str, tuple[str, ...]] = {
    "name": ("product name",),
    "pci.bus_id": ("pci/bus id", "pci/pci bus id"),
    "uuid": ("gpu uuid", "uuid"),
    "serial": ("serial number", "serial"),
    "vbios_version": ("vbios version",),
    "persistence_mode": ("persistence mode",),
    "pstate": ("performance state",),
    "ecc.mode.current": ("ecc mode/current", "ecc mode/current ecc"),
    "mig.mode.current": ("mig mode/current", "mig mode/current mig"),
    "memory.total": ("fb memory usage/total",),
    "memory.used": ("fb memory usage/used",),
    "utilization.gpu": ("utilization/gpu", "utilization/gpu util"),
    "utilization.memory": ("utilization/memory", "utilization/memory util"),
    "temperature.gpu": ("temperature/gpu current temp", "temperature/gpu temp"),
    "power.draw": (
        "gpu power readings/power draw",
        "gpu power readings/average power draw",
        "gpu power readings/instantaneous power draw",
        "gpu power readings/instant power draw",
        "power readings/power draw",
    ),
    "power.limit": (
        "gpu power readings/current power limit",
        "power readings/power limit",
        "power readings/enforced power limit",
    ),
    "clocks.current.sm": ("clocks/sm", "clocks/sm clock"),
    "clocks.max.sm": ("max clocks/sm", "max clocks/sm clock"),
    "pcie.link.gen.current": (
        "pci/gpu link info/pcie generation/current",
        "pci/pci gpu link info/pcie gen/current link gen",
    ),
    "pcie.link.gen.max": (
        "pci/gpu link info/pcie generation/max",
        "pci/pci gpu link info/pcie gen/max link gen",
    ),
    "pcie.link.width.current": (
        "pci/gpu link info/link width/current",
        "pci/pci gpu link info/link widths/current link width",
    ),
    "pcie.link.width.max": (
        "pci/gpu link info/link width/max",
        "pci/pci gpu link info/link widths/max link width",
    ),
    "retired_pages.single_bit_ecc.count": (
        "retired pages/single bit ecc",
        "retired pages/multiple single bit retirement/retired count",
    ),
    "retired_pages.double_bit.count": (
        "retired pages/double bit ecc",
        "retired pages/double bit retirement/retired count",
    ),
    "retired_pages.pending": (
        "retired pages/pending page blacklist",
        "retired pages/pending",
        "retired pages/pending blacklist",
    ),
    "remapped_rows.pending": ("remapped rows/pending", "remapped rows/remapped row pending"),
    "remapped_rows.failure": (
        "remapped rows/remapping failure occurred",
        "remapped rows/remapped row failure",
    ),
}
TEXT_METADATA = (
    "name",
    "pci.bus_id",
    "uuid",
    "serial",
    "vbios_version",
    "persistence_mode",
    "pstate",
    "ecc.mode.current",
    "mig.mode.current",
    "retired_pages.pending",
    "remapped_rows.pending",
    "remapped_rows.failure",
)
# The volatile ECC counters: per memory (SRAM/DRAM, 5xx+) or as single/double bit totals (4xx).
ECC_VOLATILE = "ecc errors/volatile/"
ECC_COUNTERS = {
    "ecc.errors.uncorrected.volatile.total": ("uncorrectable", "double bit/total"),
    "ecc.errors.corrected.volatile.total": ("correctable", "single bit/total"),
}
# Clock event (throttle) reasons by name, as the bits of the clocks_event_reasons.active mask.
REASON_SECTIONS = {
    "clocks event reasons": "clocks_event_reasons.active",
    "clocks throttle reasons": "clocks_throttle_reasons.active",
}
REASON_BITS = {  # names as -q prints them (and as -q -x spells them, where it differs)
    "idle": 0x1,
    "gpu idle": 0x1,
    "applications clocks setting": 0x2,
    "sw power cap": 0x4,
    "hw slowdown": 0x8,
    "sync boost": 0x10,
    "sw thermal slowdown": 0x20,
    "hw thermal slowdown": 0x40,
    "hw power brake slowdown": 0x80,
    "display clock setting": 0x100,
    "display clocks setting": 0x100,
}
REASON_NAMES = {
    0x1: "Idle",
    0x2: "Applications Clocks Setting",
    0x4: "SW Power Cap",
    0x8: "HW Slowdown",
    0x10: "Sync Boost",
    0x20: "SW Thermal Slowdown",
    0x40: "HW Thermal Slowdown",
    0x80: "HW Power Brake Slowdown",
    0x100: "Display Clock Setting",
}


def looks_like_query(text: str) -> bool:
    """Whether `text` is `nvidia-smi -q` text (any -d selection) or its -x XML."""
    head = text[:4096]
    return _BANNER in head or "<nvidia_smi_log" in head or _ATTACHED.search(head) is not None


def _words(name: str) -> str:
    """A field name as lower-case words: "Link Width" and "link_width" -> "link width"."""
    return " ".join(name.replace("_", " ").lower().split())


# ---------------------------------------------------------------- the text layout
def _text_gpus(text: str) -> tuple[Fields, list[tuple[str, Fields]]]:
    """The header fields and, per "GPU <bus id>" block, its fields by path (first value kept)."""
    header: Fields = {}
    gpus: list[tuple[str, Fields]] = []
    fields, sections = header, []  # sections: (indent, name) of the open sections
    for raw in text.splitlines():
        line = raw.expandtabs(4).rstrip()
        if not line.strip() or line.lstrip().startswith("="):
            continue
        gpu = _GPU_HEADER.match(line)
        if gpu is not None:
            fields, sections = {}, []
            gpus.append((gpu["bus"], fields))
            continue
        indent = len(line) - len(line.lstrip(" "))
        key, colon, value = line.strip().partition(":")
        while sections and sections[-1][0] >= indent:
            sections.pop()
        path = "/".join([name for _indent, name in sections] + [_words(key)])
        if colon:
            fields.setdefault(path, value.strip())
        else:
            sections.append((indent, _words(key)))
    return header, gpus


# ---------------------------------------------------------------- the XML layout (-q -x)
def _flatten(element: ElementTree.Element, prefix: str, fields: Fields, depth: int = 1) -> None:
    """Leaf texts of `element` by path; a repeated tag is numbered ("mig device#2")."""
    if depth > MAX_XML_DEPTH:
        raise ParseError(TOOL, _("XML 嵌套超过 %(most)s 层：nvidia-smi -q -x 没有这么深", most=MAX_XML_DEPTH))
    seen: dict[str, int] = {}
    for child in element:
        name = _words(child.tag)
        seen[name] = seen.get(name, 0) + 1
        if seen[name] > 1:
            name = f"{name}#{seen[name]}"
        path = f"{prefix}{name}"
        if len(child):
            _flatten(child, f"{path}/", fields, depth + 1)
        else:
            fields.setdefault(path, " ".join((child.text or "").split()))


def _xml_gpus(text: str) -> tuple[Fields, list[tuple[str, Fields]]]:
    """The header fields and each <gpu> element's fields by path; entity declarations are refused."""
    if _ENTITY.search(text):
        raise ParseError(TOOL, _("XML 中有实体声明（<!ENTITY）：nvidia-smi -q -x 从不输出它，拒绝读取"))
    try:
        root = ElementTree.fromstring(text.strip())
    except ElementTree.ParseError as exc:
        raise ParseError(TOOL, _("不是完整的 XML：%(problem)s", problem=exc)) from None
    if root.tag != "nvidia_smi_log":
        raise ParseError(TOOL, _("XML 的根元素是 %(tag)s，不是 nvidia_smi_log", tag=repr(root.tag)))
    header = {_words(child.tag): (child.text or "").strip() for child in root if not len(child)}
    gpus = []
    for gpu in root.findall("gpu"):
        fields: Fields = {}
        _flatten(gpu, "", fields)
        gpus.append((gpu.get("id", ""), fields))
    return header, gpus


# ---------------------------------------------------------------- per-GPU readings
def _lookup(fields: Fields, field: str) -> str | None:
    """The first value printed for `field`, else None."""
    return next((fields[path] for path in FIELD_PATHS[field] if path in fields), None)


def _number(text: str | None) -> float | None:
    """A reading ("98 %", "16x", "700.00 W") as a number; None for N/A, [Not Supported] and the like."""
    found = _NUMBER.match(text.strip()) if text else None
    return float(found[1]) if found else None


def _ecc_total(fields: Fields, kind: str, old_total: str) -> float | None:
    """Volatile ECC errors of `kind` (correctable / uncorrectable) summed over SRAM and DRAM."""
    if f"{ECC_VOLATILE}{old_total}" in fields:
        return _number(fields[f"{ECC_VOLATILE}{old_total}"])
    counts = [
        _number(value)
        for path, value in fields.items()
        if path.startswith(ECC_VOLATILE) and kind in path.removeprefix(ECC_VOLATILE).split()
    ]
    known = [count for count in counts if count is not None]
    return sum(known) if known else None


def _reasons(fields: Fields) -> dict[str, Any]:
    """The active clock event (throttle) reasons as the query's hex mask, under the name the driver uses."""
    for section, key in REASON_SECTIONS.items():
        names = {
            path.removeprefix(f"{section}/"): value
            for path, value in fields.items()
            if path.startswith(f"{section}/")
        }
        if names:
            bits = {
                REASON_BITS.get(name.removeprefix(f"{section[:-1]} "), 0)
                for name, value in names.items()
                if value.lower() == "active"
            }
            active = [REASON_NAMES[bit] for bit in sorted(bits) if bit]
            return {key: f"0x{sum(bits):016x}", "clock_reasons_active": active}
    return {}


def _mig_devices(fields: Fields) -> int:
    return len({path.split("/")[1] for path in fields if path.startswith("mig devices/")})


def _readings(fields: Fields) -> dict[str, float | None]:
    """Numeric query fields of one GPU (None where the GPU does not report them)."""
    readings: dict[str, float | None] = {}
    for field in (field for field in NUMERIC_FIELDS if field in FIELD_PATHS):
        printed = [_number(fields[path]) for path in FIELD_PATHS[field] if path in fields]
        if printed:  # the first number printed (a driver may print "N/A" for one power draw, a number next)
            readings[field] = next((value for value in printed if value is not None), None)
    if any(path.startswith(ECC_VOLATILE) for path in fields):
        for field, (kind, old_total) in ECC_COUNTERS.items():
            readings[field] = _ecc_total(fields, kind, old_total)
    return readings


def _gpu_samples(index: int, bus: str, fields: Fields, common: dict[str, Any]) -> list[Sample]:
    """The "gpu" sample (where the name is printed) and one sample per numeric reading of one GPU."""
    metadata: dict[str, Any] = {**common, "gpu_index": index, "pci.bus_id": bus}
    metadata |= {field: value for field in TEXT_METADATA if (value := _lookup(fields, field)) is not None}
    metadata |= _reasons(fields)
    if mig := _mig_devices(fields):
        metadata["mig_devices"] = mig
    readings = _readings(fields)
    missing = [field for field, value in readings.items() if value is None]
    if missing:
        metadata["not_available"] = missing
    samples = [Sample("gpu", metadata["name"], "", metadata)] if "name" in metadata else []
    for field, value in readings.items():
        if value is not None:
            metric, unit = NUMERIC_FIELDS[field]
            samples.append(Sample(metric, value, unit, metadata))
    if _PSTATE.match(metadata.get("pstate", "")):  # P0 (full speed) .. P12; also what -d PERFORMANCE keeps
        samples.append(Sample("gpu_performance_state", float(metadata["pstate"][1:]), "", metadata))
    return samples


def parse_query(text: str) -> list[Sample]:
    """Per-GPU samples and the GPU count from `nvidia-smi -q [-d ...]` text or `nvidia-smi -q -x` XML."""
    xml = text.lstrip().startswith("<")
    header, gpus = _xml_gpus(text) if xml else _text_gpus(text)
    if not gpus:
        raise ParseError(TOOL, _("nvidia-smi -q 输出里没有 GPU 段（没有 'GPU 0000...' 行）"))
    common = {
        "driver_version": header.get("driver version"),
        "cuda_version": header.get("cuda version"),
        "layout": "query-xml" if xml else "query",
    }
    samples: list[Sample] = []
    for index, (bus, fields) in enumerate(gpus):
        samples += _gpu_samples(index, bus, fields, common)
    names = sorted({str(s.value) for s in samples if s.metric == "gpu"})
    count = {**common, "models": names}
    attached = _number(header.get("attached gpus"))
    if attached is not None and attached != len(gpus):
        count["attached_gpus"] = int(attached)  # a -i selection, or a paste cut short
    samples.append(Sample("gpu_count", float(len(gpus)), "count", count))
    return samples
