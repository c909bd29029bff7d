"""Bounded all-reduce benchmark with PyTorch (torch.distributed, NCCL), for servers without nccl-tests.

Run as `python3 -m torch.distributed.run --standalone --nproc_per_node=N THIS_FILE --max-bytes B --seconds S`.
Rank 0 prints the table in nccl-tests' layout (size, count, type, redop, root, then time, algbw, busbw and
#wrong out-of-place and in-place; torch's all-reduce is in-place only, so out-of-place reads N/A), so the same
parser reads both. algbw = bytes / time and
busbw = algbw x 2(n-1)/n, as nccl-tests computes them. This file runs on the trial server: standard
library and torch only, nothing from gpuvet.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator

HEADER = "\n".join(
    (
        "#" + " " * 62 + "out-of-place" + " " * 23 + "in-place",
        "#       size         count      type   redop    root"
        "     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "#        (B)    (elements)                          "
        "     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
    )
)
FLOAT_BYTES = 4


def sizes(min_bytes: int, max_bytes: int, factor: int = 2) -> Iterator[int]:
    """Message sizes from min to max, multiplied by factor, each a whole number of floats."""
    size = max(FLOAT_BYTES, min_bytes - min_bytes % FLOAT_BYTES)
    while size <= max_bytes:
        yield size
        size *= factor


def bus_factor(ranks: int) -> float:
    """busbw / algbw for all-reduce: 2(n-1)/n."""
    return 2 * (ranks - 1) / ranks if ranks > 1 else 1.0


def figures(size: int, seconds: float, ranks: int) -> tuple[float, float, float]:
    """(time us, algbw GB/s, busbw GB/s) of one all-reduce of `size` bytes that took `seconds`."""
    algbw = size / seconds / 1e9
    return seconds * 1e6, algbw, algbw * bus_factor(ranks)


def format_time(microseconds: float) -> str:
    """nccl-tests prints two decimals below 10 ms and none above."""
    return f"{microseconds:8.2f}" if microseconds < 10000 else f"{microseconds:8.0f}"


def format_row(size: int, in_place: tuple[float, float, float, int]) -> str:
    """One size row in nccl-tests' layout; torch has no out-of-place all-reduce, so that group reads N/A."""
    cells = [f"{size:12d}", f"{size // FLOAT_BYTES:12d}", "    float", "    sum", "     -1"]
    cells += [f"{'N/A':>8}", f"{'N/A':>6}", f"{'N/A':>6}", f"{'N/A':>5}"]
    time_us, algbw, busbw, wrong = in_place
    cells += [format_time(time_us), f"{algbw:6.2f}", f"{busbw:6.2f}", f"{wrong:5d}"]
    return "  ".join(cells)


def run_sweep(
    measure: Callable[[int], tuple[float, int]],
    *,
    ranks: int,
    min_bytes: int,
    max_bytes: int,
    seconds: float,
    rounds: int,
    emit: Callable[[str], None] = print,
) -> list[float]:
    """Measure every size until the time budget is spent; returns the busbws.

    `measure(size)` returns (seconds per all-reduce, wrong elements), the same on every rank (it reduces
    them with MAX), so every rank stops at the same size: `rounds` all-reduces are run per size.
    """
    emit(HEADER)
    spent, busbws = 0.0, []
    for size in sizes(min_bytes, max_bytes):
        if spent > seconds:
            emit(f"# stopped after the {seconds:g} s budget; larger sizes not measured")
            break
        elapsed, wrong = measure(size)
        spent += elapsed * rounds
        result = (*figures(size, elapsed, ranks), wrong)
        busbws.append(result[2])
        emit(format_row(size, result))
    emit("# Out of bounds values : 0 OK")
    emit(f"# Avg bus bandwidth    : {sum(busbws) / max(len(busbws), 1):.4f} ")
    return busbws


def expected_after(rounds: int, ranks: int) -> float:
    """Each rank starts with rank + 1; after k in-place sums every element is n(n+1)/2 x n^(k-1)."""
    return ranks * (ranks + 1) / 2 * ranks ** (rounds - 1)


def _torch_measure(torch, dist, rank: int, ranks: int, device, iterations: int, warmup: int):
    """A measure() for run_sweep on real GPUs: timed in-place all-reduces, the result checked afterwards."""

    def measure(size: int) -> tuple[float, int]:
        data = torch.full((size // FLOAT_BYTES,), float(rank + 1), dtype=torch.float32, device=device)
        for _ in range(warmup):
            dist.all_reduce(data)
        data.fill_(float(rank + 1))
        torch.cuda.synchronize(device)
        dist.barrier()
        started = time.perf_counter()
        for _ in range(iterations):
            dist.all_reduce(data)
        torch.cuda.synchronize(device)
        elapsed = (time.perf_counter() - started) / iterations
        expected = expected_after(iterations, ranks)
        wrong = int(((data - expected).abs() > 1e-3 * expected).sum().item())
        spent = torch.tensor([elapsed, float(wrong)], dtype=torch.float64, device=device)
        dist.all_reduce(spent, op=dist.ReduceOp.MAX)
        return float(spent[0].item()), int(spent[1].item())

    return measure


def main() -> None:
    """Entry point under torch.distributed.run."""
    import os

    import torch
    import torch.distributed as dist

    parser = argparse.ArgumentParser()
    parser.add_argument("--min-bytes", type=int, default=8)
    parser.add_argument("--max-bytes", type=int, default=2**30)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl")
    rank, ranks = dist.get_rank(), dist.get_world_size()
    if rank == 0:
        nccl = ".".join(map(str, torch.cuda.nccl.version()))
        print(f"# gpuvet all_reduce with torch {torch.__version__}, NCCL {nccl}")
    names = [None] * ranks
    dist.all_gather_object(names, (os.uname().nodename, local_rank, torch.cuda.get_device_name(device)))
    if rank == 0:
        for index, (host, device_index, name) in enumerate(names):
            print(f"#  Rank {index:2d} Group  0 on {host:>10s} device {device_index:2d} [0x00] {name}")
    measure = _torch_measure(torch, dist, rank, ranks, device, args.iterations, args.warmup)
    emit = print if rank == 0 else (lambda line: None)
    run_sweep(
        measure,
        ranks=ranks,
        min_bytes=args.min_bytes,
        max_bytes=args.max_bytes,
        seconds=args.seconds,
        rounds=args.iterations + args.warmup,
        emit=emit,
    )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
