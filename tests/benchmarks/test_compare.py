"""Claims versus measurements (pure): verdict boundaries, storage, IOPS, GPUs, ping, stability."""

from __future__ import annotations

import json

import pytest

from benchmarks.compare import CHECKS, Claims, Thresholds, Verdict, check, compare, ratio_verdict
from benchmarks.probes import parse
from benchmarks.sample import Sample
from tests.benchmarks.conftest import DATA


def throughput(
    value: float, *, purpose: str = "throughput", path: str = "public", step: str = "iperf3"
) -> Sample:
    """A throughput sample as the runner tags it."""
    return Sample("throughput", value, "Mbit/s", {"purpose": purpose, "path": path, "step": step})


def only(comparisons, name: str):
    """The one comparison of check `name`."""
    found = [c for c in comparisons if c.check == name]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("measured", "verdict"),
    [(1000, "pass"), (800, "pass"), (799.9, "warn"), (500, "warn"), (499.9, "fail"), (350, "fail")],
)
def test_bandwidth_verdict_boundaries(measured, verdict):
    result = only(compare(Claims(public_mbps=1000), [throughput(measured)]), "bandwidth")
    assert result.verdict == Verdict(verdict)
    assert result.ratio == pytest.approx(measured / 1000, abs=1e-3)
    assert result.claimed == 1000 and result.unit == "Mbit/s"
    assert result.reason_zh and result.reason_en


def test_seed_example_10g_measured_3_5g_fails():
    result = only(compare(Claims(intranet_gbps=10), [throughput(3500, path="intranet")]), "bandwidth")
    assert result.verdict == Verdict.failed and result.claimed == 10_000
    assert "intranet" in result.reason_en and "内网" in result.reason_zh


def test_thresholds_are_configurable():
    strict = Thresholds(bandwidth_pass=0.95, bandwidth_warn=0.9)
    assert (
        only(compare(Claims(public_mbps=100), [throughput(92)], thresholds=strict), "bandwidth").verdict
        == "warn"
    )
    assert ratio_verdict(0.89, 0.95, 0.9) == Verdict.failed


def test_no_claim_gives_information_only():
    result = only(compare(Claims(), [throughput(94)]), "bandwidth")
    assert result.verdict == Verdict.info and result.claimed is None


def test_stability_needs_enough_samples():
    samples = [throughput(100, purpose="stability"), throughput(20, purpose="stability")]
    assert only(compare(Claims(bandwidth_type="dedicated"), samples), "stability").verdict == Verdict.info


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        ([940, 935, 942, 938, 941, 939], Verdict.passed),
        ([940, 930, 945, 400, 420, 938], Verdict.failed),  # evening sag: low minimum, high CV
        ([940, 900, 860, 700, 940, 950], Verdict.failed),  # minimum 76% of the median, CV 0.10
        ([500, 1000, 500, 1000, 500, 1000], Verdict.failed),  # swinging
    ],
)
def test_stability_flags_shared_behaviour(values, verdict):
    samples = [throughput(value, purpose="stability") for value in values]
    thresholds = Thresholds(stability_min_over_median=0.8)
    result = only(compare(Claims(bandwidth_type="dedicated"), samples, thresholds=thresholds), "stability")
    assert result.verdict == verdict
    assert (result.red_flag == 12) == (verdict == Verdict.failed)
    assert result.evidence["values"] == values


def test_stability_samples_are_not_judged_as_single_tests():
    samples = [throughput(value, purpose="stability") for value in (100, 100, 100)]
    assert not [c for c in compare(Claims(public_mbps=1000), samples) if c.check == "bandwidth"]


def storage(kind: str) -> Sample:
    """A storage_class sample."""
    return Sample("storage_class", kind, "", {"reason": f"/dev/x is {kind}", "fstype": "ext4"})


@pytest.mark.parametrize(
    ("claimed", "detected", "verdict", "red_flag"),
    [
        ("local_nvme", "local_nvme", Verdict.passed, None),
        ("local_nvme", "virtual_disk", Verdict.failed, 12),
        ("local_nvme", "network_fs", Verdict.failed, 12),
        ("local_sata_ssd", "local_nvme", Verdict.passed, None),
        ("cloud_disk", "virtual_disk", Verdict.passed, None),
        ("nfs", "local_nvme", Verdict.warn, None),
        ("unknown", "virtual_disk", Verdict.info, None),
        (None, "local_nvme", Verdict.info, None),
    ],
)
def test_storage_type(claimed, detected, verdict, red_flag):
    result = only(compare(Claims(storage_type=claimed), [storage(detected)]), "storage_type")
    assert (result.verdict, result.red_flag) == (verdict, red_flag)
    assert result.measured == detected


def test_storage_from_recorded_disk_output_is_not_local_nvme():
    samples = parse("disk", (DATA / "disk_virtio_ext4.txt").read_text())
    result = only(compare(Claims(storage_type="local_nvme"), samples), "storage_type")
    assert result.verdict == Verdict.failed and "not local NVMe" in result.reason_en


def test_iops_against_claim_and_typical_range():
    samples = parse("fio", (DATA / "fio_randread.json").read_text())  # 133,464 IOPS
    results = compare(Claims(nominal_iops=200_000, storage_type="local_nvme"), samples)
    assert only(results, "iops").verdict == Verdict.warn  # 67% of the claim
    assert not [c for c in results if c.check == "iops_range"]  # inside 100k-1M
    low = compare(Claims(storage_type="local_nvme"), [Sample("read_iops", 3000.0, "IOPS")])
    assert only(low, "iops_range").verdict == Verdict.warn
    assert "100,000-1,000,000" in only(low, "iops_range").reason_en


def test_gpu_model_and_count_from_recorded_inventory():
    samples = [
        s.with_metadata(host="h")
        for s in parse("inventory", (DATA / "inventory_standin_gpu.txt").read_text())
    ]
    ok = compare(Claims(gpu_model="H800", gpus_per_node=8), samples)
    assert only(ok, "gpu_model").verdict == Verdict.passed and only(ok, "gpu_count").verdict == Verdict.passed
    bad = compare(Claims(gpu_model="H100", gpus_per_node=4), samples)
    assert (
        only(bad, "gpu_model").verdict == Verdict.failed and only(bad, "gpu_count").verdict == Verdict.failed
    )


def test_gpu_model_matching_ignores_vendor_words_and_spacing():
    samples = [
        s.with_metadata(host="h")
        for s in parse(
            "nvidia-smi", (DATA / "nvidia-smi" / "inventory_4x4090_noheader_nounits.csv").read_text()
        )
    ]
    assert only(compare(Claims(gpu_model="RTX 4090"), samples), "gpu_model").verdict == Verdict.passed
    assert only(compare(Claims(gpu_model="rtx4090"), samples), "gpu_model").verdict == Verdict.passed


def test_no_gpu_on_a_gpu_offer():
    samples = parse("inventory", (DATA / "inventory_no_gpu.txt").read_text())
    result = only(compare(Claims(gpus_per_node=8), samples), "gpu_count")
    assert result.verdict == Verdict.failed and result.measured == 0


def test_gpu_utilisation_readings():
    busy = parse("nvidia-smi", (DATA / "nvidia-smi" / "sampling_8xh800.csv").read_text())
    assert {c.verdict for c in compare(Claims(), busy) if c.check == "gpu_utilization"} == {Verdict.passed}
    swinging = parse("nvidia-smi", (DATA / "nvidia-smi" / "sampling_swinging_na.csv").read_text())
    assert {c.verdict for c in compare(Claims(), swinging) if c.check == "gpu_utilization"} == {Verdict.warn}
    idle = parse("nvidia-smi-sampling", (DATA / "nvidia-smi" / "sampling_probe_output.txt").read_text())
    result = only(compare(Claims(), idle), "gpu_utilization")
    assert result.verdict == Verdict.info and "did not run" in result.reason_en


@pytest.mark.parametrize(
    ("recording", "loss", "jitter"),
    [
        ("ping_ok.txt", Verdict.passed, Verdict.passed),
        ("ping_partial_loss.txt", Verdict.failed, Verdict.passed),
        ("ping_jitter.txt", Verdict.passed, Verdict.warn),
    ],
)
def test_ping_loss_and_jitter(recording, loss, jitter):
    samples = [s.with_metadata(path="gpuvet->target") for s in parse("ping", (DATA / recording).read_text())]
    results = compare(Claims(), samples)
    assert only(results, "ping_loss").verdict == loss
    assert only(results, "ping_jitter").verdict == jitter


def test_small_loss_warns():
    samples = [Sample("packet_loss", 1.0, "%", {"path": "p"})]
    assert only(compare(Claims(), samples), "ping_loss").verdict == Verdict.warn


def test_checks_registry_rejects_duplicates():
    assert {"bandwidth", "stability", "storage_type", "iops", "gpu", "ping"} <= set(CHECKS)
    with pytest.raises(ValueError, match="registered twice"):
        check("bandwidth")(lambda inputs: [])


def test_records_are_json_ready():
    results = compare(
        Claims(public_mbps=100, storage_type="local_nvme"), [throughput(50), storage("virtual_disk")]
    )
    assert json.loads(json.dumps([c.to_dict() for c in results]))


def test_an_idle_nvidia_smi_table_is_a_snapshot_not_a_low_utilisation():
    # real: the plain table of an idle H200 (0 %), as providers paste it
    idle = parse("nvidia-smi", (DATA / "real_h200" / "table_idle.txt").read_text())
    result = only(compare(Claims(), idle), "gpu_utilization")
    assert result.verdict == Verdict.info and "not judged" in result.reason_en
    assert result.measured is None


def test_the_workload_warm_up_is_not_judged_as_low_utilisation():
    # real: the probe's sampling on an H200; 8 readings at 0 % while torch starts, then
    # 100, 100, 99, 100, 100, 99, 100, 99 % (read off the file): mean 99.625 %
    busy = parse("nvidia-smi-sampling", (DATA / "real_h200" / "sampling_probe_output.txt").read_text())
    result = only(compare(Claims(), busy), "gpu_utilization")
    assert result.verdict == Verdict.passed
    assert result.measured == 99.6
    assert result.evidence["warm_up_samples"] == 8 and result.evidence["samples"] == 8
