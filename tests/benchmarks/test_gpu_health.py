"""GPU health from the nvidia-smi health query and the kernel log (written in the exact real layouts)."""

from __future__ import annotations

import pytest

from benchmarks.compare import Claims, Verdict, compare
from benchmarks.probes import parse
from benchmarks.probes.gpu_health import HEALTH_QUERY, slowdowns
from benchmarks.sample import ParseError
from tests.benchmarks.conftest import DATA
from tests.benchmarks.test_parsers import one

GPU = DATA / "nvidia-smi"


def health(csv_name: str, log_name: str = "dmesg_clean.txt") -> list:
    samples = parse("nvidia-smi", (GPU / csv_name).read_text()) + parse("xid", (GPU / log_name).read_text())
    return [c for c in compare(Claims(), samples) if c.check == "gpu_health"]


def by_subject(comparisons: list) -> dict[str, list]:
    found: dict[str, list] = {}
    for comparison in comparisons:
        found.setdefault(comparison.subject, []).append(comparison)
    return found


def test_the_health_query_is_read_by_the_csv_parser():
    header = (GPU / "health_8xh800.csv").read_text().splitlines()[0]
    assert [column.split(" [")[0].strip() for column in header.split(",")] == list(HEALTH_QUERY)
    samples = parse("nvidia-smi", (GPU / "health_8xh800.csv").read_text())
    assert one(samples, "gpu_pcie_width", gpu_index=2) == 8
    assert one(samples, "gpu_pcie_width_max", gpu_index=2) == 16
    assert one(samples, "gpu_ecc_uncorrected", gpu_index=6) == 2
    assert one(samples, "gpu_power_limit", gpu_index=0) == 700


def test_a_narrow_link_ecc_errors_retired_pages_and_slowdowns_are_each_named():
    found = by_subject(health("health_8xh800.csv"))
    assert [c.verdict for c in found["gpu:2"]] == [Verdict.warn] and "x8 of x16" in found["gpu:2"][
        0
    ].reason_en
    assert {c.verdict for c in found["gpu:6"]} == {Verdict.failed, Verdict.warn}  # ECC errors, pages pending
    assert "thermal" in found["gpu:5"][0].reason_en and "降频" in found["gpu:5"][0].reason_zh
    assert "gpu:7" not in found  # Gen 1 of Gen 5 at idle is power saving, not a fault
    assert not any(c.verdict is Verdict.passed for c in health("health_8xh800.csv"))


def test_consumer_cards_without_ecc_are_not_failed_for_it():
    found = by_subject(health("health_4x4090_no_ecc.csv"))
    assert sorted(found) == ["gpu:1", "gpu:2"]  # the two cards on x4 risers
    assert all(c.verdict is Verdict.warn for c in found["gpu:1"] + found["gpu:2"])


def test_xid_events_by_severity():
    found = by_subject(health("health_4x4090_no_ecc.csv", "dmesg_xid.txt"))
    assert found["xid:0000:ab:00"][0].verdict is Verdict.failed  # 79: fallen off the bus
    assert found["xid:0000:ba:00"][0].verdict is Verdict.warn  # 94: contained ECC error
    assert found["xid:0000:5d:00"][0].verdict is Verdict.info  # 13: usually the application
    samples = parse("xid", (GPU / "dmesg_xid.txt").read_text())
    assert one(samples, "gpu_xid_events") == 3


def test_a_healthy_server_passes_once():
    clean = (GPU / "health_8xh800.csv").read_text().splitlines()
    healthy = "\n".join([clean[0], clean[1], clean[2]])
    samples = parse("nvidia-smi", healthy) + parse("xid", (GPU / "dmesg_clean.txt").read_text())
    verdicts = [c.verdict for c in compare(Claims(), samples) if c.check == "gpu_health"]
    assert verdicts == [Verdict.passed]


def test_no_health_data_gives_no_health_verdict():
    samples = parse("nvidia-smi", (GPU / "inventory_8xh800.csv").read_text())
    assert [c for c in compare(Claims(), samples) if c.check == "gpu_health"] == []


@pytest.mark.parametrize(
    ("mask", "expected"),
    [
        ("0x0000000000000001", []),
        ("0x0000000000000048", ["hardware slowdown", "hardware thermal slowdown"]),
        ("[N/A]", []),
    ],
)
def test_slowdown_bits(mask: str, expected: list[str]):
    assert [en for _zh, en in slowdowns(mask)] == expected


def test_text_that_is_not_a_kernel_log_is_refused():
    with pytest.raises(ParseError) as caught:
        parse("xid", "hello, this is not a log\n")
    assert "可读取：" in str(caught.value)


@pytest.mark.slow
def test_gpu_suite_for_real_with_the_stand_in_gpu(trial_server, tmp_path):
    """The gpu suite over the loopback sshd: health query and kernel log, sampling, data loading."""
    from benchmarks.ssh import SSHRunner
    from benchmarks.suites import StepStatus, SuiteStatus, run_suite
    from tests.benchmarks.conftest import short_params, target_for

    params = short_params(tmp_path, dataload_files=200, dataload_file_kib=8, dataload_seconds=3)
    with SSHRunner(target_for(trial_server)) as runner:
        result = run_suite(runner, "gpu", params)
    assert result.status == SuiteStatus.succeeded, result.error
    statuses = {p.step: p.status for p in result.probes}
    assert statuses == {
        **dict.fromkeys(["inventory", "gpu_health", "gpu", "dataload"], StepStatus.ok),
        "collective": StepStatus.failed,
    }, {p.step: p.error for p in result.probes}
    # no nccl-tests and no PyTorch on this machine: said by name, and the other steps still ran
    assert result.step("collective").error == "neither nccl-tests (all_reduce_perf) nor PyTorch is installed"
    health_step = result.step("gpu_health")
    labels = [output.label for output in health_step.outputs]
    assert labels == ["nvidia-smi health", "kernel log (Xid)", "dcgmi diag"]  # no DCGM here: a note
    assert one(health_step.samples, "gpu_xid_events") == 0  # this machine's own kernel log: no NVRM Xid
    found = by_subject([c for c in compare(Claims(), result.samples) if c.check == "gpu_health"])
    assert "x8 of x16" in found["gpu:2"][0].reason_en
    assert any(s.metric == "dataload_files_per_s" for s in result.samples)
    assert list(tmp_path.iterdir()) == []
