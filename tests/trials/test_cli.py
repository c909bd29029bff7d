"""`flask bench parse` on recorded outputs and `flask bench run` against the real sshd."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.trials import servers as trials
from tests.benchmarks.conftest import DATA
from tests.trials.conftest import quick_params, server_data


@pytest.mark.parametrize(
    ("tool", "recording", "metric"),
    [
        ("ping", "ping_partial_loss.txt", "packet_loss"),
        ("iperf3", "iperf3_parallel.json", "throughput"),
        ("fio", "fio_randread.json", "read_iops"),
        ("nvidia-smi", "nvidia-smi/sampling_swinging_na.csv", "gpu_utilization"),
        ("lsblk", "lsblk_nvme.json", "block_device"),
    ],
)
def test_parse_prints_samples_as_json(app, tool, recording, metric):
    result = app.test_cli_runner().invoke(args=["bench", "parse", tool, str(DATA / recording)])
    assert result.exit_code == 0, result.output
    samples = json.loads(result.output)
    assert {"metric", "value", "unit", "metadata"} == set(samples[0])
    assert any(sample["metric"] == metric for sample in samples)


def test_parse_error_is_named_and_exits_1(app, tmp_path: Path):
    broken = tmp_path / "cut.json"
    broken.write_text((DATA / "iperf3_single.json").read_text()[:500])
    result = app.test_cli_runner().invoke(args=["bench", "parse", "iperf3", str(broken)])
    assert result.exit_code == 1
    assert "error: iperf3: 输出不是完整的 JSON" in result.output


def test_parse_refuses_unknown_tools(app):
    result = app.test_cli_runner().invoke(args=["bench", "parse", "netperf", "-"])
    assert result.exit_code == 2 and "netperf" in result.output


@pytest.mark.slow
def test_run_in_the_foreground(app, session, provider, offer, cipher, policy, trial_server, tmp_path: Path):
    data = server_data(trial_server, offer_id=offer.id, host_key_fingerprint=trial_server.host_fingerprint)
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)
    params = [f"--param={name}={value}" for name, value in quick_params(tmp_path).items()]
    result = app.test_cli_runner().invoke(args=["bench", "run", str(server.id), "--suite", "quick", *params])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output[result.output.index("{") :])
    assert summary["state"] == "succeeded"
    assert [step["status"] for step in summary["steps"]] == ["ok"] * 5
    assert any(c["check"] == "storage_type" for c in summary["comparisons"])


def test_run_with_a_bad_parameter_names_it(app, session, provider, cipher, policy, trial_server):
    data = server_data(trial_server, host_key_fingerprint=trial_server.host_fingerprint)
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)
    result = app.test_cli_runner().invoke(args=["bench", "run", str(server.id), "--param", "fio_seconds=0"])
    assert result.exit_code == 1
    assert "params.fio_seconds" in result.output
