"""Storage: fio 4k random read (32 jobs, direct I/O) for IOPS and latency, 1 MiB sequential writes with fsync.

The test file lives in a fresh `gpuvet-fio.*` directory under `storage_path`, bounded in size and time,
and the directory is always removed in cleanup.
"""

from __future__ import annotations

from typing import Any

from benchmarks.probes import register_parser, register_probe
from benchmarks.probes._json import dig, load_json_object, number
from benchmarks.probes.base import TARGET, Probe, ProbeContext, ProbeFailed, check_result
from benchmarks.sample import ParseError, Sample, ToolError

TOOL = "fio"
PERCENTILES = ("50.000000", "90.000000", "99.000000", "99.900000")
REMOVE_DIR = 'case "$1" in *gpuvet-fio.*) rm -rf -- "$1";; esac'
LAYOUT_MIB_PER_S = 20  # pessimistic write speed for laying out the test file, to size the timeout
MODES = ("randread", "write")


def _options(job: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    merged = {**(data.get("global options") or {}), **(job.get("job options") or {})}
    keep = ("rw", "bs", "numjobs", "direct", "iodepth", "ioengine", "size", "runtime", "fsync")
    return {key: merged[key] for key in keep if key in merged}


def _latency_samples(section: dict[str, Any], key: str, metric: str, metadata: dict) -> list[Sample]:
    samples = []
    latency = section.get(key) or {}
    if "mean" in latency and latency.get("N", 1):
        samples.append(Sample(f"{metric}_mean", float(latency["mean"]) / 1000, "us", dict(metadata)))
    for name, value in (latency.get("percentile") or {}).items():
        if name in PERCENTILES:
            percentile = float(name)
            samples.append(Sample(metric, float(value) / 1000, "us", {**metadata, "percentile": percentile}))
    return samples


@register_parser("fio")
def parse_output(text: str) -> list[Sample]:
    """IOPS, bandwidth (MiB/s) and latency percentiles (us) of the read and/or write side of each job."""
    data = load_json_object(text, TOOL)
    jobs = dig(data, "jobs", tool=TOOL, expected=list)
    if not jobs:
        raise ParseError(TOOL, "the jobs list is empty")
    samples: list[Sample] = []
    for index, job in enumerate(jobs):
        if not isinstance(job, dict):
            raise ParseError(TOOL, f"jobs.{index} is not an object")
        if job.get("error"):
            raise ToolError(TOOL, f"job {job.get('jobname', index)} failed with error {job['error']}")
        metadata = {
            "tool_version": data.get("fio version"),
            "job": job.get("jobname"),
            **_options(job, data),
        }
        found = False
        for side in ("read", "write"):
            section = dig(job, side, tool=TOOL, expected=dict) if side in job else {}
            if not section or (not number(section, "total_ios", tool=TOOL) and not section.get("io_bytes")):
                continue
            found = True
            samples.append(Sample(f"{side}_iops", number(section, "iops", tool=TOOL), "IOPS", dict(metadata)))
            bandwidth = number(section, "bw_bytes", tool=TOOL) / 2**20
            samples.append(Sample(f"{side}_bandwidth", bandwidth, "MiB/s", dict(metadata)))
            samples += _latency_samples(section, "clat_ns", f"{side}_latency", metadata)
            runtime_ms = float(job.get("job_runtime") or section.get("runtime") or 0)
            if side == "write" and runtime_ms > 0:
                effective = number(section, "io_bytes", tool=TOOL) / 2**20 / (runtime_ms / 1000)
                samples.append(Sample("write_effective_bandwidth", effective, "MiB/s", dict(metadata)))
        if isinstance(job.get("sync"), dict) and job["sync"].get("total_ios"):
            samples += _latency_samples(job["sync"], "lat_ns", "fsync_latency", metadata)
        if not found:
            raise ParseError(TOOL, f"job {job.get('jobname', index)} did no I/O")
    return samples


@register_probe
class FioProbe(Probe):
    """Options: mode "randread" (IOPS, latency) or "write" (checkpoint-style sequential writes)."""

    name = "fio"
    tool = TOOL

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.mode = options.get("mode", "randread")
        if self.mode not in MODES:
            raise ValueError(f"fio mode must be one of {MODES}, not {self.mode!r}")
        self.workdir: str | None = None

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """fio and mktemp on the target."""
        return {TARGET: (TOOL, "mktemp")}

    def prepare(self, ctx: ProbeContext) -> None:
        """fio on the target; a fresh directory under storage_path for the test file."""
        super().prepare(ctx)
        argv = ["mktemp", "-d", "-p", ctx.params.storage_path, "gpuvet-fio.XXXXXXXX"]
        result = ctx.execute(TARGET, "fio workdir", argv, timeout=15)
        check_result(result, f"creating a test directory under {ctx.params.storage_path}")
        self.workdir = result.stdout.strip()
        if "gpuvet-fio." not in self.workdir:
            raise ProbeFailed(f"mktemp printed an unexpected path: {self.workdir!r}")

    def _argv(self, params) -> tuple[list[str], float]:
        filename = f"{self.workdir}/gpuvet-fio.dat"
        common = ["fio", f"--filename={filename}", "--ioengine=psync", "--output-format=json"]
        if self.mode == "randread":
            size = params.fio_size_mib
            argv = [
                *common,
                "--name=randread",
                "--rw=randread",
                "--bs=4k",
                "--numjobs=32",
                "--direct=1",
                "--group_reporting",
                f"--size={size}M",
                f"--runtime={params.fio_seconds}",
                "--time_based",
            ]
            return argv, params.fio_seconds + size / LAYOUT_MIB_PER_S
        size = params.write_size_mib
        argv = [
            *common,
            "--name=checkpoint-write",
            "--rw=write",
            "--bs=1M",
            "--numjobs=1",
            f"--size={size}M",
            f"--fsync={params.write_fsync_every}",
            "--end_fsync=1",
            f"--runtime={max(params.fio_seconds, 60)}",
        ]
        return argv, max(params.fio_seconds, 60) + size / LAYOUT_MIB_PER_S

    def run(self, ctx: ProbeContext) -> None:
        """One fio job; its JSON is parsed later."""
        argv, expected = self._argv(ctx.params)
        result = ctx.execute(
            TARGET,
            f"fio {self.mode}",
            argv,
            timeout=expected + ctx.params.command_grace_s,
            parser="fio",
            metadata={"mode": self.mode, "storage_path": ctx.params.storage_path},
        )
        if result.timed_out:
            raise ProbeFailed(f"fio {self.mode} timed out after {result.duration:.0f} s")

    def cleanup(self, ctx: ProbeContext) -> None:
        """Remove the test directory and file."""
        if self.workdir:
            ctx.execute(
                TARGET, "fio workdir removal", ["sh", "-c", REMOVE_DIR, "sh", self.workdir], timeout=120
            )
            self.workdir = None

    def estimated_seconds(self, params) -> float:
        """Runtime plus layout of the test file."""
        if self.mode == "randread":
            return params.fio_seconds + params.fio_size_mib / 500
        return params.write_size_mib / 200
