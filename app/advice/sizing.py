"""Sizing arithmetic: pure functions of plain numbers (decimal units: 1 GB = 1e9 B, 1 Gbps = 1e9 bit/s)."""

from __future__ import annotations

import math
from typing import NamedTuple

BITS_PER_BYTE = 8
GIGA = 1e9
MEGA = 1e6


def gradient_bytes(parameters: float, bytes_per_gradient: float) -> float:
    """Bytes of gradients produced per step: parameters x bytes per gradient element."""
    return parameters * bytes_per_gradient


def weight_bytes(parameters: float, bytes_per_parameter: float) -> float:
    """Bytes of the model's weights: parameters x bytes per element (the gradient formula, one copy)."""
    return gradient_bytes(parameters, bytes_per_parameter)


def ring_factor(nodes: int) -> float:
    """Share of the gradient each node sends (and receives) in a ring all-reduce: 2(N-1)/N."""
    if nodes < 1:
        raise ValueError("nodes must be at least 1")
    return 2 * (nodes - 1) / nodes


def allreduce_bytes_per_node(gradient: float, nodes: int) -> float:
    """Bytes each node sends per step in a ring all-reduce of `gradient` bytes over `nodes` nodes."""
    return ring_factor(nodes) * gradient


def transfer_seconds(payload_bytes: float, rate_bits_per_s: float, efficiency: float = 1.0) -> float:
    """Seconds to move `payload_bytes` over a link of `rate_bits_per_s` at `efficiency` of line rate."""
    if rate_bits_per_s <= 0 or efficiency <= 0:
        return math.inf
    return payload_bytes * BITS_PER_BYTE / (rate_bits_per_s * efficiency)


def sync_seconds(traffic_bytes: float, link_gbps: float, efficiency: float) -> float:
    """Seconds one gradient synchronisation takes on a `link_gbps` link at `efficiency`."""
    return transfer_seconds(traffic_bytes, link_gbps * GIGA, efficiency)


def shortest_step_seconds(
    traffic_bytes: float, link_gbps: float, efficiency: float, sync_share: float
) -> float:
    """The shortest step a `link_gbps` link supports when the sync may take `sync_share` of a step:
    one synchronisation's time (sync_seconds) ÷ the share."""
    if sync_share <= 0:
        return math.inf
    return sync_seconds(traffic_bytes, link_gbps, efficiency) / sync_share


def needed_gbps(traffic_bytes: float, seconds: float, efficiency: float = 1.0) -> float:
    """Line rate in Gbps that moves `traffic_bytes` within `seconds` at `efficiency`."""
    if seconds <= 0:
        return math.inf
    return traffic_bytes * BITS_PER_BYTE / seconds / efficiency / GIGA


def upload_seconds(dataset_gb: float, uplink_mbps: float, efficiency: float = 1.0) -> float:
    """Seconds to upload `dataset_gb` over an `uplink_mbps` uplink (efficiency 1.0 = line rate)."""
    return transfer_seconds(dataset_gb * GIGA, uplink_mbps * MEGA, efficiency)


def rtt_ms(distance_km: float, *, route_factor: float, km_per_ms: float, equipment_ms: float) -> float:
    """Round-trip time over fibre: 2 x distance x route factor / speed in fibre + equipment delay."""
    return 2 * distance_km * route_factor / km_per_ms + equipment_ms


def checkpoint_write_mb_s(size_gb: float, stall_seconds: float) -> float:
    """Sustained write rate (MB/s) that stores a `size_gb` checkpoint within `stall_seconds`."""
    if stall_seconds <= 0:
        return math.inf
    return size_gb * 1000 / stall_seconds


def checkpoint_stall_seconds(size_gb: float, write_mb_s: float) -> float:
    """Seconds training waits while a `size_gb` checkpoint is written at `write_mb_s`."""
    if write_mb_s <= 0:
        return math.inf
    return size_gb * 1000 / write_mb_s


def reads_per_sample(sample_kb: float, block_kb: float) -> int:
    """Random reads one sample costs when each read moves at most `block_kb`."""
    return max(1, math.ceil(sample_kb / block_kb))


def read_iops(samples_per_second: float, sample_kb: float, block_kb: float) -> float:
    """Random-read IOPS the data loader needs: samples/s x reads per sample."""
    return samples_per_second * reads_per_sample(sample_kb, block_kb)


def read_mb_s(samples_per_second: float, sample_kb: float) -> float:
    """Read throughput (MB/s) the data loader needs."""
    return samples_per_second * sample_kb / 1000


def gpu_hour_price(month_cny: float, gpus: int, hours_per_month: float) -> float:
    """Price per GPU-hour of a monthly price for `gpus` GPUs used `hours_per_month` hours a month."""
    return month_cny / (gpus * hours_per_month)


class MonthlyCost(NamedTuple):
    """Monthly cost of an offer for the case; `basis` says which price it came from."""

    value: float | None
    basis: str  # "month" (price_month_cny x nodes), "gpu_hour" (x GPUs x hours x nodes), "unknown"
    by_month: float | None
    by_gpu_hour: float | None


def monthly_cost(
    *,
    price_month_cny: float | None,
    price_gpu_hour_cny: float | None,
    gpus_per_node: int,
    nodes: int,
    hours_per_month: float,
) -> MonthlyCost:
    """Cost per month for `nodes` nodes: the cheaper of the monthly price and GPU-hours x GPUs x hours."""
    by_month = price_month_cny * nodes if price_month_cny is not None else None
    by_hour = (
        price_gpu_hour_cny * gpus_per_node * hours_per_month * nodes
        if price_gpu_hour_cny is not None
        else None
    )
    if by_month is None and by_hour is None:
        return MonthlyCost(None, "unknown", None, None)
    if by_hour is None or (by_month is not None and by_month <= by_hour):
        return MonthlyCost(by_month, "month", by_month, by_hour)
    return MonthlyCost(by_hour, "gpu_hour", by_month, by_hour)
