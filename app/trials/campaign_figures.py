"""Peak versus off-peak throughput of a campaign (pure): median, minimum, coefficient of variation, the
verdict (red flag 12 "sags at peak" below a share of the off-peak median) and the figures by hour of day."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

PEAK, OFFPEAK = "peak", "offpeak"


def figures(values: Sequence[float]) -> dict[str, Any] | None:
    """Count, median, minimum and coefficient of variation (population) of throughput values."""
    if not values:
        return None
    mean = statistics.fmean(values)
    return {
        "count": len(values),
        "median": round(statistics.median(values), 1),
        "minimum": round(min(values), 1),
        "cv": round(statistics.pstdev(values) / mean, 3) if mean > 0 else None,
    }


def by_hour(samples: Iterable[tuple[str, datetime, float]]) -> list[dict[str, Any]]:
    """(kind, local time, Mbit/s) samples grouped by kind and local hour: count, median, minimum."""
    grouped: dict[tuple[str, int], list[float]] = defaultdict(list)
    for kind, at, mbps in samples:
        grouped[(kind, at.hour)].append(mbps)
    return [
        {"kind": kind, "hour": hour, **(figures(values) or {})}
        for (kind, hour), values in sorted(grouped.items(), key=lambda item: item[0][1])
    ]


def outcome(peak: Sequence[float], offpeak: Sequence[float], min_share: float) -> dict[str, Any]:
    """The campaign's verdict: fail (red flag 12) when the peak median < min_share x the off-peak median."""
    peak_figures, offpeak_figures = figures(peak), figures(offpeak)
    result: dict[str, Any] = {
        PEAK: peak_figures,
        OFFPEAK: offpeak_figures,
        "threshold": min_share,
        "share": None,
        "verdict": "info",
        "red_flag": None,
    }
    if not peak_figures or not offpeak_figures or not offpeak_figures["median"]:
        missing_zh = "晚高峰" if not peak_figures else "非高峰"
        missing_en = "peak" if not peak_figures else "off-peak"
        return result | {
            "reason_zh": f"{missing_zh}时段没有吞吐测量，无法比较",
            "reason_en": f"no throughput was measured in the {missing_en} windows: nothing to compare",
        }
    share = peak_figures["median"] / offpeak_figures["median"]
    texts_zh = (
        f"晚高峰吞吐中位数 {peak_figures['median']:g} Mbit/s，为非高峰 "
        f"{offpeak_figures['median']:g} Mbit/s 的 {share:.0%}"
    )
    texts_en = (
        f"peak median throughput {peak_figures['median']:g} Mbit/s is {share:.0%} of the off-peak "
        f"{offpeak_figures['median']:g} Mbit/s"
    )
    if share < min_share:
        return result | {
            "share": round(share, 3),
            "verdict": "fail",
            "red_flag": 12,
            "reason_zh": f"{texts_zh}，低于 {min_share:.0%}：晚高峰带宽下降，表现像共享带宽",
            "reason_en": f"{texts_en}, below {min_share:.0%}: bandwidth sags at peak, like shared bandwidth",
        }
    return result | {
        "share": round(share, 3),
        "verdict": "pass",
        "reason_zh": f"{texts_zh}，不低于 {min_share:.0%}",
        "reason_en": f"{texts_en}, at least {min_share:.0%}",
    }
