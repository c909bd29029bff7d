"""fio figures with several jobs: numjobs 1, 2 and 8, with and without group_reporting, fio 2.x and 3.x.

Every expected figure below was worked out by hand from the numbers in the recorded file (quoted in the
comments): bytes or I/Os over the side's `runtime` in ms, the longest job's when several ran together.
`job_runtime` is never the divisor: fio adds it up over every job of a group (stat.c, sum_thread_stats).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.probes import parse
from benchmarks.sample import ParseError
from tests.benchmarks.conftest import DATA
from tests.benchmarks.test_parsers import one, values

MIB = 2**20


def fio(name: str) -> list:
    """The fio parser's samples of a recorded file."""
    return parse("fio", (DATA / name).read_text())


# ---------------------------------------------------------------- the probe's checkpoint writes (fio 3.33)
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # one job: io_bytes 67108864 (64 MiB), write runtime 174 ms (job_runtime 173)
        ("fio_checkpoint_j1.json", 64 / 0.174),
        ("fio_checkpoint_j1_group.json", 64 / 0.069),  # 64 MiB, runtime 69 ms
        # group_reporting: io_bytes 134217728 (128 MiB), runtime 241 ms (the longer job), job_runtime 457
        ("fio_checkpoint_j2_group.json", 128 / 0.241),
        # group_reporting: io_bytes 536870912 (512 MiB), runtime 561 ms, job_runtime 4384 (8 jobs added)
        ("fio_checkpoint_j8_group.json", 512 / 0.561),
        # two clones printed apart: 64 MiB each, runtimes 240 and 205 ms -> 128 MiB over the longer 240 ms
        ("fio_checkpoint_j2.json", 128 / 0.240),
        # eight clones of 64 MiB, runtimes 643 449 579 598 646 470 628 460 ms -> 512 MiB over 646 ms
        ("fio_checkpoint_j8.json", 512 / 0.646),
    ],
)
def test_checkpoint_write_bandwidth_is_bytes_over_the_longest_runtime(name, expected):
    samples = fio(name)
    assert one(samples, "write_effective_bandwidth") == pytest.approx(expected, rel=1e-9)


def test_group_reporting_and_clones_agree_within_the_run_to_run_spread():
    grouped = one(fio("fio_checkpoint_j8_group.json"), "write_effective_bandwidth")
    clones = one(fio("fio_checkpoint_j8.json"), "write_effective_bandwidth")
    single = one(fio("fio_checkpoint_j1.json"), "write_effective_bandwidth")
    # job_runtime (4384 ms summed) would give 512 / 4.384 = 117 MiB/s: below one job alone (368 MiB/s)
    assert grouped > single and clones > single
    assert grouped == pytest.approx(912.66, abs=0.01)


def test_the_effective_figure_names_its_divisor():
    sample = next(s for s in fio("fio_checkpoint_j8_group.json") if s.metric == "write_effective_bandwidth")
    assert sample.metadata["runtime_ms"] == 561


def test_clones_iops_and_bandwidth_are_summed_over_the_longest_runtime():
    samples = fio("fio_checkpoint_j8.json")
    # 8 x 64 one-MiB writes (total_ios) = 512 I/Os over 646 ms; fio's per-clone iops add up to 935.9 instead
    assert one(samples, "write_iops") == pytest.approx(512 / 0.646, rel=1e-9)
    assert one(samples, "write_bandwidth") == pytest.approx(512 / 0.646, rel=1e-9)
    assert one(samples, "write_iops", jobs=8) == pytest.approx(792.57, abs=0.01)


def test_clones_latency_mean_is_weighted_and_percentiles_take_the_worst():
    samples = fio("fio_checkpoint_j2.json")
    # clat_ns means 3040211.53125 and 2705542.625 ns over 64 completions each; p99 4227072 and 3948544 ns
    assert one(samples, "write_latency_mean") == pytest.approx((3040211.53125 + 2705542.625) / 2 / 1000)
    assert one(samples, "write_latency", percentile=99.0) == pytest.approx(4227.072)


# ---------------------------------------------------------------- 4k random reads (fio 3.33, 1 s, time_based)
@pytest.mark.parametrize(
    ("name", "iops", "mib_s"),
    [
        # fio's own figures for one job or a group (total_ios / runtime), read straight from the file
        ("fio_randread_j1.json", 12838.161838, 52585110 / MIB),
        ("fio_randread_j1_group.json", 15445.554446, 63264991 / MIB),
        ("fio_randread_j2_group.json", 23689.310689, 97031416 / MIB),  # job_runtime 2000, runtime 1001
        ("fio_randread_j8_group.json", 47020.895522, 192597588 / MIB),  # job_runtime 8013, runtime 1005
        # clones: total_ios 13449 + 13529, io_bytes 55087104 + 55414784, both runtime 1001 ms
        ("fio_randread_j2.json", (13449 + 13529) / 1.001, (55087104 + 55414784) / MIB / 1.001),
        # clones: total_ios 6057 6058 6116 6100 6124 6048 6103 6076 (48682), longest runtime 1003 ms
        (
            "fio_randread_j8.json",
            48682 / 1.003,
            (24809472 + 24813568 + 25051136 + 24985600 + 25083904 + 24772608 + 24997888 + 24887296)
            / MIB
            / 1.003,
        ),
    ],
)
def test_random_read_iops_and_bandwidth(name, iops, mib_s):
    samples = fio(name)
    assert one(samples, "read_iops") == pytest.approx(iops, rel=1e-6)
    assert one(samples, "read_bandwidth") == pytest.approx(mib_s, rel=1e-6)
    assert not values(samples, "write_effective_bandwidth")


# ---------------------------------------------------------------- real public fio 2.x and 3.1 outputs
def test_fio_3_1_io_bytes_are_bytes_though_bw_bytes_is_missing():
    # google/gvisor's recorded fio 3.1 run: io_bytes 1073741824 with io_kbytes 1048576, no bw_bytes
    # (fio 2.21 made io_bytes bytes, fio 3.2 added bw_bytes); write runtime 598 ms, bw 1753471 KiB/s
    samples = fio("fio_3.1_write_gvisor.json")
    assert one(samples, "write_effective_bandwidth") == pytest.approx(1024 / 0.598, rel=1e-9)
    assert one(samples, "write_bandwidth") == pytest.approx(1753471 / 1024)
    assert one(samples, "write_iops") == pytest.approx(438367.892977)
    assert one(samples, "write_latency", percentile=99.0) == pytest.approx(6.176)  # clat_ns 6176
    assert not values(samples, "read_iops")


def test_fio_2_17_group_reporting_with_two_jobs():
    # PerfKitBenchmarker's recorded fio 2.17 run: group_reporting=1, numjobs=2, io_bytes in KiB
    samples = fio("fio_2.17_group_two_jobs_pkb.json")
    read_job = "rand_16k_read_100%-io-depth-1-num-jobs-2"
    write_job = "rand_16k_write_100%-io-depth-1-num-jobs-2"
    assert one(samples, "read_iops", job=read_job) == pytest.approx(8086.673998)
    assert one(samples, "read_bandwidth", job=read_job) == pytest.approx(129386 / 1024)
    assert one(samples, "read_latency", job=read_job, percentile=99.0) == pytest.approx(1352)  # us in fio 2
    # write: io_bytes 393280 KiB over runtime 10004 ms
    assert one(samples, "write_effective_bandwidth", job=write_job) == pytest.approx(393280 / 1024 / 10.004)
    assert one(samples, "write_iops", job=write_job) == pytest.approx(2457.017193)
    assert {s.metadata["numjobs"] for s in samples} == {"2"}


def test_fio_2_1_4_five_jobs_in_five_groups():
    # PerfKitBenchmarker's fio 2.1.4 sample: no total_ios, integer iops, io_bytes in KiB, clat in us
    samples = fio("fio_2.1.4_five_groups_pkb.json")
    assert one(samples, "write_effective_bandwidth", job="sequential_write") == pytest.approx(
        361984 / 1024 / 5.314
    )
    assert one(samples, "write_iops", job="sequential_write") == 133
    assert one(samples, "read_iops", job="random_read_test") == 317
    assert one(samples, "read_latency", job="random_read_test", percentile=99.0) == pytest.approx(3728)
    assert one(samples, "read_iops", job="random_read_test_parallel") == 323
    assert len({s.metadata["job"] for s in samples}) == 5


def test_clones_that_did_io_in_no_time_are_named():
    data = json.loads((DATA / "fio_two_jobs.json").read_text())
    for job in data["jobs"][:2]:  # the two randread-4k clones
        job["read"]["runtime"] = 0
    with pytest.raises(ParseError, match="randread-4k"):
        parse("fio", json.dumps(data))


def test_status_interval_output_is_read_from_its_final_report():
    # --status-interval=1 prints four whole JSON documents; the first is 677 ms in (iops 15915.805022),
    # the last is the final report: runtime 3001 ms, total_ios 50053, iops 16678.773742, bw_bytes 68316257
    samples = fio("fio_status_interval.json")
    assert one(samples, "read_iops") == pytest.approx(16678.773742)
    assert one(samples, "read_bandwidth") == pytest.approx(68316257 / MIB)


def test_unified_reporting_of_a_read_only_test_is_its_read_side():
    # --unified_rw_reporting=mixed: one "mixed" section, iops 7932.067932, bw_bytes 32489750,
    # clat_ns p99 2572288, for rw=randread
    samples = fio("fio_unified_mixed.json")
    assert one(samples, "read_iops") == pytest.approx(7932.067932)
    assert one(samples, "read_bandwidth") == pytest.approx(32489750 / MIB)
    assert one(samples, "read_latency", percentile=99.0) == pytest.approx(2572.288)
    assert not values(samples, "write_iops")


def test_unified_reporting_of_reads_and_writes_together_is_named():
    data = json.loads((DATA / "fio_unified_mixed.json").read_text())
    data["jobs"][0]["job options"]["rw"] = "randrw"
    with pytest.raises(ParseError, match="unified_rw_reporting"):
        parse("fio", json.dumps(data))
