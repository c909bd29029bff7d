"""The run page's charts as data: nominal bandwidth per path (intranet or public); a run of few samples
(a quick run) still gets its timeline, its points marked."""

from __future__ import annotations

import json

import pytest
from sqlmodel import Session

from app.models import Offer
from app.registry.providers import create_provider
from app.reports.charts import DOTS_UNTIL, Series, render_svg, timeline_chart
from app.trials import bench_runs, bench_uploads
from app.web.run_charts import nominal_mbps, run_chart_data
from benchmarks.probes import parse
from benchmarks.sample import Sample
from tests.benchmarks.conftest import DATA

# 200 Gbit/s intranet against 100 Mbit/s public: a nominal taken from the wrong path is 2,000 times off.
CLAIMS = {"gpu_model": "H800", "gpus_per_node": 8, "intranet_gbps": 200, "public_mbps": 100}


@pytest.fixture
def offer(session: Session) -> Offer:
    """An offer claiming 200 Gbit/s intranet and 100 Mbit/s public."""
    provider = create_provider(session, data={"legal_name": "示例图表算力有限公司", "offers": [CLAIMS]})
    return provider.offers[0]


def _charts(app, samples: list[Sample], claims: dict) -> dict:
    with app.test_request_context():
        return {chart.key: chart for chart in run_chart_data(samples, claims)}


def _run_samples(session: Session, run_id: int) -> list[Sample]:
    steps = bench_runs.run_steps(session, run_id=run_id)
    return [Sample.from_dict(data) for step in steps for data in step.samples]


def _executed(recording: str, *, path: str, step: str) -> list[Sample]:
    """Samples as the iperf3 probe of an executed run leaves them (path, purpose and step in metadata)."""
    samples = parse("iperf3", (DATA / recording).read_text())
    return [s.with_metadata(path=path, purpose="throughput", step=step) for s in samples]


def _series(chart, name: str) -> tuple:
    return next(series.values for series in chart.series if series.name == name)


def test_uploaded_intranet_run_is_charted_against_the_intranet_claim(app, session, offer, login):
    raw = (DATA / "iperf3_single.json").read_bytes()
    run = bench_uploads.upload_output(session, offer_id=offer.id, tool="iperf3", output=raw, path="intranet")
    claimed = {c["claimed"] for c in run.comparisons if c["check"] == "bandwidth"}
    assert claimed == {200_000}
    charts = _charts(app, _run_samples(session, run.id), run.claims)
    assert set(charts) == {"throughput-intranet", "vs-nominal"}
    bars = charts["vs-nominal"]
    assert _series(bars, "标称") == (200_000.0,)
    assert _series(bars, "实测")[0] == pytest.approx(46063.0, abs=1)
    assert charts["throughput-intranet"].reference == 200_000.0
    assert len(charts["throughput-intranet"].series[0].points) == 3

    page = login("viewer").get(f"/bench-runs/{run.id}").get_data(as_text=True)
    assert 'id="chart-gv-throughput-intranet"' in page and 'id="chart-gv-vs-nominal"' in page
    assert "200,000 Mbit/s" in page and "100 Mbit/s" not in page


def test_uploaded_public_run_is_charted_against_the_public_claim(app, session, offer):
    raw = (DATA / "iperf3_parallel.json").read_bytes()
    run = bench_uploads.upload_output(session, offer_id=offer.id, tool="iperf3", output=raw, path="public")
    charts = _charts(app, _run_samples(session, run.id), run.claims)
    assert _series(charts["vs-nominal"], "标称") == (100.0,)
    assert charts["throughput-public"].reference == 100.0


def test_executed_run_with_both_paths_uses_each_paths_nominal(app):
    claims = {"intranet_gbps": 200, "public_mbps": 100}
    samples = [
        *_executed("iperf3_single.json", path="public", step="iperf3"),
        *_executed("iperf3_parallel.json", path="intranet", step="iperf3_parallel"),
    ]
    charts = _charts(app, samples, claims)
    assert charts["throughput-public"].reference == 100.0
    assert charts["throughput-intranet"].reference == 200_000.0
    assert [s.name for s in charts["throughput-intranet"].series] == ["多流带宽"]  # the step's label
    bars = charts["vs-nominal"]
    assert bars.labels == ("单流带宽", "多流带宽")
    assert _series(bars, "标称") == (100.0, 200_000.0)


def test_a_path_without_a_claim_draws_no_nominal(app):
    charts = _charts(
        app, _executed("iperf3_single.json", path="intranet", step="iperf3"), {"public_mbps": 100}
    )
    assert charts["throughput-intranet"].reference is None
    assert "vs-nominal" not in charts  # nothing to compare with
    assert nominal_mbps({"public_mbps": 100}, "intranet") is None
    assert nominal_mbps({"intranet_gbps": 25}, "intranet") == 25_000.0


def test_single_interval_upload_draws_its_one_point(app, session, offer):
    data = json.loads((DATA / "iperf3_single.json").read_text())
    data["intervals"] = data["intervals"][:1]
    run = bench_uploads.upload_output(
        session, offer_id=offer.id, tool="iperf3", output=json.dumps(data), path="intranet"
    )
    samples = _run_samples(session, run.id)
    assert len([s for s in samples if s.metric == "throughput_interval"]) == 1
    charts = _charts(app, samples, run.claims)
    assert set(charts) == {"throughput-intranet", "vs-nominal"}
    assert len(charts["throughput-intranet"].series[0].points) == 1
    assert _series(charts["vs-nominal"], "标称") == (200_000.0,)
    svg = str(render_svg(charts["throughput-intranet"]))
    assert svg.count("<circle") == 1  # the one point is marked; the nominal line has no dots


def test_one_stability_repeat_or_gpu_sample_is_a_point(app):
    def stable(repeat: int) -> Sample:
        return Sample(
            "throughput", 900.0, "Mbit/s", {"path": "public", "purpose": "stability", "repeat": repeat}
        )

    def gpu(at: float) -> Sample:
        return Sample("gpu_utilization", 50.0, "%", {"gpu_index": 0}, at)

    single = _charts(app, [stable(0), gpu(10.0)], {"public_mbps": 1000})
    assert set(single) == {"throughput-public", "gpu-util"}
    assert single["throughput-public"].series[0].points == ((1.0, 900.0),)
    assert 'class="dot' in str(render_svg(single["gpu-util"]))
    assert _charts(app, [], {"public_mbps": 1000}) == {}
    charts = _charts(app, [stable(0), stable(1), gpu(10.0), gpu(10.5)], {"public_mbps": 1000})
    assert set(charts) == {"throughput-public", "gpu-util"}
    assert charts["throughput-public"].series[0].points == ((1.0, 900.0), (2.0, 900.0))


def test_a_timeline_needs_one_point_and_marks_few_points():
    def line(*points):
        return timeline_chart("t", "t", "Mbit/s", [Series("a", points=points)], reference=100.0)

    assert not line().has_data()
    assert not line((1.0, None)).has_data()
    assert line((1.0, 5.0)).has_data() and line((1.0, 5.0), (2.0, None)).has_data()
    assert str(render_svg(line((1.0, 5.0), (2.0, 6.0)))).count("<circle") == 2
    many = tuple((float(x), 5.0) for x in range(DOTS_UNTIL + 1))
    assert 'class="dot' not in str(render_svg(line(*many)))  # a long run: the line alone
