"""Pasted outputs of other vintages become uploaded runs compared with the offer like any other."""

from __future__ import annotations

from sqlmodel import Session

from app.trials import bench_uploads
from tests.benchmarks.conftest import DATA
from tests.cases import test_measured_offers as measured

offers = measured.offers  # two offers of one provider: 8x H800, local NVMe, 500k IOPS claimed


def _comparisons(run) -> dict[str, dict]:
    return {comparison["check"]: comparison for comparison in run.comparisons}


def test_a_pasted_nvidia_smi_table_counts_the_gpus_against_the_offer(session: Session, offers):
    text = (DATA / "nvidia-smi" / "table_550_4x4090.txt").read_text()
    run = bench_uploads.upload_output(session, offer_id=offers[0].id, tool="nvidia-smi", output=text)
    found = _comparisons(run)
    assert found["gpu_count"]["verdict"] == "fail"
    assert found["gpu_count"]["measured"] == 4 and found["gpu_count"]["claimed"] == 8
    assert found["gpu_model"]["verdict"] == "fail"  # RTX 4090 against the H800 of the offer


def test_a_pasted_fio_2_output_is_compared_with_the_claimed_iops(session: Session, offers):
    text = (DATA / "fio_2.1_randread.json").read_text()
    run = bench_uploads.upload_output(session, offer_id=offers[0].id, tool="fio", output=text, path="storage")
    iops = _comparisons(run)["iops"]
    assert iops["measured"] == 187453 and iops["claimed"] == 500000
    assert iops["verdict"] == "fail"  # 37% of the claim: below the fail ratio 0.5


def test_pasted_cluster_outputs_are_compared_too(session: Session, offers):
    nccl = (DATA / "nccl" / "all_reduce_8xh100.txt").read_text()
    run = bench_uploads.upload_output(session, offer_id=offers[0].id, tool="nccl-tests", output=nccl)
    assert _comparisons(run)["collective"]["verdict"] == "pass"
    health = (DATA / "nvidia-smi" / "health_8xh800.csv").read_text()
    run = bench_uploads.upload_output(session, offer_id=offers[0].id, tool="nvidia-smi-health", output=health)
    assert {c["verdict"] for c in run.comparisons if c["check"] == "gpu_health"} == {"warn", "fail"}
    kernel = (DATA / "nvidia-smi" / "dmesg_xid.txt").read_text()
    run = bench_uploads.upload_output(session, offer_id=offers[0].id, tool="dmesg", output=kernel)
    assert any(c["check"] == "gpu_health" and "Xid 79" in c["reason_en"] for c in run.comparisons)
    perftest = (DATA / "rdma" / "ib_write_bw_gbits.txt").read_text()
    run = bench_uploads.upload_output(
        session, offer_id=offers[0].id, tool="perftest", output=perftest, path="intranet"
    )
    assert run.state == "succeeded"
