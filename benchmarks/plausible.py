"""Plausible ranges of measured values: a number no real GPU server can show is not evidence.

Each metric has a range (RANGES by name, then PREFIX_RANGES, then UNIT_RANGES by unit; any other number
must at least be finite and not negative). A value outside it, NaN or infinite is implausible: an upload
holding one is refused, so it is never stored or counted as measured. The upper bounds sit above what
today's fastest hardware does, with room to spare, so that only impossible values are refused; each
bound's reason is written beside it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from benchmarks.messages import message as _
from benchmarks.sample import Sample


@dataclass(frozen=True)
class Plausible:
    """The closed range [low, high] a metric's values must lie in."""

    low: float
    high: float

    def admits(self, value: float) -> bool:
        """Whether `value` is finite and inside the range."""
        try:
            number = float(value)
        except OverflowError:  # an int beyond any double
            return False
        return math.isfinite(number) and self.low <= number <= self.high

    def describe(self, unit: str) -> str:
        """The range as a reader sees it: "0–3,200,000 Mbit/s", or "≥ 0" when unbounded above."""
        low, high = _shown(self.low), _shown(self.high)
        text = f"≥ {low}" if math.isinf(self.high) else f"{low}–{high}"
        return f"{text} {unit}".strip()


@dataclass(frozen=True)
class Implausible:
    """A sample whose value lies outside its metric's plausible range."""

    metric: str
    value: float
    unit: str
    accepted: Plausible

    def shown_value(self) -> str:
        """The value as quoted in a refusal: "-1 IOPS", "1e+308 IOPS", "nan %"."""
        try:
            text = _shown(float(self.value))
        except OverflowError:
            text = f"{str(self.value)[:12]}…"
        return f"{text} {self.unit}".strip()


def _shown(number: float) -> str:
    """3200000 as "3,200,000", 2**64 as "1.84467e+19", -1.0 as "-1"."""
    number = float(number)
    if math.isfinite(number) and number.is_integer() and abs(number) < 1e15:
        return f"{int(number):,}"
    return format(number, ",.6g")


# Ten minutes: no test gpuvet runs or asks for lasts as long, so no latency or round trip can be longer.
TEN_MINUTES_MS = 10 * 60 * 1000
LATENCY_US = Plausible(0, TEN_MINUTES_MS * 1000)
ROUND_TRIP_MS = Plausible(0, TEN_MINUTES_MS)
# A share of something: 0 to 100 %.
PERCENT = Plausible(0, 100)
# The fastest servers carry eight 400 Gbit/s NICs: 3.2 Tbit/s in all, for one link or all together.
NETWORK_MBITS = Plausible(0, 3_200_000)
NETWORK_GBITS = Plausible(0, 3_200)
# Two sockets' 160 PCIe 5.0 lanes carry about 630 GB/s one way; no storage can be read or written faster.
STORAGE_MIBS = Plausible(0, 1_000_000)
# Sixteen of the fastest PCIe 5.0 NVMe drives (about 3 million random 4 KiB reads a second each).
IOPS = Plausible(0, 50_000_000)
# NVLink 5 moves 1.8 TB/s per GPU (both directions together); twice that leaves room for one generation.
COLLECTIVE_GBS = Plausible(0, 3_600)
# 64-bit counters (ECC errors, TCP retransmits, Xid events) cannot count further.
COUNTER = Plausible(0, 2**64)
# The largest GPU memory today is 288 GB; 1 TiB per GPU is more than three times that.
GPU_MEMORY_MIB = Plausible(0, 1024 * 1024)
# The largest single servers hold 32 TiB of RAM; 64 TiB leaves room.
HOST_MEMORY_GIB = Plausible(0, 64 * 1024)
# A whole GB200 superchip draws 2.7 kW; no one GPU board reaches 5 kW.
GPU_POWER_W = Plausible(0, 5_000)
# Outdoor cold at the low end; silicon shuts itself down long before 150 C at the high end.
TEMPERATURE_C = Plausible(-40, 150)
# GPU clocks run at about 2 GHz; 10 GHz is beyond any silicon sold.
CLOCK_MHZ = Plausible(0, 10_000)

RANGES: dict[str, Plausible] = {
    # iperf3 (Mbit/s, retransmitted segments, UDP jitter and loss)
    "throughput": NETWORK_MBITS,
    "throughput_sender": NETWORK_MBITS,
    "throughput_interval": NETWORK_MBITS,
    "retransmits": COUNTER,
    "udp_jitter": ROUND_TRIP_MS,
    "udp_loss": PERCENT,
    # ping
    "packet_loss": PERCENT,
    "rtt_min": ROUND_TRIP_MS,
    "rtt_avg": ROUND_TRIP_MS,
    "rtt_max": ROUND_TRIP_MS,
    "rtt_mdev": ROUND_TRIP_MS,
    # fio (latencies in us by the "us" unit below)
    "read_iops": IOPS,
    "write_iops": IOPS,
    "read_bandwidth": STORAGE_MIBS,
    "write_bandwidth": STORAGE_MIBS,
    "write_effective_bandwidth": STORAGE_MIBS,
    # data loading: each file read is at least one I/O
    "dataload_files_per_s": IOPS,
    "dataload_mib_per_s": STORAGE_MIBS,
    # RDMA (perftest, ibv_devinfo)
    "rdma_link_rate": NETWORK_GBITS,
    "rdma_bw": NETWORK_GBITS,
    "rdma_bw_peak": NETWORK_GBITS,
    "rdma_gbps": NETWORK_GBITS,
    # nccl-tests
    "nccl_algbw": COLLECTIVE_GBS,
    "nccl_busbw": COLLECTIVE_GBS,
    "nccl_busbw_peak": COLLECTIVE_GBS,
    "nccl_busbw_average": COLLECTIVE_GBS,
    # nvidia-smi
    "gpu_utilization": PERCENT,
    "gpu_memory_utilization": PERCENT,
    "gpu_memory_used": GPU_MEMORY_MIB,
    "gpu_memory_total": GPU_MEMORY_MIB,
    "gpu_power_draw": GPU_POWER_W,
    "gpu_power_limit": GPU_POWER_W,
    "gpu_temperature": TEMPERATURE_C,
    "gpu_sm_clock": CLOCK_MHZ,
    "gpu_sm_clock_max": CLOCK_MHZ,
    "gpu_pcie_gen": Plausible(1, 7),  # PCIe 7.0 is the newest generation specified
    "gpu_pcie_gen_max": Plausible(1, 7),
    "gpu_pcie_width": Plausible(0, 32),  # x32 is the widest link PCIe defines (0: link down)
    "gpu_pcie_width_max": Plausible(0, 32),
    "gpu_ecc_uncorrected": COUNTER,
    "gpu_ecc_corrected": COUNTER,
    "gpu_retired_pages_single_bit": COUNTER,
    "gpu_retired_pages_double_bit": COUNTER,
    "gpu_count": Plausible(0, 256),  # one host's PCIe tree: the largest hold 16 GPUs
    "gpu_xid": Plausible(0, 1_000),  # NVIDIA's Xid codes run below 200
    "gpu_xid_events": COUNTER,
    "gpu_workload_exit_code": Plausible(0, 255),  # a process's exit status is one byte
    "gpu_performance_state": Plausible(0, 15),  # NVML performance states P0 (full speed) to P15
    # inventory
    "cpu_count": Plausible(1, 8_192),  # Linux's largest NR_CPUS
    "memory_total": HOST_MEMORY_GIB,
    "memory_available": HOST_MEMORY_GIB,
    # DCGM: 1 when dcgmi diag ran, 0 when it could not
    "dcgm_diag_available": Plausible(0, 1),
}
PREFIX_RANGES: tuple[tuple[str, Plausible], ...] = (("rdma_latency_", LATENCY_US),)
UNIT_RANGES: dict[str, Plausible] = {
    "us": LATENCY_US,
    "ms": ROUND_TRIP_MS,
    "%": PERCENT,
    "C": TEMPERATURE_C,
    "Mbit/s": NETWORK_MBITS,
    "Gbit/s": NETWORK_GBITS,
    "MiB/s": STORAGE_MIBS,
    "GB/s": COLLECTIVE_GBS,
    "IOPS": IOPS,
    "MiB": GPU_MEMORY_MIB,
    "GiB": HOST_MEMORY_GIB,
    "W": GPU_POWER_W,
    "MHz": CLOCK_MHZ,
    "count": COUNTER,
}
# Any other number: a measurement is never negative, NaN or infinite.
NOT_NEGATIVE = Plausible(0, math.inf)


def range_of(metric: str, unit: str) -> Plausible:
    """The plausible range of a metric's values (by name, then name prefix, then unit)."""
    if metric in RANGES:
        return RANGES[metric]
    for prefix, accepted in PREFIX_RANGES:
        if metric.startswith(prefix):
            return accepted
    return UNIT_RANGES.get(unit, NOT_NEGATIVE)


def implausible(samples: Iterable[Sample]) -> list[Implausible]:
    """The numeric samples outside their metric's range, the first of each metric, in order."""
    found: dict[str, Implausible] = {}
    for sample in samples:
        value = sample.value
        if not isinstance(value, (int, float)) or isinstance(value, bool) or sample.metric in found:
            continue
        accepted = range_of(sample.metric, sample.unit)
        if not accepted.admits(value):
            found[sample.metric] = Implausible(sample.metric, value, sample.unit, accepted)
    return list(found.values())


def implausible_message(found: Implausible) -> str:
    """What an executed run's step says of a value no machine can show (its output's samples are dropped)."""
    return _(
        "%(metric)s 的值 %(value)s 不可信：可接受范围 %(accepted)s；此输出的结果未计入测量",
        metric=found.metric,
        value=found.shown_value(),
        accepted=found.accepted.describe(found.unit),
    )
