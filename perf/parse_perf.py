"""Parser performance on large pasted outputs: every parser on about 10 MB of its own format.

Usage: .venv/bin/python perf/parse_perf.py [--megabytes 10] [--repeat 3]

Each input is grown from a recorded output in tests/data/bench (more intervals, jobs, rows or GPUs), so the
parser does the work a huge paste would make it do. Target (issue 13): a 10 MB paste parses in <= 1 s.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from benchmarks.probes import parse  # noqa: E402

DATA = PROJECT_ROOT / "tests" / "data" / "bench"
TARGET_S = 1.0


def _iperf3(size: int) -> str:
    data = json.loads((DATA / "iperf3_single.json").read_text())
    interval = data["intervals"][0]
    one = len(json.dumps(interval))
    data["intervals"] = [copy.deepcopy(interval) for _ in range(size // one)]
    return json.dumps(data, indent=1)


def _fio(size: int) -> str:
    data = json.loads((DATA / "fio_2.2_two_jobs.json").read_text())
    job = data["jobs"][0]
    one = len(json.dumps(job, indent=2))
    data["jobs"] = [{**copy.deepcopy(job), "jobname": f"job-{index}"} for index in range(size // one)]
    return json.dumps(data, indent=2)


def _lines(name: str, size: int, *, head: int, tail: int) -> str:
    lines = (DATA / name).read_text().splitlines()
    body = lines[head : len(lines) - tail]
    block = "\n".join(body)
    return "\n".join(
        [*lines[:head], *[block] * max(1, size // (len(block) + 1)), *lines[len(lines) - tail :]]
    )


def _nvidia_sampling(size: int) -> str:
    return _lines("nvidia-smi/sampling_8xh800.csv", size, head=1, tail=0)


def _nvidia_table(size: int) -> str:
    text = (DATA / "nvidia-smi" / "table_550_4x4090.txt").read_text().splitlines()
    header, gpu, rest = text[:8], text[8:12], text[24:]
    count = size // len("\n".join(gpu))
    rows = []
    for index in range(count):
        rows += [gpu[0].replace("|   0 ", f"|{index:4d} ", 1), *gpu[1:]]
    return "\n".join([*header, *rows, *rest])


def _ping(size: int) -> str:
    return _lines("ping_ok.txt", size, head=1, tail=4)


def _nccl(size: int) -> str:
    return _lines("nccl/all_reduce_8xh100.txt", size, head=15, tail=3)


def _dcgm(size: int) -> str:
    data = json.loads((DATA / "dcgm" / "diag_r2_4.2.3_8xh100_pcie_warn.json").read_text())
    category = data["DCGM Diagnostic"]["test_categories"][1]
    results = category["tests"][0]["results"]
    count = size // (len(json.dumps(results, indent="\t")) // len(results))
    for _ in range(2):  # the nesting indents each result more than alone: scale the count to the size once
        category["tests"][0]["results"] = [
            {**results[index % len(results)], "entity_id": index} for index in range(count)
        ]
        text = json.dumps(data, indent="\t")
        count = int(count * size / len(text))
    return text


def _kernel_log(size: int) -> str:
    return _lines("nvidia-smi/dmesg_xid.txt", size, head=0, tail=0)


INPUTS: dict[str, tuple[str, Callable[[int], str]]] = {
    "iperf3 JSON, many intervals": ("iperf3", _iperf3),
    "fio 2.x JSON, many jobs": ("fio", _fio),
    "nvidia-smi sampling CSV": ("nvidia-smi", _nvidia_sampling),
    "nvidia-smi table, many GPUs": ("nvidia-smi", _nvidia_table),
    "ping, many replies": ("ping", _ping),
    "nccl-tests table, many rows": ("nccl", _nccl),
    "kernel log with Xid lines": ("xid", _kernel_log),
    "dcgmi diag JSON, many results": ("dcgmi", _dcgm),
}


def measure(megabytes: float, repeat: int) -> list[tuple[str, float, float, int]]:
    """(input, MB, median seconds, samples) for each input."""
    rows = []
    for label, (parser, build) in INPUTS.items():
        text = build(int(megabytes * 1e6))
        times, count = [], 0
        for _ in range(repeat):
            started = time.perf_counter()
            count = len(parse(parser, text))
            times.append(time.perf_counter() - started)
        rows.append((label, len(text.encode()) / 1e6, statistics.median(times), count))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Print each parser's time on a large input, and the ratio to the 1 s target."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--megabytes", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rows = measure(args.megabytes, args.repeat)
    print(f"\ngpuvet parsers on pasted outputs of about {args.megabytes:g} MB (median of {args.repeat})\n")
    print(f"{'input':32} {'MB':>6} {'seconds':>8} {'MB/s':>7} {'samples':>9} {'/ target':>9}")
    print("-" * 76)
    for label, size, seconds, count in rows:
        ratio = seconds / TARGET_S
        print(f"{label:32} {size:6.1f} {seconds:8.3f} {size / seconds:7.1f} {count:9,d} {ratio:9.2f}")
    worst = max(seconds for _label, _size, seconds, _count in rows)
    verdict = "met" if worst <= TARGET_S else "missed"
    target = f"a {args.megabytes:g} MB paste parses in <= {TARGET_S:g} s"
    print(f"\ntarget: {target}; slowest {worst:.3f} s: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
