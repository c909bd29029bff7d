"""The data-loading probe run for real over the loopback sshd, and its parser and comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.compare import Claims, Verdict, compare
from benchmarks.probes import parse
from benchmarks.sample import ParseError
from benchmarks.ssh import SSHRunner
from benchmarks.suites import Step, StepStatus, run_suite
from tests.bench_support.sshd import Sshd
from tests.benchmarks.conftest import short_params, target_for

RESULT = {
    "cores": 16,
    "files": 2000,
    "file_kib": 112,
    "evicted": True,
    "write_seconds": 3.1,
    "passes": [
        {"readers": 1, "files": 2000, "bytes": 2000 * 112 * 1024, "seconds": 2.0, "complete": True},
        {"readers": 8, "files": 2000, "bytes": 2000 * 112 * 1024, "seconds": 0.4, "complete": True},
        {"readers": 16, "files": 2000, "bytes": 2000 * 112 * 1024, "seconds": 0.25, "complete": True},
    ],
}


def test_parser_gives_files_and_mib_per_second_per_reader_count():
    samples = parse("dataload", json.dumps(RESULT))
    files = {s.metadata["readers"]: s.value for s in samples if s.metric == "dataload_files_per_s"}
    assert files == {1: 1000, 8: 5000, 16: 8000}
    mib = [s.value for s in samples if s.metric == "dataload_mib_per_s" and s.metadata["readers"] == 16]
    assert mib == [pytest.approx(2000 * 112 / 1024 / 0.25)]


def test_scaling_storage_advises_more_workers_and_names_the_ceiling():
    [comparison] = [
        c for c in compare(Claims(), parse("dataload", json.dumps(RESULT))) if c.check == "dataload"
    ]
    assert comparison.verdict is Verdict.info and comparison.measured == 8000 and comparison.ratio == 8.0
    assert "num_workers" in comparison.reason_en and "16" in comparison.reason_en
    assert "8,000" in comparison.reason_zh


def test_storage_that_does_not_scale_is_named_as_the_limit():
    flat = {**RESULT, "passes": [{**p, "seconds": 2.0} for p in RESULT["passes"]]}
    [comparison] = [
        c for c in compare(Claims(), parse("dataload", json.dumps(flat))) if c.check == "dataload"
    ]
    assert "storage itself is the limit" in comparison.reason_en and "瓶颈在存储" in comparison.reason_zh


@pytest.mark.parametrize(
    "text",
    ["", "{}", json.dumps({**RESULT, "passes": []}), json.dumps({**RESULT, "passes": [{"readers": 1}]})],
)
def test_unreadable_outputs_are_named(text: str):
    with pytest.raises(ParseError) as caught:
        parse("dataload", text)
    assert "可读取：" in str(caught.value)


@pytest.mark.slow
def test_probe_runs_for_real_over_ssh_and_leaves_nothing_behind(trial_server: Sshd, tmp_path: Path):
    params = short_params(tmp_path, dataload_files=300, dataload_file_kib=16, dataload_seconds=5)
    with SSHRunner(target_for(trial_server)) as runner:
        result = run_suite(runner, [Step("dataload", "dataload")], params)
    assert [probe.status for probe in result.probes] == [StepStatus.ok], [p.error for p in result.probes]
    rates = {s.metadata["readers"]: s.value for s in result.samples if s.metric == "dataload_files_per_s"}
    assert 1 in rates and all(value > 0 for value in rates.values())
    assert all(
        s.metadata["files"] == 300 and s.metadata["cache_dropped"]
        for s in result.samples
        if s.metric.startswith("dataload")
    )
    assert list(tmp_path.iterdir()) == []  # the file tree is removed
    assert any(c.check == "dataload" for c in compare(Claims(), result.samples))
