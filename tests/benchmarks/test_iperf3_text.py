"""iperf3's plain-text report (issue 27 item 4): client and server side, -P, -R and UDP, recorded with
iperf 3.12 on loopback (tests/data/bench/iperf3_text); expected values typed from the files."""

from __future__ import annotations

import pytest

from benchmarks.probes import parse
from benchmarks.sample import ParseError, ToolError
from tests.benchmarks.conftest import DATA

TEXT = DATA / "iperf3_text"


def _by_metric(name: str) -> dict[str, list]:
    found: dict[str, list] = {}
    for sample in parse("iperf3", (TEXT / name).read_text()):
        found.setdefault(sample.metric, []).append(sample)
    return found


def test_a_single_stream_client_report():
    found = _by_metric("tcp_single.txt")
    # [  5] 0.00-3.00 sec 6.64 GBytes 19.0 Gbits/sec 12 sender / ... 19.0 Gbits/sec receiver
    assert found["throughput"][0].value == pytest.approx(19_000)
    assert found["throughput_sender"][0].value == pytest.approx(19_000)
    assert found["retransmits"][0].value == 12
    assert [s.value for s in found["throughput_interval"]] == pytest.approx([18_900, 18_000, 20_100])
    meta = found["throughput"][0].metadata
    assert (meta["protocol"], meta["streams"], meta["reverse"], meta["remote_host"]) == (
        "TCP",
        1,
        False,
        "127.0.0.1",
    )
    assert meta["format"] == "text" and meta["duration"] == 3.0


def test_parallel_streams_are_read_from_the_sum_lines():
    found = _by_metric("tcp_parallel.txt")
    # [SUM] 0.00-3.00 sec 7.34 GBytes 21.0 Gbits/sec 2 sender / 21.0 Gbits/sec receiver; four streams
    assert found["throughput"][0].value == pytest.approx(21_000)
    assert found["retransmits"][0].value == 2
    assert found["throughput"][0].metadata["streams"] == 4
    assert [s.value for s in found["throughput_interval"]] == pytest.approx([22_400, 23_400, 17_200])


def test_reverse_mode_is_noted():
    found = _by_metric("tcp_reverse.txt")
    assert found["throughput"][0].value == pytest.approx(19_900)  # 19.9 Gbits/sec receiver
    assert found["throughput"][0].metadata["reverse"] is True


def test_udp_jitter_and_loss_come_from_the_receiver_line():
    found = _by_metric("udp.txt")
    # [  5] 0.00-3.00 sec 71.5 MBytes 200 Mbits/sec 0.006 ms 0/2289 (0%) receiver
    assert found["throughput"][0].value == pytest.approx(200)
    assert found["udp_jitter"][0].value == pytest.approx(0.006)
    assert found["udp_loss"][0].value == 0
    assert "retransmits" not in found and found["throughput"][0].metadata["protocol"] == "UDP"


def test_a_server_log_is_read_from_its_last_finished_test():
    # four tests; the log ends waiting for test #5; test #4 was UDP at 200 Mbits/sec, 0.006 ms, 0/2289 (0%)
    found = _by_metric("server_log.txt")
    assert found["throughput"][0].value == pytest.approx(200)
    assert found["udp_jitter"][0].value == pytest.approx(0.006)
    assert "throughput_sender" not in found  # a server prints only what it received


def test_a_refused_connection_is_the_tools_own_error():
    with pytest.raises(ToolError, match="Connection refused"):
        parse("iperf3", (TEXT / "refused.txt").read_text())


def test_a_cut_report_names_what_is_missing():
    text = (TEXT / "tcp_single.txt").read_text().split("- - - -")[0]
    with pytest.raises(ParseError, match="sender / receiver"):
        parse("iperf3", text)


def test_a_pasted_text_report_becomes_an_uploaded_run_compared_with_the_claim(session):
    from app.registry.providers import create_provider
    from app.trials import bench_uploads

    provider = create_provider(
        session,
        data={
            "legal_name": "示例文本上传科技有限公司",
            "offers": [{"gpu_model": "H800", "gpus_per_node": 8, "intranet_gbps": 100}],
        },
    )
    raw = (TEXT / "tcp_parallel.txt").read_bytes()
    run = bench_uploads.upload_output(
        session, offer_id=provider.offers[0].id, tool="iperf3", output=raw, path="intranet"
    )
    assert run.state == "succeeded" and run.origin == "uploaded"
    (bandwidth,) = [c for c in run.comparisons if c["check"] == "bandwidth"]
    assert bandwidth["measured"] == pytest.approx(21_000) and bandwidth["verdict"] == "fail"  # 21 of 100 Gbps
