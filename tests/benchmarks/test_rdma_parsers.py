"""RDMA inventory and perftest outputs (written in the exact layouts of rdma-core and perftest 4.x)."""

from __future__ import annotations

import pytest

from benchmarks.probes import parse
from benchmarks.sample import ParseError
from tests.benchmarks.conftest import DATA
from tests.benchmarks.test_parsers import one, values

RDMA = DATA / "rdma"


def test_ibv_devinfo_verbose_gives_port_states_and_the_active_link_rate():
    samples = parse("ibv_devinfo", (RDMA / "ibv_devinfo_v_ndr.txt").read_text())
    assert values(samples, "rdma_port") == ["PORT_ACTIVE", "PORT_DOWN"]
    assert one(samples, "rdma_link_rate") == 400  # 4X lanes at 100 Gbps (NDR)
    active = samples[0].metadata
    assert (
        active["device"] == "mlx5_0"
        and active["link_layer"] == "InfiniBand"
        and active["active_mtu"] == "4096"
    )


def test_ibv_devinfo_of_a_roce_port_without_verbose_fields_has_no_rate():
    samples = parse("ibv_devinfo", (RDMA / "ibv_devinfo_roce.txt").read_text())
    assert one(samples, "rdma_port", link_layer="Ethernet") == "PORT_ACTIVE"
    assert values(samples, "rdma_link_rate") == []


def test_ib_write_bw_reported_in_gbits():
    samples = parse("perftest", (RDMA / "ib_write_bw_gbits.txt").read_text())
    assert one(samples, "rdma_bw") == pytest.approx(391.87)
    assert one(samples, "rdma_gbps") == pytest.approx(391.87)  # the figure an RDMA claim is held against
    assert samples[0].metadata["test"] == "RDMA_Write BW Test" and samples[0].metadata["link_type"] == "IB"


def test_ib_write_bw_in_mb_per_second_over_all_sizes_becomes_gbits():
    samples = parse("perftest", (RDMA / "ib_write_bw_all_sizes_mb.txt").read_text())
    largest = one(samples, "rdma_bw", message_bytes=8388608)
    assert largest == pytest.approx(11602.55 * 2**20 * 8 / 1e9)
    assert len(values(samples, "rdma_bw")) == 5
    assert one(samples, "rdma_gbps") == pytest.approx(max(values(samples, "rdma_bw")))
    assert samples[0].metadata["link_type"] == "Ethernet"


def test_ib_read_lat_percentiles():
    samples = parse("perftest", (RDMA / "ib_read_lat.txt").read_text())
    assert one(samples, "rdma_latency_t_typical") == pytest.approx(1.93)
    assert one(samples, "rdma_latency_p99_9") == pytest.approx(5.42)


@pytest.mark.parametrize(
    ("parser", "text", "named"),
    [
        ("ibv_devinfo", "No IB devices found\n", "hca_id"),
        ("perftest", "Couldn't connect to 10.0.0.2:18515\n", "结果表"),
        ("perftest", (RDMA / "ib_write_bw_gbits.txt").read_text().replace("391.87", "391.87 x"), "个值"),
    ],
)
def test_unreadable_rdma_outputs_are_named(parser: str, text: str, named: str):
    with pytest.raises(ParseError) as caught:
        parse(parser, text)
    assert named in str(caught.value) and "可读取：" in str(caught.value)
