"""Charts: plain data in, clean deterministic SVG out, for registry data and synthetic benchmark series."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from app.reports.charts import CHART_KINDS, Chart, Series, bar_chart, number_text, render_svg, timeline_chart
from app.reports.document import measurement_charts, registry_charts
from app.reports.labels import Labels
from tests.reports.conftest import make_inputs

SVG = "{http://www.w3.org/2000/svg}"


def _texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [element.text or "" for element in root.iter(f"{SVG}text")]


def test_bar_chart_svg_is_static_deterministic_and_escaped():
    chart = bar_chart(
        "offer-intranet",
        "内网带宽",
        "Gbps",
        ["H800 训练型", "<script>alert(1)</script>", "\u202e反转"],
        [Series("标称", (200.0, 25.5, None))],
    )
    svg = str(render_svg(chart))
    assert svg == str(render_svg(chart))  # same input, same bytes (no random ids, no dates)
    assert 'id="chart-gv-offer-intranet"' in svg
    assert "<script" not in svg and "<!--" not in svg and "<desc" not in svg
    assert "&lt;script&gt;" in svg and "\u202e" not in svg
    texts = _texts(svg)
    assert "200 Gbps" in texts and "25.5 Gbps" in texts
    assert "[U+202E]反转" in texts
    # pygal's ~90 browser rules are replaced by the compact stylesheet
    style = ET.fromstring(svg).find(f"{SVG}defs/{SVG}style").text
    assert style.count("{") < 30 and ":hover" not in style


def test_long_labels_are_cut_on_the_chart_only():
    chart = bar_chart("long", "t", "", ["名" * 40, "A" * 80], [Series("s", (1, 2))])
    texts = _texts(str(render_svg(chart)))
    assert any(text.startswith("名" * 16) and text.endswith("…") and len(text) <= 18 for text in texts)
    assert any(text.startswith("A" * 30) and text.endswith("…") for text in texts)


def test_timeline_with_nominal_reference_line():
    points = tuple((minute, 3.2 + (minute % 4) * 0.3) for minute in range(60))
    chart = timeline_chart(
        "throughput-0", "吞吐", "Gbps", [Series("实测", points=points)], reference=10, reference_label="标称"
    )
    svg = str(render_svg(chart))
    root = ET.fromstring(svg)
    lines = [path for path in root.iter(f"{SVG}path") if "line" in (path.get("class") or "").split()]
    assert len([path for path in lines if "reactive" in path.get("class")]) == 2  # measured + nominal
    assert "#chart-gv-throughput-0 .serie-1 .line{stroke-width:1.5;stroke-dasharray:6,4}" in svg
    assert "10" in _texts(svg)


def test_measurement_charts_from_plain_series():
    labels = Labels("zh")
    series = {
        "throughput": [
            {"name": f"link{i}", "unit": "Gbps", "nominal": 10, "points": [[0, 3.1], [1, None], [2, 3.9]]}
            for i in range(5)
        ],
        "iops": [{"name": "randread", "nominal": 100000, "measured": 3000}],
        "gpu_util": [{"name": "GPU0", "points": [[0, 98], [1, 35], [2, 97]]}],
    }
    charts = measurement_charts(series, labels)
    assert [chart.key for chart in charts] == [
        "throughput-0",
        "throughput-1",
        "throughput-2",
        "iops",
        "gpu-util",
    ]
    assert charts[0].reference == 10 and charts[0].series[0].points[1] == (1.0, None)
    assert charts[-1].y_range == (0, 100)
    for chart in charts:
        assert "<svg" in render_svg(chart)
    assert measurement_charts({}, labels) == []


def test_registry_charts_from_offers():
    inputs = make_inputs()
    intranet, price = registry_charts(inputs, Labels("en"))
    assert intranet.labels == ("H800 训练型（H800 × 8）", "RTX 4090 × 4")
    assert intranet.series[0].values == (200.0, 25.0)
    assert price.series[0].values == (15.8, 2.6)
    no_values = registry_charts(
        make_inputs(offers=[{**inputs["offers"][1], "intranet_gbps": None}]), Labels("zh")
    )
    assert not no_values[0].has_data() and no_values[1].has_data()


def test_chart_kinds_registry_and_key_checks():
    assert set(CHART_KINDS) == {"bars", "timeline"}
    with pytest.raises(ValueError, match="unknown chart kind"):
        render_svg(Chart(kind="pie", key="x", title="t"))
    with pytest.raises(ValueError, match="lower-case"):
        render_svg(Chart(kind="bars", key="Bad Key", title="t"))
    assert number_text(1234567.0) == "1,234,567" and number_text(15.80) == "15.8" and number_text(None) == ""
