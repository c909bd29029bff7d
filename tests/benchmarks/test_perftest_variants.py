"""perftest outputs as providers paste them: older OFED (no MsgRate column), settings aligned with spaces,
perftest's own warnings between header and rows. Real outputs; sources in the data README.

Expected values are typed from reading the files; MB/sec becomes Gbit/s (x 2^20 x 8 / 1e9).
"""

from __future__ import annotations

import pytest

from benchmarks.probes import parse
from benchmarks.sample import ParseError
from tests.benchmarks.conftest import DATA
from tests.benchmarks.test_parsers import one, values

RDMA = DATA / "rdma"
MB = 2**20 * 8 / 1e9  # MB/sec -> Gbit/s


def test_ofed_1_5_ib_write_bw_without_a_msgrate_column():
    samples = parse("perftest", (RDMA / "ib_write_bw_ofed_1.5_quoted.txt").read_text())
    assert one(samples, "rdma_bw") == pytest.approx(937.60 * MB)
    assert one(samples, "rdma_bw_peak") == pytest.approx(937.61 * MB)
    assert one(samples, "rdma_gbps") == pytest.approx(937.60 * MB)
    meta = samples[0].metadata
    assert meta["message_bytes"] == 65536 and meta["message_rate_mpps"] is None
    assert meta["link_type"] == "IB" and meta["mtu"] == "2048" and meta["number_of_qps"] == "1"
    assert meta["warnings"] == [
        "Conflicting CPU frequency values detected: 3300.000000 != 1600.000000",
        "Test integrity may be harmed !",
        "Warning: measured timestamp frequency 3092.95 differs from nominal 3300 MHz",
    ]


def test_ofed_1_5_run_that_measured_nothing_reads_zero():
    samples = parse("perftest", (RDMA / "ib_write_bw_ofed_1.5_nbsp_zero.txt").read_text())
    assert one(samples, "rdma_gbps") == 0 and one(samples, "rdma_bw_peak") == 0
    warning = "Conflicting CPU frequency values detected: 1600.000000 != 3301.000000"
    assert samples[0].metadata["warnings"] == [warning]


def test_space_aligned_settings_are_read_like_tab_aligned_ones():
    samples = parse("perftest", (RDMA / "ib_atomic_bw_pib_spaces.txt").read_text())
    meta = samples[0].metadata
    assert meta["device"] == "pib_1" and meta["transport_type"] == "IB"
    assert meta["connection_type"] == "RC"  # not "RC           Using SRQ ..." nor lost
    assert meta["test"] == "Atomic CMP_AND_SWAP BW Test"
    assert one(samples, "rdma_bw") == pytest.approx(1.67 * MB)
    assert meta["message_rate_mpps"] == pytest.approx(0.219031)


def test_roce_ib_write_bw_with_a_cpu_frequency_warning_among_the_rows():
    samples = parse("perftest", (RDMA / "ib_write_bw_roce_spaces_cpu_warning.txt").read_text())
    assert one(samples, "rdma_gbps") == pytest.approx(11554.28 * MB)  # about 96.9 Gbit/s on 100GbE
    meta = samples[0].metadata
    assert meta["device"] == "mlx5_0" and meta["link_type"] == "Ethernet" and meta["connection_type"] == "RC"
    assert meta["warnings"][0].startswith("Conflicting CPU frequency values detected: 800.140000")


def test_ib_send_bw_for_a_duration_has_no_peak():
    samples = parse("perftest", (RDMA / "ib_send_bw_ud_spaces_cpu_warning.txt").read_text())
    assert one(samples, "rdma_bw") == pytest.approx(11288.12 * MB)
    assert values(samples, "rdma_bw_peak") == []  # "BW peak won't be measured in this run": printed 0.00
    meta = samples[0].metadata
    assert meta["connection_type"] == "UD" and meta["test"] == "Send BW Test"
    assert meta["message_bytes"] == 4096 and meta["message_rate_mpps"] == pytest.approx(2.889760)


def test_a_row_cut_short_is_still_named():
    text = (RDMA / "ib_write_bw_ofed_1.5_quoted.txt").read_text().replace("937.61 937.60", "937.61")
    with pytest.raises(ParseError) as caught:
        parse("perftest", text)
    assert "'65536 5000 937.61'" in str(caught.value.reason) and "4" in str(caught.value.reason)


def test_an_unreadable_output_names_the_accepted_perftest_layouts():
    with pytest.raises(ParseError) as caught:
        parse("perftest", "Couldn't connect to 10.0.0.2:18515\n")
    assert "没有 MsgRate 列的旧版 OFED" in str(caught.value.reason) and "空格" in str(caught.value.reason)
