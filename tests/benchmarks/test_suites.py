"""Suites run for real through gpuvet on a real sshd on loopback (iperf3, fio, ping, lsblk, stand-in GPU)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from benchmarks.compare import Claims, Verdict, compare
from benchmarks.params import SuiteParams
from benchmarks.probes.base import ProbeFailed
from benchmarks.ssh import CommandResult, LocalRunner, SSHRunner
from benchmarks.suites import (
    SUITES,
    Progress,
    Step,
    StepStatus,
    SuiteStatus,
    run_on_server,
    run_suite,
    suite,
    suite_steps,
)
from tests.bench_support.gpu import install_standin
from tests.bench_support.procs import command_lines
from tests.bench_support.sshd import Sshd, free_port
from tests.benchmarks.conftest import short_params, target_for

pytestmark = pytest.mark.slow


def iperf3_servers(port: int) -> list[str]:
    """iperf3 server processes on `port` still running on this machine (the trial server)."""
    return command_lines(f"iperf3 -s -1 -D -p {port} ")


def test_quick_suite_for_real(trial_server: Sshd, tmp_path: Path):
    params = short_params(tmp_path)
    events: list[Progress] = []
    with SSHRunner(target_for(trial_server)) as runner:
        result = run_suite(runner, "quick", params, on_progress=events.append)

    assert result.status == SuiteStatus.succeeded, result.to_dict()
    assert [probe.step for probe in result.probes] == [
        "inventory",
        "ping",
        "iperf3",
        "fio_randread",
        "disk_type",
    ]
    assert all(probe.status == StepStatus.ok for probe in result.probes), [p.error for p in result.probes]

    # raw outputs are stored verbatim with exit codes and durations
    iperf3 = result.step("iperf3")
    measured = next(output for output in iperf3.outputs if output.parser == "iperf3")
    assert measured.stdout.lstrip().startswith("{") and '"sum_received"' in measured.stdout
    assert measured.exit_code == 0 and measured.duration >= 2 and measured.role == "local"
    assert measured.argv[:3] == ("iperf3", "-c", "127.0.0.1")

    samples = result.samples
    throughput = [s for s in samples if s.metric == "throughput"]
    assert len(throughput) == 1 and throughput[0].value > 100  # loopback: gigabits
    assert throughput[0].metadata["host"] == "localhost" and throughput[0].metadata["path"] == "public"
    assert throughput[0].metadata["tool_version"].startswith("iperf 3")
    assert [s.value for s in samples if s.metric == "packet_loss"] == [0.0]
    iops = next(s for s in samples if s.metric == "read_iops")
    assert iops.value > 100 and iops.metadata["numjobs"] == "32" and iops.metadata["host"] == "127.0.0.1"
    assert next(s for s in samples if s.metric == "storage_class").value in {
        "virtual_disk",
        "local_nvme",
        "local_ssd",
    }
    assert next(s for s in samples if s.metric == "cpu_count").value >= 1

    # cleanup: the iperf3 server is stopped and the fio test directory removed
    assert iperf3_servers(params.iperf3_port) == []
    assert list(tmp_path.iterdir()) == []

    # progress: started/finished per step, then done
    assert events[-1].event == "done" and events[-1].done == events[-1].total == 5
    assert [e.step for e in events if e.event == "started"] == [p.step for p in result.probes]


def test_standard_suite_with_stand_in_gpu(trial_server: Sshd, tmp_path: Path):
    """The GPU probe runs the same commands it would on a GPU server; nvidia-smi is a recording here."""
    params = short_params(tmp_path, iperf3_seconds=1)
    with SSHRunner(target_for(trial_server)) as runner:
        result = run_suite(runner, "standard", params)
    assert result.status == SuiteStatus.succeeded
    statuses = {probe.step: probe.status for probe in result.probes}
    assert set(statuses.values()) == {StepStatus.ok}, {p.step: p.error for p in result.probes}

    gpu = result.step("gpu")
    sampling = next(output for output in gpu.outputs if output.label == "nvidia-smi sampling")
    assert sampling.argv[:2] == ("sh", "-c") and "-lms" in sampling.argv[2]
    assert [s.value for s in gpu.samples if s.metric == "gpu_count"] == [8]
    assert len([s for s in gpu.samples if s.metric == "gpu_utilization"]) == 16
    workload = next(s for s in gpu.samples if s.metric == "gpu_workload_exit_code")
    assert workload.value in (0, 3, 4, 124)  # 3: no torch on this machine, said plainly

    parallel = next(
        s for s in result.samples if s.metric == "throughput" and s.metadata["step"] == "iperf3_parallel"
    )
    assert parallel.metadata["streams"] == 2
    reverse = next(
        s for s in result.samples if s.metric == "throughput" and s.metadata["step"] == "iperf3_reverse"
    )
    assert reverse.metadata["reverse"] is True
    assert any(s.metric == "write_effective_bandwidth" for s in result.samples)

    comparisons = compare(Claims(gpu_model="H800", gpus_per_node=8), result.samples)
    verdicts = {c.check: c.verdict for c in comparisons if c.check in {"gpu_count", "gpu_model"}}
    assert verdicts == {"gpu_count": Verdict.passed, "gpu_model": Verdict.passed}
    wrong = compare(Claims(gpu_model="A100", gpus_per_node=4), result.samples)
    assert {c.check: c.verdict for c in wrong if c.check.startswith("gpu_")}["gpu_model"] == Verdict.failed
    assert iperf3_servers(params.iperf3_port) == []
    assert list(tmp_path.iterdir()) == []


def test_gpu_probe_without_nvidia_smi_is_not_installed(tmp_path: Path):
    steps = [Step("gpu", "nvidia-smi"), Step("fio_randread", "fio", {"mode": "randread"})]
    with Sshd(tmp_path / "sshd") as bare, SSHRunner(target_for(bare)) as runner:
        result = run_suite(runner, steps, short_params(tmp_path / "missing"))
    assert result.suite == "custom" and result.status == SuiteStatus.succeeded
    gpu = result.step("gpu")
    assert gpu.status == StepStatus.not_installed
    assert gpu.error == "服务器 127.0.0.1 上没有安装 nvidia-smi"  # in the worker's language, zh
    assert result.step("fio_randread").status == StepStatus.failed  # storage path does not exist
    assert "mktemp" in result.step("fio_randread").error
    comparisons = compare(Claims(gpus_per_node=8), result.samples, missing_tools={"nvidia-smi"})
    count = next(c for c in comparisons if c.check == "gpu_count")
    assert count.verdict == Verdict.failed and count.measured == 0


def test_storage_path_with_shell_characters_is_used_verbatim(trial_server: Sshd, tmp_path: Path):
    nasty = tmp_path / "data dir 'q' $(touch pwned) ;x"
    nasty.mkdir()
    steps = [Step("fio_randread", "fio", {"mode": "randread"}), Step("disk_type", "disk")]
    with SSHRunner(target_for(trial_server)) as runner:
        result = run_suite(runner, steps, short_params(nasty))
    assert [p.status for p in result.probes] == [StepStatus.ok, StepStatus.ok], [
        p.error for p in result.probes
    ]
    assert next(s for s in result.samples if s.metric == "read_iops").metadata["storage_path"] == str(nasty)
    assert list(nasty.iterdir()) == []  # test dir removed, nothing executed
    assert not (Path.home() / "pwned").exists() and not Path("pwned").exists()


class FailingIperfClient(LocalRunner):
    """The gpuvet end whose iperf3 client dies mid-test (to check the server is still stopped)."""

    def run(self, argv, *, timeout, max_output=4 * 1024 * 1024) -> CommandResult:
        if list(argv[:2]) == ["iperf3", "-c"]:
            raise ProbeFailed("client crashed")
        return super().run(argv, timeout=timeout, max_output=max_output)


def test_iperf3_server_is_stopped_even_when_the_client_fails(trial_server: Sshd, tmp_path: Path):
    params = short_params(tmp_path)
    with SSHRunner(target_for(trial_server)) as runner:
        steps = [Step("iperf3", "iperf3"), Step("fio_randread", "fio")]
        result = run_suite(runner, steps, params, local=FailingIperfClient())
    step = result.step("iperf3")
    assert step.status == StepStatus.failed and "client crashed" in step.error
    labels = [output.label for output in step.outputs]
    assert labels[-2:] == ["iperf3 server stop", "iperf3 workdir removal"]
    assert iperf3_servers(params.iperf3_port) == []
    assert result.step("fio_randread").status == StepStatus.ok  # the run went on


def test_cancel_between_steps(trial_server: Sshd, tmp_path: Path):
    cancelled = {"now": False}

    def progress(event: Progress) -> None:
        if event.event == "finished" and event.step == "ping":
            cancelled["now"] = True

    with SSHRunner(target_for(trial_server)) as runner:
        result = run_suite(
            runner,
            "quick",
            short_params(tmp_path),
            on_progress=progress,
            should_cancel=lambda: cancelled["now"],
        )
    assert result.status == SuiteStatus.cancelled
    assert [p.status for p in result.probes] == ["ok", "ok", "skipped", "skipped", "skipped"]
    assert any(s.metric == "packet_loss" for s in result.samples)  # partial results kept


def test_cancel_inside_a_long_stability_run(trial_server: Sshd, tmp_path: Path):
    params = short_params(tmp_path, stability_repeats=50, stability_interval_s=60, stability_test_seconds=1)
    started = time.monotonic()
    seen: dict[str, Progress] = {}

    def measured_once() -> bool:
        """Cancel while the probe waits (60 s) after its first measurement."""
        if "last" not in seen or seen["last"].step != "stability":
            return False
        outputs = seen["last"].result.step("stability").outputs
        return any(output.parser == "iperf3" for output in outputs)

    with SSHRunner(target_for(trial_server)) as runner:
        result = run_suite(
            runner,
            "stability",
            params,
            on_progress=lambda e: seen.update(last=e),
            should_cancel=measured_once,
        )
    assert time.monotonic() - started < 20
    assert result.status == SuiteStatus.cancelled
    stability = result.step("stability")
    assert stability.status == StepStatus.cancelled
    assert len([s for s in stability.samples if s.metric == "throughput"]) == 1
    assert iperf3_servers(params.iperf3_port) == []


def test_connection_lost_mid_run_fails_the_run_and_keeps_partial_results(trial_server: Sshd, tmp_path: Path):
    runner = SSHRunner(target_for(trial_server)).connect()

    def progress(event: Progress) -> None:
        if event.event == "finished" and event.step == "inventory":
            runner.close()  # the link drops

    result = run_suite(runner, "quick", short_params(tmp_path), on_progress=progress)
    assert result.status == SuiteStatus.failed and result.error_kind == "disconnected"
    assert result.step("inventory").status == StepStatus.ok
    assert result.step("inventory").samples
    assert result.step("ping").status == StepStatus.ok  # ping runs from here
    assert result.step("iperf3").status == StepStatus.failed
    assert [p.status for p in result.probes[3:]] == ["skipped", "skipped"]


@pytest.mark.parametrize(
    ("change", "kind"),
    [
        ({"password": "wrong", "private_key": None}, "auth_failed"),
        ({"port": None}, "refused"),
        ({"host_key_fingerprint": "SHA256:" + "A" * 43}, "host_key_changed"),
        ({"host_key_fingerprint": None}, "unknown_host_key"),
    ],
)
def test_ssh_failures_give_a_failed_run(trial_server: Sshd, change: dict, kind: str):
    if "port" in change:
        change = {"port": free_port()}
    started = time.monotonic()
    result = run_on_server(target_for(trial_server, **change), "quick", SuiteParams())
    assert time.monotonic() - started < 10
    assert result.status == SuiteStatus.failed and result.error_kind == kind and result.error
    assert all(probe.status == StepStatus.skipped for probe in result.probes)


def test_registry_rejects_duplicates():
    assert {"quick", "standard", "stability"} <= set(SUITES)
    with pytest.raises(ValueError, match="registered twice"):
        suite("quick")(lambda: [])
    with pytest.raises(KeyError, match="known"):
        suite_steps("marathon")


def test_standin_install_is_a_test_artifact(tmp_path: Path):
    """The stand-in prints recorded CSV for exactly the queries the probe makes, nothing else."""
    standin = install_standin(tmp_path)
    ok = subprocess.run(
        [str(standin), "--query-gpu=index,name,memory.total", "--format=csv"], capture_output=True
    )
    assert ok.returncode == 0 and b"NVIDIA H800" in ok.stdout
    assert subprocess.run([str(standin), "--bogus"], capture_output=True).returncode == 2


def test_peer_mode_measures_target_to_peer(trial_server: Sshd, tmp_path: Path):
    """With a peer, the iperf3 server runs on the peer and the client on the target (intranet path)."""
    steps = [Step("ping", "ping"), Step("iperf3", "iperf3")]
    params = short_params(tmp_path, iperf3_seconds=1, peer_address="127.0.0.1")
    with (
        Sshd(tmp_path / "peer") as peer_sshd,
        SSHRunner(target_for(trial_server)) as target,
        SSHRunner(target_for(peer_sshd)) as peer,
    ):
        result = run_suite(target, steps, params, peer=peer)
    assert [p.status for p in result.probes] == [StepStatus.ok, StepStatus.ok], [
        p.error for p in result.probes
    ]
    roles = {(o.label, o.role) for o in result.step("iperf3").outputs}
    assert ("iperf3 server start", "peer") in roles and ("iperf3 intranet", "target") in roles
    throughput = next(s for s in result.samples if s.metric == "throughput")
    assert throughput.metadata["path"] == "intranet" and throughput.metadata["role"] == "target"
    paths = {s.metadata["path"] for s in result.samples if s.metric == "packet_loss"}
    assert paths == {"gpuvet->target", "target->peer"}
    assert iperf3_servers(params.iperf3_port) == []
