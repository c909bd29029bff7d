"""What providers paste: older and other tool variants read by the same parsers, or refused by name."""

from __future__ import annotations

import json

import pytest

from benchmarks.probes import parse
from benchmarks.sample import ParseError, ToolError
from tests.benchmarks.conftest import DATA
from tests.benchmarks.test_parsers import one, values

GPU = DATA / "nvidia-smi"


def _json(name: str) -> dict:
    return json.loads((DATA / name).read_text())


# ---------------------------------------------------------------- fio 2.x and several jobs
def test_fio_2_1_without_bw_bytes_or_total_ios_is_derived_from_kib():
    data = _json("fio_2.1_randread.json")
    side = data["jobs"][0]["read"]
    assert "bw_bytes" not in side and "total_ios" not in side
    samples = parse("fio", (DATA / "fio_2.1_randread.json").read_text())
    assert one(samples, "read_iops") == pytest.approx(side["iops"])
    assert one(samples, "read_bandwidth") == pytest.approx(side["bw"] / 1024)
    # fio 2 reports clat in microseconds already: no division by 1000
    assert one(samples, "read_latency", percentile=99.0) == pytest.approx(
        side["clat"]["percentile"]["99.000000"]
    )
    assert one(samples, "read_latency_mean") == pytest.approx(side["clat"]["mean"])
    assert samples[0].metadata["tool_version"] == "fio-2.1.10"


def test_fio_2_2_two_named_jobs_give_one_sample_set_each():
    data = _json("fio_2.2_two_jobs.json")
    samples = parse("fio", (DATA / "fio_2.2_two_jobs.json").read_text())
    assert one(samples, "read_iops", job="randread-4k") == pytest.approx(24188.27)
    assert values(samples, "read_iops", job="write-1m") == []
    write = data["jobs"][1]["write"]
    expected = write["io_bytes"] / 1024 / (write["runtime"] / 1000)  # io_bytes is KiB in fio 2
    assert one(samples, "write_effective_bandwidth", job="write-1m") == pytest.approx(expected)
    assert one(samples, "write_bandwidth", job="write-1m") == pytest.approx(write["bw"] / 1024)
    assert one(samples, "read_latency", job="randread-4k", percentile=50.0) == pytest.approx(338)


def test_fio_jobs_sharing_a_name_add_up_like_group_reporting():
    data = _json("fio_two_jobs.json")
    clones = [job for job in data["jobs"] if job["jobname"] == "randread-4k"]
    assert len(clones) == 2
    samples = parse("fio", (DATA / "fio_two_jobs.json").read_text())
    iops = [s for s in samples if s.metric == "read_iops"]
    assert len(iops) == 1 and iops[0].metadata["jobs"] == 2 and "job_index" not in iops[0].metadata
    assert iops[0].value == pytest.approx(sum(job["read"]["iops"] for job in clones))
    worst = max(job["read"]["clat_ns"]["percentile"]["99.000000"] for job in clones) / 1000
    assert one(samples, "read_latency", job="randread-4k", percentile=99.0) == pytest.approx(worst)
    assert one(samples, "write_iops", job="seqwrite-1m") == pytest.approx(data["jobs"][2]["write"]["iops"])


# ---------------------------------------------------------------- iperf3 3.0 / 3.1 and UDP
def test_iperf3_3_0_tcp_with_tab_layout():
    data = _json("iperf3_3.0_tcp.json")
    samples = parse("iperf3", (DATA / "iperf3_3.0_tcp.json").read_text())
    assert one(samples, "throughput") == pytest.approx(data["end"]["sum_received"]["bits_per_second"] / 1e6)
    assert one(samples, "retransmits") == 56
    assert len(values(samples, "throughput_interval")) == 5
    assert samples[0].metadata["tool_version"] == "iperf 3.0.11"


def test_iperf3_3_1_udp_summed_in_end_sum_only():
    data = _json("iperf3_3.1_udp.json")
    assert "sum_received" not in data["end"]
    samples = parse("iperf3", (DATA / "iperf3_3.1_udp.json").read_text())
    assert one(samples, "throughput") == pytest.approx(data["end"]["sum"]["bits_per_second"] / 1e6)
    assert one(samples, "udp_loss") == pytest.approx(0.20206)
    assert one(samples, "udp_jitter") == pytest.approx(0.0412)


def test_iperf3_3_12_udp_recorded_here():
    data = _json("iperf3_udp.json")
    samples = parse("iperf3", (DATA / "iperf3_udp.json").read_text())
    assert one(samples, "throughput") == pytest.approx(data["end"]["sum_received"]["bits_per_second"] / 1e6)
    assert one(samples, "udp_jitter") == pytest.approx(data["end"]["sum"]["jitter_ms"])


# ---------------------------------------------------------------- ping from busybox and macOS
def test_busybox_ping_summary():
    samples = parse("ping", (DATA / "ping_busybox.txt").read_text())
    assert one(samples, "packet_loss") == 0
    assert one(samples, "rtt_avg") == pytest.approx(0.057)
    assert values(samples, "rtt_mdev") == []  # busybox prints no deviation


def test_busybox_ping_with_every_packet_lost():
    samples = parse("ping", (DATA / "ping_busybox_loss.txt").read_text())
    assert [sample.metric for sample in samples] == ["packet_loss"]
    assert samples[0].value == 100


def test_macos_ping_summary_with_a_timeout():
    samples = parse("ping", (DATA / "ping_macos.txt").read_text())
    assert one(samples, "packet_loss") == 20
    assert one(samples, "rtt_max") == pytest.approx(32.118)
    assert one(samples, "rtt_mdev") == pytest.approx(0.461)


def test_unreadable_ping_names_the_accepted_variants():
    with pytest.raises(ParseError) as caught:
        parse("ping", "Pinging 10.0.0.1 with 32 bytes of data:\nRequest timed out.\n")
    assert "可读取：" in str(caught.value) and "busybox" in str(caught.value)


# ---------------------------------------------------------------- the plain nvidia-smi table
def test_nvidia_smi_table_of_a_470_driver_with_cut_names():
    samples = parse("nvidia-smi", (GPU / "table_470_2xv100.txt").read_text())
    assert one(samples, "gpu_count") == 2
    assert values(samples, "gpu") == ["Tesla V100-SXM2...", "Tesla V100-SXM2..."]
    first = [s for s in samples if s.metadata.get("gpu_index") == 0]
    assert {s.metric: s.value for s in first}.items() >= {
        "gpu_memory_used": 15109,
        "gpu_memory_total": 32510,
        "gpu_utilization": 87,
        "gpu_power_draw": 56,
        "gpu_power_limit": 300,
        "gpu_temperature": 41,
    }.items()
    assert first[0].metadata["name_truncated"] is True
    assert first[0].metadata["driver_version"] == "470.82.01" and first[0].metadata["cuda_version"] == "11.4"
    second = [s for s in samples if s.metadata.get("gpu_index") == 1]
    assert second[0].metadata["ecc_volatile_uncorrected"] == 2


def test_nvidia_smi_table_of_a_550_driver_ignores_the_process_list():
    samples = parse("nvidia-smi", (GPU / "table_550_4x4090.txt").read_text())
    assert one(samples, "gpu_count") == 4
    assert one(samples, "gpu_utilization", gpu_index=2) == 99
    assert one(samples, "gpu_power_draw", gpu_index=2) == 402
    assert one(samples, "gpu_memory_used", gpu_index=2) == 22911
    assert samples[-1].metadata["models"] == ["NVIDIA GeForce RTX 4090"]


def test_nvidia_smi_table_cut_inside_a_gpu_row_is_named():
    text = (GPU / "table_550_4x4090.txt").read_text()
    cut = text[: text.index("| 31%")]
    with pytest.raises(ParseError) as caught:
        parse("nvidia-smi", cut)
    assert "GPU 1" in str(caught.value)


# ---------------------------------------------------------------- nccl-tests
def test_nccl_single_node_table():
    samples = parse("nccl", (DATA / "nccl" / "all_reduce_8xh100.txt").read_text())
    assert one(samples, "nccl_busbw_peak") == pytest.approx(372.27)
    assert one(samples, "nccl_busbw_average") == pytest.approx(134.5708)
    largest = 8 * 2**30
    algbw = one(samples, "nccl_algbw", size_bytes=largest, placement="out_of_place")
    busbw = one(samples, "nccl_busbw", size_bytes=largest, placement="out_of_place")
    assert busbw == pytest.approx(algbw * 2 * 7 / 8, rel=1e-3)  # busbw = algbw x 2(n-1)/n
    meta = samples[0].metadata
    assert meta["ranks"] == 8 and meta["nodes"] == 1 and meta["gpu_models"] == ["NVIDIA H100 80GB HBM3"]
    assert len(values(samples, "nccl_time")) == 2 * 31  # 8 B .. 8 GiB, out-of-place and in-place


def test_nccl_two_nodes_are_counted():
    samples = parse("nccl", (DATA / "nccl" / "all_reduce_2x8xh100_roce.txt").read_text())
    meta = samples[0].metadata
    assert meta["nodes"] == 2 and meta["ranks"] == 16 and meta["hosts"] == ["gpu-a01", "gpu-a02"]
    assert one(samples, "nccl_busbw_peak") < 100


def test_nccl_old_error_column():
    samples = parse("nccl", (DATA / "nccl" / "all_reduce_old_error_column.txt").read_text())
    assert one(samples, "nccl_busbw_peak") == pytest.approx(232.8)
    assert len(values(samples, "nccl_busbw")) == 12


def test_nccl_wrong_results_are_a_failure_not_a_number():
    with pytest.raises(ToolError) as caught:
        parse("nccl", (DATA / "nccl" / "all_reduce_wrong.txt").read_text())
    assert "#wrong" in str(caught.value) and "1048576 B" in str(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        "garbage",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong\n",
        (DATA / "nccl" / "all_reduce_8xh100.txt")
        .read_text()
        .replace("  371.", " ", 1)
        .replace("372.27", "x", 1),
    ],
)
def test_nccl_unreadable_tables_are_named(text: str):
    with pytest.raises(ParseError) as caught:
        parse("nccl", text)
    assert "可读取：" in str(caught.value)


def test_bench_parse_nccl_from_the_cli(app):
    runner = app.test_cli_runner()
    result = runner.invoke(args=["bench", "parse", "nccl", str(DATA / "nccl" / "all_reduce_8xh100.txt")])
    assert result.exit_code == 0, result.output
    samples = json.loads(result.output)
    assert any(s["metric"] == "nccl_busbw_peak" and s["value"] == pytest.approx(372.27) for s in samples)
    failed = runner.invoke(args=["bench", "parse", "nccl", str(DATA / "nccl" / "all_reduce_wrong.txt")])
    assert failed.exit_code == 1 and "#wrong" in failed.output


def test_nccl_table_pasted_without_its_hash_marks():
    """Markdown and chat tools eat the leading '#' of every comment line; the table still reads."""
    text = (DATA / "nccl" / "all_reduce_8xh100.txt").read_text()
    stripped = "\n".join(line.lstrip("#") for line in text.splitlines())
    samples = parse("nccl", stripped)
    assert one(samples, "nccl_busbw_peak") == pytest.approx(372.27)
    assert one(samples, "nccl_busbw_average") == pytest.approx(134.5708)
    assert samples[0].metadata["ranks"] == 8


def test_nccl_table_from_mpirun_with_tagged_output():
    """mpirun --tag-output puts the rank tag before the line and inside it; the tags are ignored."""
    text = (DATA / "nccl" / "all_reduce_2x8xh100_roce.txt").read_text()
    tagged = "\n".join(f"[1,0]<stdout>:{line}".replace("  -1  ", "  -1[0]  ") for line in text.splitlines())
    samples = parse("nccl", tagged)
    assert one(samples, "nccl_busbw_peak") == pytest.approx(78.79)
    assert samples[0].metadata["nodes"] == 2
