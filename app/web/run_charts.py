"""The charts of a benchmark run: throughput and GPU timelines, and what was measured against the nominal."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from app.reports.charts import Chart, Series, bar_chart, render_svg, timeline_chart
from app.web.labels import label
from benchmarks.sample import Sample


def step_samples(steps: list[Any]) -> list[Sample]:
    """Every sample of a run's steps, in order."""
    return [Sample.from_dict(data) for step in steps for data in step.samples]


PATH_LABELS = {"intranet": _l("内网"), "public": _l("公网")}


def nominal_mbps(claims: dict[str, Any], path: str) -> float | None:
    """The claimed bandwidth of a path in Mbit/s: intranet from intranet_gbps, public from public_mbps."""
    if path == "intranet":
        gbps = claims.get("intranet_gbps")
        return float(gbps) * 1000 if gbps else None
    mbps = claims.get("public_mbps")
    return float(mbps) if mbps else None


def _series_name(step: str) -> str:
    """A chart series named after a step, as a person reads it."""
    return str(label(step, "bench_step"))


def _path(sample: Sample) -> str:
    """The network path a throughput sample measured (public when unsaid, as benchmarks.compare reads it)."""
    return str(sample.metadata.get("path") or "public")


def _throughput_lines(samples: list[Sample]) -> dict[str, dict[str, list[tuple[float, float]]]]:
    """Per path, the per-interval throughput of each step and the repeated stability figures."""
    lines: dict[str, dict[str, list[tuple[float, float]]]] = defaultdict(lambda: defaultdict(list))
    for sample in samples:
        if sample.metric == "throughput_interval" and sample.metadata.get("purpose") != "stability":
            lines[_path(sample)][str(sample.metadata.get("step"))].append(
                (float(sample.metadata["end"]), float(sample.value))
            )
    stability = [s for s in samples if s.metric == "throughput" and s.metadata.get("purpose") == "stability"]
    for index, sample in enumerate(stability):
        repeat = float(sample.metadata.get("repeat", index)) + 1
        lines[_path(sample)]["stability"].append((repeat, float(sample.value)))
    return lines


def _timelines(samples: list[Sample], claims: dict[str, Any]) -> list[Chart]:
    """One throughput-over-time chart per path with that path's nominal (a short run: its points marked)."""
    charts = []
    for path, drawn in sorted(_throughput_lines(samples).items()):
        nominal = nominal_mbps(claims, path)
        charts.append(
            timeline_chart(
                f"throughput-{path}",
                _("吞吐随时间变化（%(path)s）", path=PATH_LABELS.get(path, path)),
                "Mbit/s",
                [Series(_series_name(name), points=tuple(points)) for name, points in sorted(drawn.items())],
                x_title=_("秒 / 次"),
                reference=nominal,
                reference_label=_("标称带宽"),
            )
        )
    return charts


def _gpu_timeline(samples: list[Sample]) -> list[Chart]:
    """GPU utilisation over time, one line per GPU (a GPU of one sample is a point)."""
    gpu: dict[int, list[tuple[float, float]]] = defaultdict(list)
    stamped = [s for s in samples if s.metric == "gpu_utilization"]
    start = min((s.timestamp for s in stamped), default=0.0)
    for sample in stamped:
        gpu[int(sample.metadata.get("gpu_index", 0))].append(
            (round(sample.timestamp - start, 3), float(sample.value))
        )
    series = [Series(f"GPU {index}", points=tuple(points)) for index, points in sorted(gpu.items())]
    if not series:
        return []
    return [timeline_chart("gpu-util", _("GPU 利用率"), "%", series, x_title=_("秒"), y_range=(0, 100))]


def _versus_nominal(samples: list[Sample], claims: dict[str, Any]) -> list[Chart]:
    """Each throughput test against the nominal bandwidth of the path it measured."""
    rows = []
    for sample in samples:
        if sample.metric != "throughput" or sample.metadata.get("purpose") == "stability":
            continue
        nominal = nominal_mbps(claims, _path(sample))
        if nominal:
            rows.append((str(sample.metadata.get("step")), round(float(sample.value), 1), nominal))
    if not rows:
        return []
    return [
        bar_chart(
            "vs-nominal",
            _("实测与标称带宽"),
            "Mbit/s",
            [_series_name(label) for label, _measured, _nominal in rows],
            [
                Series(_("实测"), tuple(measured for _label, measured, _nominal in rows)),
                Series(_("标称"), tuple(nominal for _label, _measured, nominal in rows)),
            ],
        )
    ]


def run_chart_data(samples: list[Sample], claims: dict[str, Any]) -> list[Chart]:
    """Charts of a run as data: throughput over time per path, GPU utilisation, measured vs nominal."""
    charts = [*_timelines(samples, claims), *_gpu_timeline(samples), *_versus_nominal(samples, claims)]
    return [chart for chart in charts if chart.has_data()]


def run_charts(samples: list[Sample], claims: dict[str, Any]) -> list[Any]:
    """The run's charts as inline SVG."""
    return [render_svg(chart) for chart in run_chart_data(samples, claims)]
