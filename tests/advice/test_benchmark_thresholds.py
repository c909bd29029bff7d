"""One loader of app/knowledge/benchmarks.yaml: an edit of the thresholds reaches runs and ranking alike."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.advice import knowledge
from app.advice.engine import advise
from app.advice.facts import Measurement
from app.trials import bench_runs
from benchmarks.compare import Claims, compare
from benchmarks.sample import Sample
from tests.advice.factories import TODAY, offer, training_answers

MEASURED_92 = Measurement(92.0, "Gbps", at=datetime(2026, 5, 20, tzinfo=UTC), run_id=3, link="/bench-runs/3")


def marks() -> list[str]:
    """The codes of the marks of an offer claiming 100 Gbps intranet that measured 92 Gbps."""
    measured = offer(1, rdma_type="none", rdma_gbps=None, measurements={"intranet_gbps": MEASURED_92})
    (assessed,) = advise(training_answers(), [measured], today=TODAY).ranked
    return [reason.code for reason in assessed.marks]


def run_verdict() -> str:
    """The verdict a run gives 92 Mbit/s measured against 100 Mbit/s claimed."""
    sample = Sample("throughput", 92.0, "Mbit/s", {"path": "public", "purpose": "throughput"})
    (found,) = compare(Claims(public_mbps=100), [sample], thresholds=bench_runs.thresholds())
    return found.verdict.value


@pytest.fixture
def stricter(tmp_path: Path, monkeypatch) -> Path:
    """A copy of benchmarks.yaml that passes bandwidth only at 95% of the claim and fails below 90%."""
    text = knowledge.BENCHMARKS_FILE.read_text(encoding="utf-8")
    text = text.replace("bandwidth_pass: 0.8", "bandwidth_pass: 0.95").replace(
        "bandwidth_warn: 0.5", "bandwidth_warn: 0.9"
    )
    path = tmp_path / "benchmarks.yaml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(knowledge, "BENCHMARKS_FILE", path)
    return path


def test_the_shipped_thresholds_pass_92_percent_in_runs_and_ranking():
    assert run_verdict() == "pass"
    assert "evidence.below_claim.intranet_gbps" not in marks()


def test_stricter_thresholds_reach_runs_and_ranking_alike(stricter):
    assert bench_runs.thresholds().bandwidth_pass == 0.95
    assert run_verdict() == "warn"
    assert "evidence.below_claim.intranet_gbps" in marks()


def test_an_unknown_threshold_is_refused_naming_the_file(tmp_path, monkeypatch):
    path = tmp_path / "benchmarks.yaml"
    path.write_text("bandwidth_pass: 0.8\nbandwidth_warn: 0.5\nbandwith_fail: 0.2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bandwith_fail.*known"):
        knowledge.benchmark_thresholds(path)
