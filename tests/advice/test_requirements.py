"""Requirements of a case: each with its value, unit and the arithmetic written out."""

from __future__ import annotations

import pytest

from app.advice import cities
from app.advice.requirements import compute_needs, rtt_between
from tests.advice.factories import inference_answers, training_answers


def by_key(needs):
    return {q.key: q for q in needs.quantities}


def test_distributed_training_needs_with_arithmetic():
    needs = compute_needs(training_answers())
    q = by_key(needs)
    assert q["gradient_gb"].value == 14 and q["gradient_gb"].unit == "GB"
    assert q["allreduce_gb"].value == pytest.approx(21)
    assert "2×(4−1)/4 × 14 GB = 1.5 × 14 GB = 21 GB" in q["allreduce_gb"].arithmetic_zh
    assert q["sync_seconds_1g"].value == pytest.approx(178.72, abs=0.01)
    assert q["sync_seconds_10g"].value == pytest.approx(17.872, abs=0.001)
    assert q["intranet_gbps_needed"].value == pytest.approx(56)
    assert "10 s × 30% = 3 s" in q["intranet_gbps_needed"].arithmetic_en
    assert q["rdma"].value == "required"
    assert q["checkpoint_write_mb_s"].value == pytest.approx(833.33, abs=0.01)
    assert q["storage_type"].value == "local_nvme"
    assert "upload_hours" not in q  # the data is already at the provider
    data = q["allreduce_gb"].to_dict()
    assert set(data) == {
        "key",
        "label_zh",
        "label_en",
        "value",
        "unit",
        "display_zh",
        "display_en",
        "arithmetic_zh",
        "arithmetic_en",
    }
    assert (data["display_zh"], q["rdma"].to_dict()["display_zh"]) == ("21 GB", "需要")
    assert q["storage_type"].to_dict()["display_en"] == "local NVMe"


def test_upload_and_iops_requirements():
    needs = compute_needs(
        training_answers(
            data={"dataset_gb": 10, "source": "office_upload", "samples_per_second": 2000, "sample_kb": 300},
            site={"uplink_mbps": 20},
        )
    )
    q = by_key(needs)
    assert q["upload_hours"].value == pytest.approx(1.111, abs=0.001)
    assert "10 GB × 8 ÷ 20 Mbps = 4,000 s ≈ 1.11 小时" in q["upload_hours"].arithmetic_zh
    # 300 KB in 256 KB reads = 2 reads per sample
    assert q["read_iops"].value == 4000


def test_inference_network_budget_and_no_training_numbers():
    needs = compute_needs(inference_answers())
    q = by_key(needs)
    assert q["network_rtt_budget_ms"].value == 40
    assert "300 ms − 260 ms" in q["network_rtt_budget_ms"].arithmetic_en.replace("model time ", "").replace(
        "latency budget ", ""
    )
    assert not {"gradient_gb", "intranet_gbps_needed", "checkpoint_write_mb_s"} & set(q)
    assert needs.dedicated_bandwidth is True  # the default for interactive inference


def test_rtt_between_cities():
    distance, rtt = rtt_between(cities.lookup("北京"), cities.lookup("上海"))
    # about 1068 km: 2 x 1068 x 1.5 / 200 + 5 = 21 ms
    assert distance == pytest.approx(1068, rel=0.02)
    assert rtt == pytest.approx(21.0, abs=0.4)
