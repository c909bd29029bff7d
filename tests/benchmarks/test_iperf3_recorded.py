"""iperf3 3.12 outputs recorded on loopback with options the other recordings lack: -O (omit) and --bidir.

Expected figures were read off the files (bits_per_second / 1e6, quoted in the comments).
"""

from __future__ import annotations

import pytest

from benchmarks.probes import parse
from tests.benchmarks.conftest import DATA
from tests.benchmarks.test_parsers import one, values


def iperf3(name: str) -> list:
    """The iperf3 parser's samples of a recorded file."""
    return parse("iperf3", (DATA / name).read_text())


def test_omitted_warm_up_interval_is_not_a_measured_interval():
    # -O 1: the first interval (0-1.001 s, 6723514249 bit/s) is marked "omitted": true; the measured
    # intervals restart at 0.000041 s: 7246759737.88, 6550626772.21, 6715510644.62 bit/s
    samples = iperf3("iperf3_omit.json")
    intervals = [s for s in samples if s.metric == "throughput_interval"]
    assert [s.value for s in intervals] == pytest.approx([7246.759738, 6550.626772, 6715.510645])
    assert [s.metadata["interval"] for s in intervals] == [0, 1, 2]
    assert intervals[0].metadata["start"] == pytest.approx(0.000041)
    assert one(samples, "throughput") == pytest.approx(6826.890245)  # end.sum_received
    assert one(samples, "retransmits") == 41


def test_bidirectional_test_reports_both_directions():
    # --bidir: end.sum_received 4616189466.65 bit/s forward, end.sum_received_bidir_reverse 4479498698.25
    samples = iperf3("iperf3_bidir.json")
    assert one(samples, "throughput") == pytest.approx(4616.189467)
    assert one(samples, "throughput_reverse") == pytest.approx(4479.498698)
    assert samples[0].metadata["bidirectional"] is True
    assert samples[0].metadata["reverse"] is False
    assert one(samples, "retransmits") == 1  # end.sum_sent.retransmits, the forward sender's
    assert len(values(samples, "throughput_interval")) == 3


def test_one_way_tests_say_they_are_not_bidirectional():
    samples = iperf3("iperf3_single.json")
    assert samples[0].metadata["bidirectional"] is False
    assert not values(samples, "throughput_reverse")
