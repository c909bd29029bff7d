"""More real outputs of the RDMA inventory and nccl-tests, copied from public sources (see the data README).

These parsers read them already; the tests keep it so. Expected values are typed from reading the files.
"""

from __future__ import annotations

import pytest

from benchmarks.probes import parse
from tests.benchmarks.conftest import DATA
from tests.benchmarks.test_parsers import one, values

RDMA = DATA / "rdma"
NCCL = DATA / "nccl"


def test_ibv_devinfo_of_two_connectx3_with_a_device_ports_line():
    samples = parse("ibv_devinfo", (RDMA / "ibv_devinfo_2x_connectx3_device_ports.txt").read_text())
    assert values(samples, "rdma_port") == ["PORT_ACTIVE", "PORT_DOWN", "PORT_ACTIVE", "PORT_DOWN"]
    assert [(s.metadata["device"], s.metadata["port"]) for s in samples] == [
        ("mlx4_1", 1),
        ("mlx4_1", 2),
        ("mlx4_0", 1),
        ("mlx4_0", 2),
    ]
    assert samples[0].metadata["firmware"] == "2.42.5000"
    assert values(samples, "rdma_link_rate") == []  # no width or speed without -v


def test_ibv_devinfo_vv_of_an_hdr_adapter_and_a_disabled_one():
    samples = parse("ibv_devinfo", (RDMA / "ibv_devinfo_vv_hdr_one_port_down.txt").read_text())
    assert values(samples, "rdma_port") == ["PORT_ACTIVE", "PORT_DOWN"]
    assert one(samples, "rdma_link_rate") == 200  # 4X at 50.0 Gbps; the down port ("invalid speed") has none
    assert one(samples, "rdma_link_rate", device="mlx5_0") == 200


def test_nccl_all_reduce_over_twelve_hosts_of_two_a800():
    samples = parse("nccl", (NCCL / "all_reduce_24xa800_12_hosts.txt").read_text())
    meta = samples[0].metadata
    assert meta["ranks"] == 24 and meta["nodes"] == 12 and meta["gpu_models"] == ["NVIDIA A800-SXM4-80GB"]
    assert one(samples, "nccl_busbw_average") == pytest.approx(41.6967)
    assert one(samples, "nccl_busbw_peak") == pytest.approx(42.34)  # in-place at 2 GiB
    assert one(samples, "nccl_busbw", size_bytes=536870912, placement="out_of_place") == pytest.approx(41.26)


def test_nccl_all_gather_pasted_without_its_rank_lines():
    samples = parse("nccl", (NCCL / "all_gather_2_nodes_tcpxo_no_ranks.txt").read_text())
    meta = samples[0].metadata
    assert meta["ranks"] is None and meta["hosts"] == [] and meta["redop"] == "none"
    assert one(samples, "nccl_busbw_average") == pytest.approx(22.449)
    assert one(samples, "nccl_busbw_peak") == pytest.approx(122.14)
    assert len(values(samples, "nccl_busbw")) == 2 * 11
    assert one(samples, "nccl_time", size_bytes=536870912, placement="in_place") == pytest.approx(11706)
