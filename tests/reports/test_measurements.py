"""Benchmark runs feed the report: claims measured per offer and the throughput / IOPS / GPU charts."""

from __future__ import annotations

from typing import Any

import pytest
from bs4 import BeautifulSoup

from app.reports.measurements import MAX_POINTS, measurements_from_runs, thin
from app.reports.render import render_html
from benchmarks import compare
from benchmarks.sample import Sample
from tests.reports.conftest import make_inputs, make_meta, needs_poppler, pdf_text

CLAIMS = compare.Claims(
    public_mbps=100,
    intranet_gbps=200,
    bandwidth_type="dedicated",
    storage_type="local_nvme",
    nominal_iops=2_000_000,
    gpu_model="H800",
    gpus_per_node=8,
)
T0 = 1_780_000_000.0


def _sample(metric: str, value: Any, unit: str, step: str, timestamp: float = T0, **metadata: Any) -> Sample:
    return Sample(metric, value, unit, {"step": step, "host": "10.0.0.5", **metadata}, timestamp)


def standard_run() -> list[Sample]:
    """What the standard suite stores: iperf3 over the intranet with intervals, fio, disk, GPUs."""
    iperf = {"path": "intranet", "purpose": "throughput", "streams": 1}
    samples = [_sample("throughput", 96_500.0, "Mbit/s", "iperf3", **iperf)]
    samples += [
        _sample(
            "throughput_interval",
            90_000.0 + (i % 5) * 3_000,
            "Mbit/s",
            "iperf3",
            interval=i,
            start=i,
            **iperf,
        )
        for i in range(30)
    ]
    samples.append(_sample("read_iops", 410_000.0, "IOPS", "fio_randread"))
    samples.append(_sample("storage_class", "local_nvme", "", "disk_type", reason="nvme0n1"))
    samples += [_sample("gpu", "NVIDIA H800", "", "inventory", gpu_index=i) for i in range(8)]
    samples += [
        _sample("gpu_utilization", 97.0 - gpu * 40 + (t % 3), "%", "gpu", T0 + t * 0.5, gpu_index=gpu)
        for gpu in range(2)
        for t in range(600)
    ]
    return samples


def stability_run() -> list[Sample]:
    """Repeated intranet throughput every ten minutes, sagging in the evening."""
    values = [190_000, 185_000, 120_000, 60_000, 70_000, 180_000]
    return [
        _sample(
            "throughput", value, "Mbit/s", "stability", T0 + i * 600, path="intranet", purpose="stability"
        )
        for i, value in enumerate(values)
    ]


def run_record(run_id: int, suite: str, samples: list[Sample]) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "server": "试用机A",
        "suite": suite,
        "offer_id": 11,
        "finished_at": "2026-03-01T12:00:00+00:00",
        "claims": {"intranet_gbps": 200, "public_mbps": 100},
        "comparisons": [comparison.to_dict() for comparison in compare.compare(CLAIMS, samples)],
        "samples": [sample.to_dict() for sample in samples],
    }


@pytest.fixture(scope="module")
def measurements() -> dict[str, Any]:
    return measurements_from_runs(
        [run_record(1, "standard", standard_run()), run_record(2, "stability", stability_run())]
    )


def test_claims_take_measurement_and_verdict_from_the_comparisons(measurements):
    claims = {claim["metric"]: claim for claim in measurements["claims"]}
    assert set(claims) == {"intranet_gbps", "nominal_iops", "storage_type", "gpu", "bandwidth_type"}
    assert claims["intranet_gbps"]["value"] == 96.5 and claims["intranet_gbps"]["unit"] == "Gbps"
    assert claims["intranet_gbps"]["verdict"] == "fail"  # 48 % of 200 Gbps
    assert claims["nominal_iops"]["value"] == 410_000 and claims["nominal_iops"]["verdict"] == "fail"
    assert claims["storage_type"]["text_zh"] == "本地 NVMe" and claims["storage_type"]["verdict"] == "pass"
    assert claims["gpu"]["value"] == "NVIDIA H800 × 8" and claims["gpu"]["verdict"] == "pass"
    swings = claims["bandwidth_type"]
    assert (
        swings["verdict"] == "fail"
        and swings["text_zh"].startswith("波动大，像共享")
        and swings["run_id"] == 2
    )
    assert [run["run_id"] for run in measurements["runs"]] == [1, 2]


def test_series_for_the_charts(measurements):
    series = measurements["series"]
    intervals, repeated = series["throughput"]
    assert intervals["unit"] == "Gbps" and intervals["nominal"] == 200 and len(intervals["points"]) == 30
    assert intervals["points"][1] == [pytest.approx(1 / 60, abs=1e-3), 93.0]
    assert [point[0] for point in repeated["points"]] == [0, 10, 20, 30, 40, 50]  # minutes
    assert repeated["points"][3][1] == 60.0
    assert series["iops"] == [
        {
            "name": "试用机A fio_randread",
            "server": "试用机A",
            "step": "fio_randread",
            "nominal": 2_000_000,
            "measured": 410_000,
        }
    ]
    assert (intervals["server"], intervals["path"]) == ("试用机A", "intranet")
    gpus = series["gpu_util"]
    assert [gpu["name"] for gpu in gpus] == ["试用机A GPU0", "试用机A GPU1"]
    assert len(gpus[0]["points"]) == MAX_POINTS  # 600 samples thinned
    assert gpus[0]["points"][-1][0] == pytest.approx(5.0, abs=0.05)  # 300 s of sampling


def test_thin_keeps_short_series_and_averages_long_ones():
    assert thin([(0.0, 1.0), (1.0, 2.0)]) == [[0.0, 1.0], [1.0, 2.0]]
    long = [(float(i), float(i % 2)) for i in range(1000)]
    thinned = thin(long, limit=100)
    assert len(thinned) == 100 and all(point[1] == 0.5 for point in thinned)
    assert measurements_from_runs([]) is None


@needs_poppler
def test_report_shows_measured_claims_and_charts(measurements, renderer):
    inputs = make_inputs(sources={"measurements": {"status": "ok", "data": measurements}})
    html = render_html("provider", inputs, make_meta(), "zh", screen=False)
    row = BeautifulSoup(html, "html.parser").select("#claims-table tbody tr")[0]
    cells = [cell.get_text(" ", strip=True) for cell in row.select("td")]
    assert cells[1] == "H800 × 8 实测 NVIDIA H800 × 8 通过"
    assert cells[2] == "200 Gbps 实测 96.5 Gbps (48%) 不通过"
    assert cells[5].startswith("独享 实测 波动大，像共享") and cells[5].endswith("不通过")
    assert html.count("<svg") == 2 + 2 + 1 + 1  # registry, throughput x2, IOPS, GPU utilisation
    text = pdf_text(renderer.render(html).data)
    for title in (
        "吞吐随时间变化",
        "试用机A",
        "存储 IOPS（实测 vs 标称）",
        "GPU 利用率随时间变化",
        "基准测试记录",
    ):
        assert title in text, title


def test_failed_measurements_become_a_recommendation(measurements):
    from app.reports.recommend import recommendations

    inputs = make_inputs(sources={"measurements": {"status": "ok", "data": measurements}})
    advice = {item.key: item for item in recommendations(inputs)}
    assert "measurements" not in advice  # measured: no "please test" advice
    assert advice["measured_failures"].zh.startswith("实测不符合标称：内网带宽、带宽独享、存储 IOPS。")
    assert "intranet bandwidth, dedicated bandwidth, storage IOPS" in advice["measured_failures"].en


def test_series_are_named_in_the_reports_language_never_by_key():
    from app.reports.document import series_name
    from app.reports.labels import Labels

    iops = {"name": "试用机A fio_randread", "server": "试用机A", "step": "fio_randread"}
    link = {"name": "试用机A · 内网/intranet", "server": "试用机A", "path": "intranet"}
    assert series_name(iops, Labels("zh")) == "试用机A 4k 随机读"
    assert series_name(iops, Labels("en")) == "试用机A 4k random read"
    assert series_name(link, Labels("zh")) == "试用机A · 内网"
    assert series_name(link, Labels("en")) == "试用机A · intranet"
    assert series_name({"name": "older snapshot"}, Labels("en")) == "older snapshot"
