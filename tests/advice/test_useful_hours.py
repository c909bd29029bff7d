"""Price per useful GPU-hour against hand calculations (decimal units: 1 GB = 1e9 B, 1 Gbps = 1e9 bit/s)."""

from __future__ import annotations

import math

import pytest

from app.advice import sizing
from app.advice.facts import ASSUMED, CLAIMED, MEASURED
from app.advice.requirements import compute_needs
from app.advice.useful_hours import Figure, Price, Workload, useful_hours
from tests.advice.factories import inference_answers, training_answers

# 2 nodes x 8 GPUs training a 0.5B model in bf16: 0.5e9 x 2 B = 1 GB of gradients per step; a ring of 2 nodes
# sends 2(2-1)/2 x 1 GB = 1 GB per node per step. Target step 10 s of which the sizing leaves 30% to the sync:
# compute = 10 x (1 - 0.3) = 7 s. A 10 GB checkpoint every 30 minutes; 720 hours a month.
TWO_NODES = Workload(
    gpus=16,
    hours_per_month=720,
    allreduce_bytes=1e9,
    step_seconds=10,
    sync_share=0.3,
    checkpoint_gb=10,
    checkpoint_interval_minutes=30,
)


def test_a_cheap_offer_on_shared_1_gbps_costs_more_per_useful_hour_than_a_dearer_one_on_25_gbps():
    # Cheap: CNY 2.00 per GPU-hour; its shared 1 Gbps link measured 0.8 Gbps (iperf3 goodput, efficiency 1);
    # claimed cloud disk writing 200 MB/s.
    #   sync = 1e9 B x 8 / (0.8e9 bit/s x 1) = 10 s; step = 7 + 10 = 17 s; compute share = 7 / 17 = 0.411765
    #   stall = 10 GB x 1000 / 200 MB/s = 50 s per checkpoint; 60 / 30 = 2 an hour -> 100 s an hour
    #   useful = (1 - 100 / 3600) x 7 / 17 = (3500 / 3600) x (7 / 17) = 24500 / 61200 = 0.400327
    #   price per useful GPU-hour = 2.00 / 0.400327 = 4.995918
    cheap = useful_hours(TWO_NODES, Price(gpu_hour_cny=2.0), Figure(0.8, MEASURED), Figure(200, CLAIMED))
    assert cheap.price_basis == "gpu_hour"
    assert cheap.price_gpu_hour_cny == 2.0
    assert cheap.step.efficiency == 1.0
    assert cheap.step.compute_s == pytest.approx(7.0)
    assert cheap.step.sync_s == pytest.approx(10.0)
    assert cheap.step.exposed_s == pytest.approx(10.0)
    assert cheap.step.step_s == pytest.approx(17.0)
    assert cheap.step.share == pytest.approx(0.411765, abs=1e-6)
    assert cheap.stalls.per_checkpoint_s == pytest.approx(50.0)
    assert cheap.stalls.per_hour_s == pytest.approx(100.0)
    assert cheap.useful_share == pytest.approx(0.400327, abs=1e-6)
    assert cheap.price_per_useful_gpu_hour_cny == pytest.approx(4.995918, abs=1e-6)

    # Dearer: CNY 17,280 a month for one 8-GPU node = 17280 / (8 x 720) = CNY 3.00 per GPU-hour; a claimed
    # 25 Gbps dedicated link (a line rate: x 0.94 TCP goodput = 23.5 Gbps); local NVMe measured at 1,000 MB/s.
    #   sync = 8e9 bit / 23.5e9 bit/s = 0.340426 s; step = 7.340426 s; compute share = 7 / 7.340426 = 0.953623
    #   stall = 10 x 1000 / 1000 = 10 s per checkpoint, 2 an hour -> 20 s an hour
    #   useful = (3580 / 3600) x 0.953623 = 0.948325
    #   price per useful GPU-hour = 3.00 / 0.948325 = 3.163471
    dearer = useful_hours(
        TWO_NODES, Price(month_cny=17280, month_gpus=8), Figure(25, CLAIMED), Figure(1000, MEASURED)
    )
    assert dearer.price_basis == "month"
    assert dearer.price_gpu_hour_cny == pytest.approx(3.0)
    assert dearer.step.efficiency == 0.94
    assert dearer.step.sync_s == pytest.approx(0.340426, abs=1e-6)
    assert dearer.step.step_s == pytest.approx(7.340426, abs=1e-6)
    assert dearer.step.share == pytest.approx(0.953623, abs=1e-6)
    assert dearer.stalls.per_checkpoint_s == pytest.approx(10.0)
    assert dearer.stalls.per_hour_s == pytest.approx(20.0)
    assert dearer.useful_share == pytest.approx(0.948325, abs=1e-6)
    assert dearer.price_per_useful_gpu_hour_cny == pytest.approx(3.163471, abs=1e-6)

    # CNY 2.00 quoted, 5.00 per useful hour; CNY 3.00 quoted, 3.16 per useful hour.
    assert cheap.price_gpu_hour_cny < dearer.price_gpu_hour_cny
    assert cheap.price_per_useful_gpu_hour_cny > dearer.price_per_useful_gpu_hour_cny


def test_the_explanation_shows_the_arithmetic_in_both_languages():
    dearer = useful_hours(
        TWO_NODES, Price(month_cny=17280, month_gpus=8), Figure(25, CLAIMED), Figure(1000, MEASURED)
    )
    assert [reason.code for reason in dearer.reasons] == [
        "useful.price",
        "useful.sync",
        "useful.checkpoint",
        "useful.share",
    ]
    assert dearer.explanation("zh") == (
        "月价 17,280 元 ÷ (8 卡 × 每月 720 小时) = 3 元/卡·时；"
        "每步计算 7 s（目标步长 10 s × (1 − 30%)）；"
        "梯度同步 1 GB × 8 ÷ (25 Gbps（服务商声称）× 0.94) = 0.34 s，"
        "与计算不重叠；每步 7.34 s 中 GPU 计算占 95.4%；"
        "检查点 10 GB ÷ 1,000 MB/s（实测）= 每次停顿 10 s，每 30 分钟一次，每小时停顿 20 s；"
        "有效比例 = (1 − 20 s ÷ 3600 s) × 95.4% = 94.8%；3 元/卡·时 ÷ 94.8% = 每有效卡时 3.16 元"
    )
    assert dearer.explanation("en") == (
        "monthly price CNY 17,280 ÷ (8 GPUs × 720 h a month) = CNY 3 per GPU-hour; "
        "each step computes for 7 s (target step 10 s × (1 − 30%)); the gradient sync takes 1 GB × 8 ÷ "
        "(25 Gbps (claimed by provider) × 0.94) = 0.34 s, not overlapped with compute; "
        "the GPUs compute for 95.4% of each 7.34 s step; "
        "a 10 GB checkpoint at 1,000 MB/s (measured) stalls training for 10 s, every 30 min: 20 s an hour; "
        "useful share = (1 − 20 s ÷ 3600 s) × 95.4% = 94.8%; CNY 3 ÷ 94.8% = CNY 3.16 per useful GPU-hour"
    )
    # Each figure's sentence says where the figure came from.
    assert [reason.source for reason in dearer.reasons] == [None, CLAIMED, MEASURED, None]


def test_measured_and_claimed_flags_and_the_efficiency_they_bring():
    # Claimed 10 Gbps is a line rate: 10 x 0.94 = 9.4 Gbps; sync = 8e9 / 9.4e9 = 0.851064 s.
    # Measured 10 Gbps is iperf3 goodput already: sync = 8e9 / 10e9 = 0.8 s.
    claimed = useful_hours(TWO_NODES, Price(gpu_hour_cny=3), Figure(10, CLAIMED), Figure(500, ASSUMED))
    measured = useful_hours(TWO_NODES, Price(gpu_hour_cny=3), Figure(10, MEASURED), Figure(500, MEASURED))
    assert (claimed.intranet.source, claimed.intranet.measured) == (CLAIMED, False)
    assert (claimed.write.source, claimed.write.measured) == (ASSUMED, False)
    assert (measured.intranet.source, measured.intranet.measured) == (MEASURED, True)
    assert (measured.write.source, measured.write.measured) == (MEASURED, True)
    assert claimed.step.sync_s == pytest.approx(0.851064, abs=1e-6)
    assert measured.step.sync_s == pytest.approx(0.8)
    # A claimed RDMA rate is taken at 90%: 8e9 / (10e9 x 0.9) = 0.888889 s.
    rdma = useful_hours(
        TWO_NODES, Price(gpu_hour_cny=3), Figure(10, CLAIMED), Figure(500, CLAIMED), rdma=True
    )
    assert rdma.step.efficiency == 0.9
    assert rdma.step.sync_s == pytest.approx(0.888889, abs=1e-6)


def test_a_single_node_has_no_sync_and_needs_no_bandwidth():
    # One 8-GPU node: no sync, so the whole step computes; only the checkpoint stalls count.
    # stall = 10 GB x 1000 / 500 MB/s = 20 s, 2 an hour = 40 s; useful = 1 - 40 / 3600 = 0.988889
    # CNY 4 / 0.988889 = 4.044944
    one_node = Workload(gpus=8, hours_per_month=720, checkpoint_gb=10, checkpoint_interval_minutes=30)
    result = useful_hours(one_node, Price(gpu_hour_cny=4), Figure(None), Figure(500, MEASURED))
    assert result.step.sync_s == 0.0
    assert result.step.exposed_s == 0.0
    assert result.step.efficiency is None
    assert result.step.compute_s is None  # no target step given, and none needed
    assert result.step.share == 1.0
    assert result.useful_share == pytest.approx(0.988889, abs=1e-6)
    assert result.price_per_useful_gpu_hour_cny == pytest.approx(4.044944, abs=1e-6)
    assert result.reasons[1].code == "useful.no_sync"


def test_without_checkpoints_only_the_sync_counts():
    # 7 / 17 = 0.411765 of each hour computes; CNY 2 / 0.411765 = 4.857143
    no_checkpoints = Workload(
        gpus=16, hours_per_month=720, allreduce_bytes=1e9, step_seconds=10, sync_share=0.3
    )
    result = useful_hours(no_checkpoints, Price(gpu_hour_cny=2), Figure(0.8, MEASURED), Figure(None))
    assert result.stalls.per_hour_s == 0.0
    assert result.useful_share == pytest.approx(0.411765, abs=1e-6)
    assert result.price_per_useful_gpu_hour_cny == pytest.approx(4.857143, abs=1e-6)
    assert result.reasons[2].code == "useful.no_checkpoint"


@pytest.mark.parametrize("gbps", [None, 0, -1])
def test_a_missing_or_zero_bandwidth_is_a_clear_error(gbps):
    with pytest.raises(ValueError, match="intranet_gbps"):
        useful_hours(TWO_NODES, Price(gpu_hour_cny=2), Figure(gbps), Figure(200))


@pytest.mark.parametrize("rate", [None, 0])
def test_a_missing_write_rate_is_a_clear_error_when_the_case_checkpoints(rate):
    with pytest.raises(ValueError, match="write_mb_s"):
        useful_hours(TWO_NODES, Price(gpu_hour_cny=2), Figure(10), Figure(rate))


def test_a_sync_without_a_target_step_is_a_clear_error():
    no_step = Workload(gpus=16, hours_per_month=720, allreduce_bytes=1e9)
    with pytest.raises(ValueError, match="target_step_seconds"):
        useful_hours(no_step, Price(gpu_hour_cny=2), Figure(10), Figure(200))


def test_monthly_price_conversion():
    # CNY 23,040 a month for all 16 GPUs of the case: 23040 / (16 x 720) = CNY 2.00 per GPU-hour
    assert sizing.gpu_hour_price(23040, 16, 720) == pytest.approx(2.0)
    whole = useful_hours(TWO_NODES, Price(month_cny=23040), Figure(10, MEASURED), Figure(500, MEASURED))
    assert (whole.price_basis, whole.price_gpu_hour_cny, whole.hours_per_month) == ("month", 2.0, 720)
    # A case that runs 600 hours a month: 23040 / (16 x 600) = CNY 2.40 per GPU-hour
    part_time = Workload(gpus=16, hours_per_month=600)
    assert useful_hours(part_time, Price(month_cny=23040), Figure(None), Figure(None)).price_gpu_hour_cny == (
        pytest.approx(2.4)
    )
    # Both prices quoted: the cheaper counts, as sizing.monthly_cost picks it. At 600 hours a month
    # CNY 17,280 for 8 GPUs is 17280 / (8 x 600) = CNY 3.60 per GPU-hour: dearer than 2.50, cheaper than 4.00.
    both = Price(gpu_hour_cny=2.5, month_cny=17280, month_gpus=8)
    by_hour = useful_hours(part_time, both, Figure(None), Figure(None))
    assert (by_hour.price_basis, by_hour.price_gpu_hour_cny) == ("gpu_hour", 2.5)
    both = Price(gpu_hour_cny=4.0, month_cny=17280, month_gpus=8)
    by_month = useful_hours(part_time, both, Figure(None), Figure(None))
    assert (by_month.price_basis, by_month.price_gpu_hour_cny) == ("month", pytest.approx(3.6))


@pytest.mark.parametrize(
    ("price", "name"),
    [
        (Price(), "gpu_hour_cny or month_cny"),
        (Price(gpu_hour_cny=0), "gpu_hour_cny"),
        (Price(month_cny=-5), "month_cny"),
        (Price(month_cny=1000, month_gpus=0), "month_gpus"),
    ],
)
def test_a_price_that_is_missing_or_not_positive_is_a_clear_error(price, name):
    with pytest.raises(ValueError, match=name):
        useful_hours(TWO_NODES, price, Figure(10), Figure(200))


def test_checkpoints_that_never_finish_leave_no_useful_hour():
    # 10 GB at 5 MB/s = 2000 s per checkpoint, twice an hour = 4000 s > 3600 s: useful share 0
    result = useful_hours(TWO_NODES, Price(gpu_hour_cny=2), Figure(10, MEASURED), Figure(5, MEASURED))
    assert result.stalls.per_hour_s == pytest.approx(4000)
    assert result.useful_share == 0.0
    assert math.isinf(result.price_per_useful_gpu_hour_cny)


def test_the_workload_of_a_case_is_its_sizing():
    # factories.training_answers: 4 nodes x 8 GPUs, 7B bf16 -> 14 GB of gradients, ring 2(4-1)/4 = 1.5
    # -> 21 GB per node per step; 10 s target step with 30% for the sync; 100 GB checkpoints, here hourly.
    answers = training_answers(checkpoint={"interval_minutes": 60}, budget={"hours_per_month": 600})
    workload = Workload.of_case(answers, compute_needs(answers))
    assert workload == Workload(
        gpus=32,
        hours_per_month=600,
        allreduce_bytes=pytest.approx(21e9),
        step_seconds=10,
        sync_share=0.3,
        checkpoint_gb=100,
        checkpoint_interval_minutes=60,
    )
    inference = inference_answers()
    serving = Workload.of_case(inference, compute_needs(inference))
    assert (serving.gpus, serving.allreduce_bytes, serving.checkpoint_gb) == (2, None, None)
