"""Benchmark runs as report measurements: what was measured for each offer claim, and chart series.

`measurements_from_runs` is pure: it takes plain run records (comparisons and samples as the benchmark
runner stores them) and returns the "measurements" source shape documented in app/reports/__init__.py.
Raw samples stay in the runs; the report keeps only these figures, with long series thinned out.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

# Comparison verdicts (benchmarks.compare.Verdict) as report verdicts; "info" carries no verdict.
VERDICTS = {"pass": "pass", "warn": "needs_review", "fail": "fail"}
WORST = ("fail", "needs_review", "pass")
MAX_POINTS = 120  # per chart series: enough to see swings, small enough to draw quickly
PATHS = {"intranet": ("intranet_gbps", 0.001, "Gbps"), "public": ("public_mbps", 1.0, "Mbps")}
PATH_NAMES = {"intranet": ("内网", "intranet"), "public": ("公网", "public")}
# The measured figures (bench_figure) each report claim stands for: where one run counts for the figure
# (app.trials.measurements), the report claims it from that run only.
CLAIM_FIGURES = {
    "intranet_gbps": ("intranet_gbps",),
    "public_mbps": ("public_mbps",),
    "nominal_iops": ("read_iops",),
    "storage_type": ("storage_type",),
    "bandwidth_type": ("bandwidth_type",),
    "gpu": ("gpu_count", "gpu_model"),
}
Counted = dict[tuple[Any, str], Any]  # (offer id, figure) -> the id of the run that counts for it


def _verdict(value: Any) -> str | None:
    return VERDICTS.get(str(value)) if value is not None else None


def _worst(verdicts: Iterable[str | None]) -> str | None:
    present = [verdict for verdict in verdicts if verdict]
    return min(present, key=WORST.index) if present else None


def thin(points: list[tuple[float, float]], limit: int = MAX_POINTS) -> list[list[float]]:
    """At most `limit` points: consecutive points averaged in equal buckets (x and y alike)."""
    if len(points) <= limit:
        return [[round(x, 3), round(y, 3)] for x, y in points]
    size = len(points) / limit
    buckets = [points[int(i * size) : int((i + 1) * size)] for i in range(limit)]
    return [
        [round(sum(x for x, _ in bucket) / len(bucket), 3), round(sum(y for _, y in bucket) / len(bucket), 3)]
        for bucket in buckets
        if bucket
    ]


def _minutes(samples: list[dict[str, Any]]) -> list[tuple[float, float]]:
    """(minutes since the first sample, value) in time order."""
    timed = sorted((float(s.get("timestamp") or 0.0), float(s["value"])) for s in samples)
    start = timed[0][0] if timed else 0.0
    return [((stamp - start) / 60.0, value) for stamp, value in timed]


def _storage_names() -> dict[str, tuple[str, str]]:
    try:
        from benchmarks.compare import STORAGE_NAMES
    except ImportError:  # the benchmark package is optional for reports
        return {}
    return STORAGE_NAMES


class _Collector:
    """Gathers claim measurements (the run that counts, else the latest run, wins) and chart series."""

    def __init__(self, counted: Counted | None = None) -> None:
        self.counted = counted or {}
        self.claims: dict[tuple[Any, str], dict[str, Any]] = {}
        self.series: dict[str, list[dict[str, Any]]] = {"throughput": [], "iops": [], "gpu_util": []}

    def claim(self, offer_id: Any, metric: str, run_id: Any, **values: Any) -> None:
        owners = (self.counted.get((offer_id, figure)) for figure in CLAIM_FIGURES.get(metric, ()))
        owner = next((found for found in owners if found is not None), None)
        if owner is not None and owner != run_id:
            return  # another run counts for this figure of the offer
        self.claims[(offer_id, metric)] = {"offer_id": offer_id, "metric": metric, "run_id": run_id, **values}

    def bandwidth(self, run: dict[str, Any], steps: dict[str, str]) -> None:
        best: dict[str, dict[str, Any]] = {}
        for comparison in run["comparisons"]:
            if comparison.get("check") != "bandwidth" or comparison.get("measured") is None:
                continue
            path = steps.get(comparison.get("subject", ""), "public")
            if path not in PATHS or comparison["measured"] <= best.get(path, {}).get("measured", -1):
                continue
            best[path] = comparison
        for path, comparison in best.items():
            metric, factor, unit = PATHS[path]
            value = round(float(comparison["measured"]) * factor, 3)
            self.claim(
                run["offer_id"],
                metric,
                run["run_id"],
                value=value,
                unit=unit,
                verdict=_verdict(comparison["verdict"]),
            )

    def other_claims(self, run: dict[str, Any]) -> None:
        by_check: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for comparison in run["comparisons"]:
            by_check[comparison.get("check", "")].append(comparison)
        for comparison in by_check.get("iops", []):
            self.claim(
                run["offer_id"],
                "nominal_iops",
                run["run_id"],
                value=comparison["measured"],
                unit="IOPS",
                verdict=_verdict(comparison["verdict"]),
            )
        for comparison in by_check.get("storage_type", []):
            zh, en = _storage_names().get(str(comparison["measured"]), (str(comparison["measured"]),) * 2)
            self.claim(
                run["offer_id"],
                "storage_type",
                run["run_id"],
                value=comparison["measured"],
                text_zh=zh,
                text_en=en,
                verdict=_verdict(comparison["verdict"]),
            )
        for comparison in by_check.get("stability", []):
            verdict = _verdict(comparison["verdict"])
            if verdict is None:
                continue
            cv = comparison.get("measured")
            steady = verdict == "pass"
            self.claim(
                run["offer_id"],
                "bandwidth_type",
                run["run_id"],
                value=cv,
                text_zh=f"{'稳定，像独享' if steady else '波动大，像共享'}（CV {cv}）",
                text_en=f"{'steady, like dedicated' if steady else 'swings, like shared'} (CV {cv})",
                verdict=verdict,
            )
        gpu = by_check.get("gpu_count", []) + by_check.get("gpu_model", [])
        if gpu:
            count = next((c["measured"] for c in gpu if c["check"] == "gpu_count"), "?")
            model = next((c["measured"] for c in gpu if c["check"] == "gpu_model"), "GPU")
            self.claim(
                run["offer_id"],
                "gpu",
                run["run_id"],
                value=f"{model} × {count}",
                verdict=_worst(_verdict(c["verdict"]) for c in gpu),
            )

    def _throughput(
        self, run: dict[str, Any], server: str, path: str, points: list[tuple[float, float]]
    ) -> None:
        claim_key, factor, unit = PATHS[path]
        nominal = (run.get("claims") or {}).get(claim_key)
        self.series["throughput"].append(
            {
                "name": f"{server} · {PATH_NAMES[path][0]}/{PATH_NAMES[path][1]}",
                "server": server,  # the report names the path in its own language (document.series_name)
                "path": path,
                "unit": unit,
                "nominal": nominal,
                "points": thin([(minute, value * factor) for minute, value in points]),
            }
        )

    def add_series(self, run: dict[str, Any]) -> None:
        server = run.get("server") or f"#{run['run_id']}"
        samples = run["samples"]
        stable: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for sample in samples:
            meta = sample.get("metadata") or {}
            if sample["metric"] == "throughput" and meta.get("purpose") == "stability":
                stable[meta.get("path", "public")].append(sample)
        charted: set[str] = set()
        for path, found in stable.items():
            if len(found) >= 2 and path in PATHS:
                self._throughput(run, server, path, _minutes(found))
                charted.add(path)
        # Without a stability run, the per-second intervals of the first throughput test still show swings.
        intervals: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
        for sample in samples:
            meta = sample.get("metadata") or {}
            if (
                sample["metric"] == "throughput_interval"
                and meta.get("purpose", "throughput") == "throughput"
            ):
                intervals[(meta.get("path", "public"), meta.get("step", ""))].append(
                    (float(meta.get("start") or 0.0) / 60.0, float(sample["value"]))
                )
        for (path, _step), points in sorted(intervals.items()):
            if path in PATHS and path not in charted and len(points) >= 2:
                self._throughput(run, server, path, sorted(points))
                charted.add(path)  # one chart per path
        for comparison in run["comparisons"]:
            if comparison.get("check") == "iops" and comparison.get("claimed"):
                self.series["iops"].append(
                    {
                        "name": f"{server} {comparison.get('subject', '')}".strip(),
                        "server": server,  # and the step by its label (document.series_name)
                        "step": comparison.get("subject", ""),
                        "nominal": comparison["claimed"],
                        "measured": comparison["measured"],
                    }
                )
        per_gpu: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for sample in samples:
            if sample["metric"] == "gpu_utilization":
                per_gpu[int((sample.get("metadata") or {}).get("gpu_index", 0))].append(sample)
        for index, found in sorted(per_gpu.items()):
            if len(found) >= 2:
                self.series["gpu_util"].append(
                    {"name": f"{server} GPU{index}", "points": thin(_minutes(found))}
                )


def measurements_from_runs(
    runs: list[dict[str, Any]], counted: Counted | None = None
) -> dict[str, Any] | None:
    """Claims measured per offer and chart series, from finished runs: each claim from the run that counts
    for its figure (`counted`: (offer id, figure) -> run id), else from the latest run that measured it.

    Each run: {"run_id", "server", "suite", "offer_id", "finished_at", "claims": {...},
    "comparisons": [Comparison.to_dict()], "samples": [Sample.to_dict()]}, oldest first.
    """
    collector = _Collector(counted)
    for run in runs:
        steps = {
            (sample.get("metadata") or {}).get("step", ""): (sample.get("metadata") or {}).get(
                "path", "public"
            )
            for sample in run["samples"]
            if sample["metric"] == "throughput"
        }
        collector.bandwidth(run, steps)
        collector.other_claims(run)
        collector.add_series(run)
    if not runs:
        return None
    return {
        "claims": list(collector.claims.values()),
        "series": {key: value for key, value in collector.series.items() if value},
        "runs": [
            {key: run.get(key) for key in ("run_id", "server", "suite", "offer_id", "finished_at")}
            for run in runs
        ],
    }
