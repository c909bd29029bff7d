"""All-reduce bandwidth: the torch script's arithmetic and layout; the probe with nccl-tests on a server."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.probes import parse
from benchmarks.remote.allreduce_torch import bus_factor, expected_after, run_sweep, sizes
from benchmarks.ssh import SSHRunner
from benchmarks.suites import Step, StepStatus, run_suite
from tests.bench_support.gpu import install_standin
from tests.bench_support.sshd import Sshd
from tests.benchmarks.conftest import DATA, needs_root, short_params, target_for
from tests.benchmarks.test_parsers import one, values


def test_sizes_and_bus_factor_follow_nccl_tests():
    assert list(sizes(8, 64)) == [8, 16, 32, 64]
    assert list(sizes(6, 20)) == [4, 8, 16]  # whole floats only
    assert (
        bus_factor(8) == pytest.approx(1.75) and bus_factor(16) == pytest.approx(1.875) and bus_factor(1) == 1
    )


def test_in_place_sums_grow_by_the_rank_count_each_round():
    assert expected_after(1, 4) == 10  # 1 + 2 + 3 + 4
    assert expected_after(3, 4) == 10 * 4 * 4


def test_the_script_output_reads_like_nccl_tests_and_keeps_its_arithmetic():
    lines: list[str] = []
    bandwidth = 100e9  # bytes/s of the fake interconnect

    def measure(size: int) -> tuple[float, int]:
        return 10e-6 + size / bandwidth, 0

    busbws = run_sweep(
        measure, ranks=8, min_bytes=8, max_bytes=2**30, seconds=60, rounds=25, emit=lines.append
    )
    samples = parse("nccl", "\n".join(lines))
    largest = 2**30
    algbw = one(samples, "nccl_algbw", size_bytes=largest, placement="in_place")
    assert algbw == pytest.approx(largest / (10e-6 + largest / bandwidth) / 1e9, rel=1e-2)
    assert one(samples, "nccl_busbw", size_bytes=largest) == pytest.approx(algbw * 1.75, rel=1e-2)
    assert values(samples, "nccl_busbw", placement="out_of_place") == []  # torch: in-place only, N/A
    assert one(samples, "nccl_busbw_peak") == pytest.approx(max(busbws), abs=0.01)


def test_the_time_budget_stops_the_sweep_on_every_rank_alike():
    lines: list[str] = []
    run_sweep(
        lambda size: (0.5, 0), ranks=2, min_bytes=8, max_bytes=2**20, seconds=2, rounds=2, emit=lines.append
    )
    rows = [line for line in lines if line.strip() and not line.startswith("#")]
    assert len(rows) == 3  # 0.5 s x 2 rounds per size: the budget of 2 s is passed after the third size
    assert any("budget" in line for line in lines)


def test_a_wrong_result_from_the_script_fails_the_parse():
    lines: list[str] = []
    run_sweep(
        lambda size: (1e-4, 5 if size == 64 else 0),
        ranks=4,
        min_bytes=8,
        max_bytes=256,
        seconds=9,
        rounds=1,
        emit=lines.append,
    )
    with pytest.raises(Exception, match="#wrong"):
        parse("nccl", "\n".join(lines))


@pytest.mark.slow
@needs_root
def test_collective_probe_runs_all_reduce_perf_found_on_the_server(tmp_path: Path):
    """A server with nccl-tests: the probe runs all_reduce_perf over the GPUs nvidia-smi -L lists."""
    bin_dir = tmp_path / "bin"
    install_standin(bin_dir)
    recorded = DATA / "nccl" / "all_reduce_8xh100.txt"
    fake = bin_dir / "all_reduce_perf"
    fake.write_text(f'#!/bin/sh\necho "$*" > "{tmp_path}/argv"\ncat "{recorded}"\n')
    fake.chmod(0o755)
    with Sshd(tmp_path / "sshd", path_prefix=[str(bin_dir)]) as sshd, SSHRunner(target_for(sshd)) as runner:
        result = run_suite(runner, [Step("collective", "collective")], short_params(tmp_path / "data"))
    step = result.step("collective")
    assert step.status == StepStatus.ok, step.error
    assert (tmp_path / "argv").read_text().split() == ["-b", "8", "-e", str(8 * 2**30), "-f", "2", "-g", "8"]
    assert one(step.samples, "nccl_busbw_peak") == pytest.approx(372.27)
    assert step.outputs[0].stdout.startswith("### nccl-tests all_reduce_perf on 8 GPUs")


def _collective(claims, name: str):
    from benchmarks.compare import compare

    samples = parse("nccl", (DATA / "nccl" / name).read_text())
    return [c for c in compare(claims, samples) if c.check == "collective"]


def test_one_node_is_compared_with_its_gpu_reference():
    from benchmarks.compare import Claims, Verdict

    [h100] = _collective(Claims(), "all_reduce_8xh100.txt")
    assert h100.verdict is Verdict.passed and h100.claimed == 370 and h100.measured == pytest.approx(372.3)
    [a100] = _collective(Claims(), "all_reduce_old_error_column.txt")
    assert a100.claimed == 232  # A100-SXM4-40GB matches the A100 reference


def test_a_slow_node_is_flagged_with_what_to_ask():
    from benchmarks.compare import Claims, Thresholds, Verdict, compare

    samples = parse("nccl", (DATA / "nccl" / "all_reduce_8xh100.txt").read_text())
    strict = Thresholds(collective_busbw_gbs={"H100": 900.0})
    [slow] = [c for c in compare(Claims(), samples, thresholds=strict) if c.check == "collective"]
    assert slow.verdict is Verdict.failed and "PCIe" in slow.reason_en and "NVLink" in slow.reason_zh


def test_several_nodes_are_compared_with_the_claimed_network():
    from benchmarks.compare import Claims, Verdict

    [roce] = _collective(Claims(intranet_gbps=3200), "all_reduce_2x8xh100_roce.txt")
    assert roce.claimed == 400 and roce.verdict is Verdict.failed  # 78.8 GB/s of 8x400G = 400 GB/s
    [unknown] = _collective(Claims(), "all_reduce_2x8xh100_roce.txt")
    assert unknown.verdict is Verdict.info  # no claimed network, no single-node reference applies
