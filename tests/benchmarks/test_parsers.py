"""Pure parsers on recorded real outputs (tests/data/bench); damaged output gives a named ParseError."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.probes import PARSERS, get_parser, load_probes, parse
from benchmarks.sample import ParseError, Sample, ToolError
from tests.benchmarks.conftest import DATA

GPU = DATA / "nvidia-smi"


def values(samples: list[Sample], metric: str, **metadata) -> list:
    """Values of `metric` whose metadata matches."""
    return [
        sample.value
        for sample in samples
        if sample.metric == metric and all(sample.metadata.get(k) == v for k, v in metadata.items())
    ]


def one(samples: list[Sample], metric: str, **metadata):
    """The single value of `metric`."""
    found = values(samples, metric, **metadata)
    assert len(found) == 1, (metric, found)
    return found[0]


# ---------------------------------------------------------------- iperf3
def test_iperf3_single_stream():
    samples = parse("iperf3", (DATA / "iperf3_single.json").read_text())
    data = json.loads((DATA / "iperf3_single.json").read_text())
    assert one(samples, "throughput") == pytest.approx(data["end"]["sum_received"]["bits_per_second"] / 1e6)
    assert one(samples, "throughput") == pytest.approx(46063.05, abs=0.01)
    assert one(samples, "retransmits") == 0
    intervals = [sample for sample in samples if sample.metric == "throughput_interval"]
    assert len(intervals) == 3
    assert [sample.metadata["interval"] for sample in intervals] == [0, 1, 2]
    assert intervals[0].metadata["start"] == 0 and intervals[0].metadata["end"] == pytest.approx(
        1.0, abs=0.01
    )
    first = samples[0].metadata
    assert first["streams"] == 1 and first["reverse"] is False and first["tool_version"] == "iperf 3.12"


def test_iperf3_parallel_streams_are_summed():
    samples = parse("iperf3", (DATA / "iperf3_parallel.json").read_text())
    data = json.loads((DATA / "iperf3_parallel.json").read_text())
    per_stream = sum(stream["receiver"]["bits_per_second"] for stream in data["end"]["streams"]) / 1e6
    assert one(samples, "throughput") == pytest.approx(per_stream, rel=1e-6)
    assert samples[0].metadata["streams"] == 4


def test_iperf3_reverse_records_retransmits():
    samples = parse("iperf3", (DATA / "iperf3_reverse.json").read_text())
    assert samples[0].metadata["reverse"] is True
    assert one(samples, "retransmits") == 7
    assert one(samples, "throughput") == pytest.approx(45051.97, abs=0.01)


def test_iperf3_refused_connection_is_a_tool_error():
    with pytest.raises(ToolError) as caught:
        parse("iperf3", (DATA / "iperf3_refused.json").read_text())
    assert caught.value.tool == "iperf3"
    assert "Connection refused" in str(caught.value.reason)


# ---------------------------------------------------------------- fio
def test_fio_randread_iops_and_percentiles():
    samples = parse("fio", (DATA / "fio_randread.json").read_text())
    assert one(samples, "read_iops") == pytest.approx(133464.07, abs=0.01)
    assert one(samples, "read_bandwidth") == pytest.approx(521.34, abs=0.01)
    assert one(samples, "read_latency", percentile=99.0) == pytest.approx(684.032)
    assert one(samples, "read_latency", percentile=50.0) == pytest.approx(224.256)
    metadata = samples[0].metadata
    assert metadata["tool_version"] == "fio-3.33"
    assert (metadata["rw"], metadata["bs"], metadata["numjobs"], metadata["direct"]) == (
        "randread",
        "4k",
        "32",
        "1",
    )
    assert not values(samples, "write_iops")


def test_fio_checkpoint_write_with_fsync():
    text = (DATA / "fio_write.json").read_text()
    samples = parse("fio", text)
    job = json.loads(text)["jobs"][0]
    assert one(samples, "write_bandwidth") == pytest.approx(job["write"]["bw_bytes"] / 2**20)
    # io_bytes 67108864 (64 MiB) over the write runtime, 147 ms with the fsyncs (job_runtime 146)
    assert one(samples, "write_effective_bandwidth") == pytest.approx(64 / 0.147)
    assert values(samples, "fsync_latency", percentile=99.0)
    assert samples[0].metadata["fsync"] == "32"


def test_fio_job_error_is_a_tool_error():
    data = json.loads((DATA / "fio_randread.json").read_text())
    data["jobs"][0]["error"] = 22
    with pytest.raises(ToolError, match="错误码 22"):
        parse("fio", "fio: pid=1, err=22/file:filesetup.c\n" + json.dumps(data))


def test_fio_warning_lines_before_the_json_are_skipped():
    text = (
        "fio: this platform does not support process shared mutexes\n"
        + (DATA / "fio_randread.json").read_text()
    )
    assert one(parse("fio", text), "read_iops") == pytest.approx(133464.07, abs=0.01)


# ---------------------------------------------------------------- ping
def test_ping_clean():
    samples = parse("ping", (DATA / "ping_ok.txt").read_text())
    assert one(samples, "packet_loss") == 0
    assert (
        one(samples, "rtt_min"),
        one(samples, "rtt_avg"),
        one(samples, "rtt_max"),
        one(samples, "rtt_mdev"),
    ) == (
        0.034,
        0.037,
        0.040,
        0.002,
    )
    assert samples[0].metadata["address"] == "127.0.0.1"


def test_ping_partial_loss():
    samples = parse("ping", (DATA / "ping_partial_loss.txt").read_text())
    assert one(samples, "packet_loss") == pytest.approx(33.3333)
    assert samples[0].metadata["packets_transmitted"] == 12
    assert samples[0].metadata["packets_received"] == 8


def test_ping_total_loss_has_no_rtt():
    samples = parse("ping", (DATA / "ping_unreachable.txt").read_text())
    assert one(samples, "packet_loss") == 100
    assert not values(samples, "rtt_avg")


def test_ping_jitter_with_pipe_suffix():
    samples = parse("ping", (DATA / "ping_jitter.txt").read_text())
    assert one(samples, "rtt_mdev") == pytest.approx(358.888)
    assert one(samples, "rtt_max") == pytest.approx(1032.004)


# ---------------------------------------------------------------- nvidia-smi
def test_nvidia_smi_inventory_with_header_and_units():
    samples = parse("nvidia-smi", (GPU / "inventory_8xh800.csv").read_text())
    assert values(samples, "gpu") == ["NVIDIA H800"] * 8
    assert one(samples, "gpu_count") == 8
    assert values(samples, "gpu_memory_total", gpu_index=7) == [81559]
    gpu0 = next(sample for sample in samples if sample.metric == "gpu")
    assert gpu0.metadata["driver_version"] == "535.129.03"
    assert gpu0.metadata["pci.bus_id"] == "00000000:18:00.0"


def test_nvidia_smi_inventory_without_header_or_units():
    samples = parse("nvidia-smi", (GPU / "inventory_4x4090_noheader_nounits.csv").read_text())
    assert one(samples, "gpu_count") == 4
    assert set(values(samples, "gpu")) == {"NVIDIA GeForce RTX 4090"}
    assert values(samples, "gpu_memory_total", gpu_index=2) == [24564]


def test_nvidia_smi_sampling_with_units():
    samples = parse("nvidia-smi", (GPU / "sampling_8xh800.csv").read_text())
    assert values(samples, "gpu_utilization", gpu_index=0) == [98, 100]
    assert values(samples, "gpu_power_draw", gpu_index=3) == [590.03, 622.84]
    stamped = [sample for sample in samples if sample.metric == "gpu_memory_used"]
    assert stamped[8].timestamp - stamped[0].timestamp == pytest.approx(0.501)


def test_nvidia_smi_not_available_fields_are_skipped_and_noted():
    samples = parse("nvidia-smi", (GPU / "sampling_swinging_na.csv").read_text())
    assert not values(samples, "gpu_power_draw")
    assert values(samples, "gpu_utilization", gpu_index=0) == [100, 31, 100, 30]
    assert "power.draw" in next(s for s in samples if s.metric == "gpu_utilization").metadata["not_available"]


def test_nvidia_smi_sampling_without_header_uses_the_probe_query():
    samples = parse("nvidia-smi", (GPU / "sampling_noheader_nounits.csv").read_text())
    assert values(samples, "gpu_utilization", gpu_index=0) == [42, 45]
    assert values(samples, "gpu_utilization", gpu_index=1) == []  # [N/A]
    assert values(samples, "gpu_memory_used", gpu_index=1) == [10240, 10250]


def test_nvidia_smi_explicit_fields():
    samples = parse("nvidia-smi", "0, 81559\n1, 81559\n", fields=["index", "memory.total"])
    assert values(samples, "gpu_memory_total") == [81559, 81559]


def test_nvidia_smi_unknown_layout_without_header():
    with pytest.raises(ParseError, match="请给出查询字段"):
        parse("nvidia-smi", "0, 1, 2, 3, 4, 5, 6\n")


def test_nvidia_smi_probe_output_with_workload_section():
    samples = parse("nvidia-smi-sampling", (GPU / "sampling_probe_output.txt").read_text())
    assert one(samples, "gpu_workload_exit_code") == 3
    exit_sample = next(sample for sample in samples if sample.metric == "gpu_workload_exit_code")
    assert "torch is not installed" in exit_sample.metadata["workload_output"]
    assert len(values(samples, "gpu_utilization")) == 16


# ---------------------------------------------------------------- lsblk / findmnt / disk / inventory
def test_lsblk_virtual_disk():
    samples = parse("lsblk", (DATA / "lsblk_virtio.json").read_text())
    by_name = {sample.metadata["name"]: sample.value for sample in samples}
    assert by_name == {"zram0": "memory", "vda": "virtual_disk"}


def test_lsblk_nvme_and_sata():
    samples = parse("lsblk", (DATA / "lsblk_nvme.json").read_text())
    assert {sample.metadata["name"]: sample.value for sample in samples} == {
        "sda": "local_ssd",
        "nvme0n1": "local_nvme",
        "nvme1n1": "local_nvme",
    }


def combined(lsblk: str, findmnt: str) -> str:
    """The disk probe's output layout: lsblk JSON, marker line, findmnt JSON."""
    return (DATA / lsblk).read_text() + "### findmnt\n" + (DATA / findmnt).read_text()


@pytest.mark.parametrize(
    ("lsblk", "findmnt", "expected"),
    [
        ("lsblk_nvme.json", "findmnt_nvme_data.json", "local_nvme"),
        ("lsblk_nvme.json", "findmnt_nfs.json", "network_fs"),
        ("lsblk_virtio.json", "findmnt_ext4.json", "virtual_disk"),
        ("lsblk_virtio.json", "findmnt_overlay.json", "virtual_disk"),  # only one real disk here
        ("lsblk_nvme.json", "findmnt_overlay.json", "unknown"),  # disks differ: no guess
    ],
)
def test_disk_classification(lsblk, findmnt, expected):
    samples = parse("disk", combined(lsblk, findmnt))
    assert one(samples, "storage_class") == expected
    assert samples[0].metadata["reason"]


def test_disk_recorded_probe_output():
    samples = parse("disk", (DATA / "disk_virtio_ext4.txt").read_text())
    assert one(samples, "storage_class") == "virtual_disk"
    assert one(samples, "filesystem") == "ext4"
    assert samples[0].metadata["tool_version"] == "lsblk from util-linux 2.38.1"


def test_inventory_with_gpus():
    samples = parse("inventory", (DATA / "inventory_standin_gpu.txt").read_text())
    assert one(samples, "os") == "Debian GNU/Linux 12 (bookworm)"
    assert one(samples, "cpu_count") == 2
    assert one(samples, "memory_total") == pytest.approx(24684092 / 2**20)
    assert one(samples, "gpu_count") == 8
    assert one(samples, "driver_version") == "535.129.03"
    assert one(samples, "cuda_driver_version") == "12.2"
    assert one(samples, "cuda_toolkit_version") == "13.0"
    assert one(samples, "kernel").startswith("Linux ")


def test_inventory_without_nvidia_smi():
    samples = parse("inventory", (DATA / "inventory_no_gpu.txt").read_text())
    assert one(samples, "gpu_count") == 0
    assert not values(samples, "gpu")
    assert not values(samples, "driver_version")


# ---------------------------------------------------------------- damaged output
RECORDED = [
    ("iperf3", DATA / "iperf3_single.json"),
    ("iperf3", DATA / "iperf3_parallel.json"),
    ("fio", DATA / "fio_randread.json"),
    ("fio", DATA / "fio_write.json"),
    ("ping", DATA / "ping_ok.txt"),
    ("ping", DATA / "ping_partial_loss.txt"),
    ("nvidia-smi", GPU / "inventory_8xh800.csv"),
    ("nvidia-smi", GPU / "sampling_8xh800.csv"),
    ("lsblk", DATA / "lsblk_nvme.json"),
    ("findmnt", DATA / "findmnt_nfs.json"),
    ("disk", DATA / "disk_virtio_ext4.txt"),
    ("inventory", DATA / "inventory_standin_gpu.txt"),
]


@pytest.mark.parametrize(("tool", "path"), RECORDED, ids=[f"{t}-{p.name}" for t, p in RECORDED])
def test_truncated_output_is_a_named_parse_error(tool, path):
    text = path.read_text()
    for cut in (0, 1, len(text) // 3, len(text) // 2):
        with pytest.raises(ParseError) as caught:
            parse(tool, text[:cut])
        assert caught.value.tool in {tool, "lsblk", "findmnt", "disk"}
        assert str(caught.value).startswith(f"{caught.value.tool}: ")


@pytest.mark.parametrize(
    ("tool", "text"),
    [
        ("iperf3", "iperf3: error - unable to connect to server\n"),
        ("iperf3", '{"start": {"test_start": {}}, "end": {"sum_received": {"bits_per_second": "fast"}}}'),
        ("iperf3", "[1, 2, 3]"),
        ("fio", '{"jobs": []}'),
        ("fio", '{"jobs": [{"jobname": "x", "read": {"total_ios": "many"}}]}'),
        ("ping", "ping: unknown host example.invalid\n"),
        ("nvidia-smi", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."),
        ("nvidia-smi", "index, name\n0, NVIDIA H800, 80 GB\n"),
        ("nvidia-smi", "timestamp, index, utilization.gpu [%]\nyesterday, 0, lots\n"),
        ("lsblk", '{"blockdevices": [{"rota": true}]}'),
        ("findmnt", '{"filesystems": []}'),
        ("disk", "lsblk: command not found\n"),
        ("inventory", "### uname\nLinux\n### nproc\ntwo\n### meminfo\nMemTotal: 1 kB\n"),
    ],
)
def test_garbled_output_is_a_named_parse_error(tool, text):
    with pytest.raises(ParseError) as caught:
        parse(tool, text)
    assert caught.value.tool


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tool=st.sampled_from(
        sorted(["iperf3", "fio", "ping", "nvidia-smi", "lsblk", "findmnt", "disk", "inventory"])
    ),
    text=st.one_of(st.text(max_size=400), st.sampled_from([path.read_text()[:200] for _, path in RECORDED])),
)
def test_any_text_gives_samples_or_a_parse_error(tool, text):
    """Never a crash: any input yields a list of samples or a ParseError."""
    try:
        samples = parse(tool, text)
    except ParseError:
        return
    assert all(isinstance(sample, Sample) for sample in samples)


def test_cli_tools_are_registered():
    load_probes()
    assert {"ping", "iperf3", "fio", "nvidia-smi", "lsblk"} <= set(PARSERS)
    with pytest.raises(KeyError, match="known:"):
        get_parser("netperf")


def test_probe_and_parser_registries_reject_duplicates():
    from benchmarks.probes import PROBES, register_parser, register_probe

    load_probes()
    assert {"inventory", "ping", "iperf3", "fio", "disk", "nvidia-smi"} <= set(PROBES)
    with pytest.raises(ValueError, match="registered twice"):
        register_probe(PROBES["ping"])
    with pytest.raises(ValueError, match="registered twice"):
        register_parser("ping")(lambda text: [])
