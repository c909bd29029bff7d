"""Executed runs (issue 23 item 9): a trial server's output holding a value no machine can show is not
counted as measured; the step names the value and fails, and numbers no parser reads are a parse error."""

from __future__ import annotations

import pytest

from benchmarks.probes import load_probes
from benchmarks.probes.base import RawOutput
from benchmarks.suites import ProbeResult, StepStatus, _outcome, parse_outputs
from tests.benchmarks.conftest import DATA

FIO = (DATA / "fio_randread.json").read_text()
pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the app for its language


def _parsed(stdout: str, parser: str = "fio") -> ProbeResult:
    output = RawOutput("fio randread", "target", "10.0.0.2", ("fio",), 0, stdout, "", 1.0, parser=parser)
    result = ProbeResult(step="fio_randread", probe="fio", options={}, outputs=[output])
    load_probes()
    parse_outputs(result)
    return result


def test_a_real_output_is_kept(app):
    with app.test_request_context():
        result = _parsed(FIO)
    assert result.samples and not result.parse_errors


def test_an_impossible_value_keeps_nothing_and_fails_the_step(app):
    with app.test_request_context():
        result = _parsed(FIO.replace('"iops" : 133464.071856', '"iops" : -1', 1))
        outcome = _outcome(result)
    assert result.samples == []
    (error,) = result.parse_errors
    assert error.startswith("fio randread: read_iops 的值 -1 IOPS 不可信") and "0–50,000,000 IOPS" in error
    assert outcome == StepStatus.failed


def test_a_number_no_parser_reads_is_a_parse_error(app):
    ping = (
        (DATA / "ping_ok.txt")
        .read_text()
        .replace("5 packets transmitted", "9" * 5000 + " packets transmitted")
    )
    with app.test_request_context():
        result = _parsed(ping, parser="ping")
    assert result.samples == [] and "无法读取的数字" in result.parse_errors[0]
