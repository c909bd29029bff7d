"""Suite parameters are bounded and say which field is wrong."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from benchmarks.params import SuiteParams


def test_defaults_follow_domain_md():
    params = SuiteParams()
    assert (params.iperf3_seconds, params.iperf3_parallel, params.fio_seconds) == (10, 4, 30)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("iperf3_seconds", 0),
        ("iperf3_seconds", 100_000),
        ("fio_size_mib", 1),
        ("storage_path", "/data\nrm -rf /"),
        ("storage_path", ""),
        ("gpu_workload", ["python3", "a\x00b"]),
        ("ping_interval_s", 0.01),
        ("colour", "blue"),
    ],
)
def test_bad_values_name_the_field(field, value):
    with pytest.raises(ValidationError) as caught:
        SuiteParams(**{field: value})
    assert caught.value.errors()[0]["loc"][0] == field


def test_values_with_shell_characters_are_allowed_because_they_are_quoted():
    params = SuiteParams(storage_path="/data/my 'runs' $(x)", gpu_workload=["sh", "-c", "echo; id"])
    assert params.storage_path == "/data/my 'runs' $(x)"
