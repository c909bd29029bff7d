"""Plausible ranges (issue 23 item 9): every real recording passes, impossible values are named, and the
parsers' own crashes on hostile numbers become ParseErrors (item 8)."""

from __future__ import annotations

import math

import pytest

from benchmarks.plausible import NOT_NEGATIVE, Plausible, implausible, range_of
from benchmarks.probes import PARSERS, load_probes
from benchmarks.sample import ParseError, Sample, read_samples
from tests.benchmarks.conftest import DATA


def _recorded_samples() -> dict[str, list[Sample]]:
    """Every recording under tests/data/bench read by every parser that reads it."""
    load_probes()
    found: dict[str, list[Sample]] = {}
    for path in sorted(DATA.rglob("*")):
        if not path.is_file() or path.suffix == ".md":
            continue
        text = path.read_text(errors="replace")
        for name, parser in PARSERS.items():
            try:
                found[f"{path.relative_to(DATA)} ({name})"] = parser(text)
            except ParseError:
                continue
    return found


def test_every_recorded_output_is_plausible_and_its_metrics_are_in_the_table():
    recorded = _recorded_samples()
    assert len(recorded) > 40
    problems = {where: found for where, samples in recorded.items() if (found := implausible(samples))}
    assert not problems
    unbounded = {
        (sample.metric, sample.unit)
        for samples in recorded.values()
        for sample in samples
        if isinstance(sample.value, (int, float)) and range_of(sample.metric, sample.unit) is NOT_NEGATIVE
    }
    assert not unbounded, "give these metrics a range (by name or unit) in benchmarks/plausible.py"


@pytest.mark.parametrize(
    ("metric", "unit", "value"),
    [
        ("read_iops", "IOPS", -1),
        ("read_iops", "IOPS", 1e308),
        ("read_iops", "IOPS", 10**400),
        ("gpu_utilization", "%", 100.5),
        ("gpu_temperature", "C", -41),
        ("throughput", "Mbit/s", math.nan),
        ("read_latency", "us", math.inf),
        ("rdma_latency_t_avg", "us", -0.5),
        ("something_new", "widgets", -1),
    ],
)
def test_impossible_values_are_found(metric, unit, value):
    (found,) = implausible([Sample(metric, value, unit)])
    assert (found.metric, found.unit) == (metric, unit)
    assert found.accepted == range_of(metric, unit)


def test_values_at_the_bounds_and_text_values_pass():
    samples = [
        Sample("gpu_utilization", 0.0, "%"),
        Sample("gpu_utilization", 100, "%"),
        Sample("gpu_temperature", -40, "C"),
        Sample("something_new", 1e12, "widgets"),
        Sample("gpu", "NVIDIA H800", ""),
    ]
    assert implausible(samples) == []


def test_one_finding_per_metric_in_order():
    samples = [Sample("udp_loss", 101.0, "%"), Sample("rtt_avg", -1.0, "ms"), Sample("udp_loss", 150.0, "%")]
    assert [(found.metric, found.value) for found in implausible(samples)] == [
        ("udp_loss", 101.0),
        ("rtt_avg", -1.0),
    ]


def test_ranges_and_values_read_plainly():
    assert range_of("read_iops", "IOPS").describe("IOPS") == "0–50,000,000 IOPS"
    assert range_of("gpu_temperature", "C").describe("C") == "-40–150 C"
    assert range_of("new", "widgets").describe("widgets") == "≥ 0 widgets"
    (huge,) = implausible([Sample("read_iops", 10**400, "IOPS")])
    assert huge.shown_value() == "100000000000… IOPS"
    (small,) = implausible([Sample("read_iops", -1.0, "IOPS")])
    assert small.shown_value() == "-1 IOPS"
    assert Plausible(0, 1).admits(True) is True  # bools are numbers to float(); samples skip them


@pytest.mark.parametrize(
    ("raised", "words"),
    [
        (ValueError("Exceeds the limit (4300 digits) for integer string conversion"), "无法读取的数字"),
        (OverflowError("cannot convert float infinity to integer"), "超出范围"),
        (RecursionError("maximum recursion depth exceeded"), "嵌套过深"),
    ],
)
def test_read_samples_turns_python_errors_into_parse_errors(raised, words):
    def parser(text: str) -> list[Sample]:
        raise raised

    with pytest.raises(ParseError) as caught:
        read_samples(parser, "x", "ping")
    assert caught.value.tool == "ping" and words in str(caught.value.reason)


def test_read_samples_passes_parse_errors_and_samples_through():
    def refusing(text: str) -> list[Sample]:
        raise ParseError("ping", "没有统计行")

    with pytest.raises(ParseError, match="没有统计行"):
        read_samples(refusing, "x", "ping")
    assert read_samples(lambda text: [Sample("rtt_avg", 1.0, "ms")], "x", "ping")[0].value == 1.0
