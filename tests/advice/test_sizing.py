"""Sizing arithmetic against hand-computed cases (decimal units: 1 GB = 1e9 bytes)."""

from __future__ import annotations

import math

import pytest

from app.advice import sizing


def test_upload_of_10_gb_over_20_mbps_takes_about_1_1_hours():
    # 10e9 B x 8 = 8e10 bit; / 20e6 bit/s = 4000 s = 1.111 h
    seconds = sizing.upload_seconds(10, 20)
    assert seconds == pytest.approx(4000)
    assert seconds / 3600 == pytest.approx(1.111, abs=0.001)
    # at 94% TCP goodput the same upload takes 4000 / 0.94 = 4255 s
    assert sizing.upload_seconds(10, 20, 0.94) == pytest.approx(4255.3, abs=0.1)


def test_gradient_bytes_and_ring_all_reduce_traffic():
    # 7B parameters in bf16: 7e9 x 2 B = 14 GB; 4 nodes: 2(4-1)/4 = 1.5 -> 21 GB per node per step
    gradient = sizing.gradient_bytes(7e9, 2)
    assert gradient == 14e9
    assert sizing.ring_factor(4) == 1.5
    assert sizing.ring_factor(2) == 1.0
    assert sizing.ring_factor(1) == 0.0
    assert sizing.allreduce_bytes_per_node(gradient, 4) == pytest.approx(21e9)
    with pytest.raises(ValueError):
        sizing.ring_factor(0)


@pytest.mark.parametrize(
    ("link_gbps", "efficiency", "expected_seconds"),
    [
        (1, 0.94, 6.383),  # 1 Gbps Ethernet: 6e9 bit / (1e9 x 0.94)
        (10, 0.94, 0.6383),  # 10 Gbps Ethernet
        (200, 0.90, 0.03333),  # 200 Gbps RDMA at 90%
    ],
)
def test_four_node_sync_of_a_500_mb_gradient_on_1g_10g_and_rdma(link_gbps, efficiency, expected_seconds):
    # 250M parameters in bf16 = 500 MB of gradients; 4 nodes -> 1.5 x 500 MB = 750 MB = 6e9 bit per step
    traffic = sizing.allreduce_bytes_per_node(sizing.gradient_bytes(250e6, 2), 4)
    assert traffic == pytest.approx(750e6)
    assert sizing.sync_seconds(traffic, link_gbps, efficiency) == pytest.approx(expected_seconds, rel=1e-3)


def test_needed_bandwidth_for_a_target_sync_time():
    # 21 GB in 3 s: 168e9 bit / 3 s = 56 Gbps effective; over TCP at 94% a 59.57 Gbps line rate
    assert sizing.needed_gbps(21e9, 3) == pytest.approx(56)
    assert sizing.needed_gbps(21e9, 3, 0.94) == pytest.approx(59.574, abs=0.001)
    assert sizing.needed_gbps(1, 0) == math.inf


def test_round_trip_time_over_fibre():
    # 1000 km: 2 x 1000 x 1.5 / 200 = 15 ms, plus 5 ms of equipment
    assert sizing.rtt_ms(1000, route_factor=1.5, km_per_ms=200, equipment_ms=5) == pytest.approx(20)
    assert sizing.rtt_ms(0, route_factor=1.5, km_per_ms=200, equipment_ms=5) == 5


def test_checkpoint_throughput_and_stall():
    # 40 GB within 60 s needs 666.7 MB/s; at 150 MB/s it stalls 266.7 s
    assert sizing.checkpoint_write_mb_s(40, 60) == pytest.approx(666.667, abs=0.001)
    assert sizing.checkpoint_stall_seconds(40, 150) == pytest.approx(266.667, abs=0.001)
    assert sizing.checkpoint_stall_seconds(40, 0) == math.inf


def test_read_iops_counts_one_read_per_block_of_a_sample():
    assert sizing.reads_per_sample(64, 256) == 1
    assert sizing.reads_per_sample(600, 256) == 3
    assert sizing.read_iops(4000, 600, 256) == 12000
    assert sizing.read_mb_s(4000, 600) == 2400


def test_monthly_cost_takes_the_cheaper_price_and_says_which():
    by_month = sizing.monthly_cost(
        price_month_cny=86000, price_gpu_hour_cny=15.8, gpus_per_node=8, nodes=4, hours_per_month=720
    )
    # monthly: 86000 x 4 = 344000; hourly: 15.8 x 8 x 720 x 4 = 364032
    assert (by_month.value, by_month.basis) == (344000, "month")
    assert by_month.by_gpu_hour == pytest.approx(364032)
    part_time = sizing.monthly_cost(
        price_month_cny=86000, price_gpu_hour_cny=15.8, gpus_per_node=8, nodes=1, hours_per_month=200
    )
    # 15.8 x 8 x 200 = 25280 < 86000
    assert (part_time.value, part_time.basis) == (pytest.approx(25280), "gpu_hour")
    unknown = sizing.monthly_cost(
        price_month_cny=None, price_gpu_hour_cny=None, gpus_per_node=8, nodes=1, hours_per_month=720
    )
    assert (unknown.value, unknown.basis) == (None, "unknown")
