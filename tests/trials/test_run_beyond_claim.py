"""A throughput far above the claimed link is not a pass: the test probably missed the link that was sold.
The ratio is configurable (app/knowledge/benchmarks.yaml: bandwidth_beyond_claim)."""

from __future__ import annotations

import pytest

from app.trials.bench_runs import thresholds
from app.web.bench_run_view import comparison_row, figure
from benchmarks.compare import Claims, Thresholds, Verdict, compare
from benchmarks.sample import Sample


def _bandwidth(measured: float, claims: Claims, limits: Thresholds | None = None):
    sample = Sample(
        "throughput", measured, "Mbit/s", {"path": "public", "purpose": "throughput", "step": "iperf3"}
    )
    (found,) = [c for c in compare(claims, [sample], thresholds=limits) if c.check == "bandwidth"]
    return found


@pytest.mark.parametrize(
    ("measured", "verdict"), [(500, "pass"), (750, "pass"), (751, "warn"), (21_500, "warn")]
)
def test_far_above_the_claim_warns_that_the_sold_link_was_probably_missed(measured, verdict):
    found = _bandwidth(measured, Claims(public_mbps=500))
    assert found.verdict == Verdict(verdict)
    beyond = "所售链路" in found.reason_zh
    assert beyond == (verdict == "warn") and beyond == ("link that was sold" in found.reason_en)


def test_the_ratio_is_configurable_and_read_from_the_knowledge_file():
    assert thresholds().bandwidth_beyond_claim == 1.5
    assert (
        _bandwidth(21_500, Claims(public_mbps=500), Thresholds(bandwidth_beyond_claim=50)).verdict == "pass"
    )
    assert _bandwidth(300, Claims(public_mbps=500), Thresholds(bandwidth_beyond_claim=50)).verdict == "warn"
    assert _bandwidth(21_500, Claims()).verdict == Verdict.info  # nothing claimed: nothing to miss


def test_the_run_page_row_says_the_same_for_a_run_stored_before(app):
    stored = _bandwidth(21_500, Claims(public_mbps=500)).to_dict() | {
        "verdict": "pass",
        "reason_zh": "达成 4300%",
    }
    with app.test_request_context():
        row = comparison_row(stored, thresholds())
        assert row["verdict"] == "warn" and row["beyond_claim"] and "所售链路" in row["reason"]
        assert (row["measured"], row["claimed"], row["ratio"]) == ("21.5 Gbit/s", "500 Mbit/s", "4,300%")
        assert figure(0.003, "ms") == "0.003 毫秒" and figure(8, "GPUs") == "8 块" and figure(0, "%") == "0%"
