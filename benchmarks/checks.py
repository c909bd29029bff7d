"""What a comparison check is: claims, thresholds, the inputs a check reads, its verdict; the registry.

benchmarks.compare holds the checks of a single server and runs them all; benchmarks.compare_cluster adds
those of a node matrix. Both register here with `@check(name)`, so neither imports the other's checks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from benchmarks.sample import Sample


class Verdict(StrEnum):
    """Outcome of one comparison."""

    passed = "pass"
    warn = "warn"
    failed = "fail"
    info = "info"


@dataclass(frozen=True)
class Claims:
    """What the offer claims (Offer fields; None where the provider states nothing)."""

    public_mbps: float | None = None
    intranet_gbps: float | None = None
    bandwidth_type: str | None = None  # dedicated / shared / unknown
    storage_type: str | None = None  # local_nvme / local_sata_ssd / cloud_disk / nfs / parallel_fs / unknown
    nominal_iops: float | None = None
    gpu_model: str | None = None
    gpus_per_node: int | None = None
    rdma_gbps: float | None = None  # claimed RDMA bandwidth per node (Offer.rdma_gbps)


@dataclass(frozen=True)
class Thresholds:
    """Verdict boundaries (DOMAIN.md section 5 defaults)."""

    bandwidth_pass: float = 0.8  # measured / nominal
    bandwidth_warn: float = 0.5
    bandwidth_beyond_claim: float = 1.5  # measured / nominal above this: probably not over the sold link
    iops_pass: float = 0.8
    iops_warn: float = 0.5
    write_pass: float = 0.8  # fsync'd write MiB/s / the claimed storage type's usual floor
    write_warn: float = 0.5
    ping_loss_fail_pct: float = 5.0  # any loss warns; this much fails
    jitter_warn_ms: float = 5.0  # mdev above this and above jitter_warn_ratio x avg warns
    jitter_warn_ratio: float = 0.25
    stability_max_cv: float = 0.15  # coefficient of variation of repeated throughput
    stability_min_over_median: float = 0.7
    stability_min_samples: int = 3
    peak_min_share: float = 0.7  # campaign: peak median / off-peak median below this = sags at peak
    gpu_busy_pct: float = 90.0
    gpu_low_pct: float = 80.0
    dataload_min_scaling: float = 1.3  # all readers / one reader below this: more readers do not help
    # Ring all-reduce bus bandwidth of one 8-GPU node, GB/s (DOMAIN.md section 5), by model key
    collective_busbw_gbs: dict[str, float] = field(
        default_factory=lambda: {"H100": 370.0, "H200": 370.0, "A100": 232.0}
    )
    typical_iops: dict[str, tuple[float, float]] = field(
        default_factory=lambda: {
            "local_nvme": (100_000.0, 1_000_000.0),
            "local_ssd": (20_000.0, 100_000.0),
            "virtual_disk": (1_000.0, 50_000.0),
            "network_block": (1_000.0, 50_000.0),
            "network_fs": (1_000.0, 50_000.0),
        }
    )
    # 1 MiB sequential writes with fsync, MiB/s: what the storage kind usually sustains at least
    typical_write_mib_s: dict[str, float] = field(
        default_factory=lambda: {
            "local_nvme": 1000.0,
            "local_ssd": 250.0,
            "virtual_disk": 80.0,
            "network_block": 80.0,
            "network_fs": 80.0,
        }
    )


@dataclass(frozen=True)
class Comparison:
    """One claim-versus-measurement verdict; `red_flag` is the DOMAIN.md section 4 number it raises."""

    check: str
    verdict: Verdict
    measured: float | str | None
    claimed: float | str | None
    ratio: float | None
    unit: str
    reason_zh: str
    reason_en: str
    subject: str = ""
    red_flag: int | None = None
    evidence: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "check": self.check,
            "verdict": self.verdict.value,
            "measured": self.measured,
            "claimed": self.claimed,
            "ratio": self.ratio,
            "unit": self.unit,
            "reason_zh": self.reason_zh,
            "reason_en": self.reason_en,
            "subject": self.subject,
            "red_flag": self.red_flag,
            "evidence": self.evidence,
        }


@dataclass(frozen=True)
class Inputs:
    """What checks read: the claims, samples grouped by metric, thresholds and tools found missing."""

    claims: Claims
    samples: dict[str, list[Sample]]
    thresholds: Thresholds
    missing_tools: frozenset[str]

    def of(self, metric: str, **metadata: Any) -> list[Sample]:
        """Samples of `metric` whose metadata matches every key given."""
        return [
            sample
            for sample in self.samples.get(metric, [])
            if all(sample.metadata.get(key) == value for key, value in metadata.items())
        ]


Check = Callable[[Inputs], Iterable[Comparison]]
CHECKS: dict[str, Check] = {}


def check(name: str) -> Callable[[Check], Check]:
    """Register a comparison check; a duplicate name raises."""

    def decorator(function: Check) -> Check:
        if name in CHECKS:
            raise ValueError(f"check {name!r} is registered twice")
        CHECKS[name] = function
        return function

    return decorator


def ratio_verdict(ratio: float, pass_at: float, warn_at: float) -> Verdict:
    """pass at >= pass_at, warn at >= warn_at, else fail."""
    if ratio >= pass_at:
        return Verdict.passed
    return Verdict.warn if ratio >= warn_at else Verdict.failed


@functools.lru_cache(maxsize=4096)
def model_key(name: str) -> str:
    """A GPU name reduced for matching: "NVIDIA H100 80GB HBM3" -> "h10080gbhbm3", "H100" -> "h100"."""
    return re.sub(r"[^0-9a-z]", "", name.lower().replace("nvidia", "").replace("geforce", ""))
