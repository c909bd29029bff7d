"""Storage: fio 4k random read (32 jobs, direct I/O) for IOPS and latency, 1 MiB sequential writes with fsync.

The test file lives in a fresh `gpuvet-fio.*` directory under `storage_path`, bounded in size and time,
and the directory is always removed in cleanup.
"""

from __future__ import annotations

from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from benchmarks.probes import register_parser, register_probe
from benchmarks.probes._json import dig, load_json_object, number
from benchmarks.probes.base import TARGET, Probe, ProbeContext, ProbeFailed, check_result
from benchmarks.sample import ParseError, Sample, ToolError

TOOL = "fio"
PERCENTILES = ("50.000000", "90.000000", "99.000000", "99.900000")
REMOVE_DIR = 'case "$1" in *gpuvet-fio.*) rm -rf -- "$1";; esac'
LAYOUT_MIB_PER_S = 20  # pessimistic write speed for laying out the test file, to size the timeout
MODES = ("randread", "write")
SUMMED_METRICS = {"read_iops", "write_iops", "read_bandwidth", "write_bandwidth", "write_effective_bandwidth"}


def _options(job: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    merged = {**(data.get("global options") or {}), **(job.get("job options") or {})}
    keep = ("rw", "bs", "numjobs", "direct", "iodepth", "ioengine", "size", "runtime", "fsync")
    return {key: merged[key] for key in keep if key in merged}


def _latency_samples(section: dict[str, Any], key: str, metric: str, metadata: dict) -> list[Sample]:
    """Mean and percentiles in us: fio 3 reports `*_ns` sections in ns, fio 2 the plain key in us."""
    samples = []
    divisor = 1000 if key.endswith("_ns") else 1
    latency = section.get(key) or {}
    if "mean" in latency and latency.get("N", 1):
        samples.append(Sample(f"{metric}_mean", float(latency["mean"]) / divisor, "us", dict(metadata)))
    for name, value in (latency.get("percentile") or {}).items():
        if name in PERCENTILES:
            percentile = float(name)
            samples.append(
                Sample(metric, float(value) / divisor, "us", {**metadata, "percentile": percentile})
            )
    return samples


def _did_io(section: dict[str, Any]) -> bool:
    """Whether this side of the job did I/O (fio 2.1 has no total_ios: fall back to io_bytes and iops)."""
    if not section:
        return False
    if "total_ios" in section:
        return bool(number(section, "total_ios", tool=TOOL)) or bool(section.get("io_bytes"))
    return bool(section.get("io_bytes")) or bool(section.get("iops"))


def _io_mib(section: dict[str, Any]) -> float:
    """Bytes moved in MiB: fio 3 counts io_bytes in bytes, fio 2 (no bw_bytes) in KiB."""
    legacy = "bw_bytes" not in section
    return number(section, "io_bytes", tool=TOOL) / (2**10 if legacy else 2**20)


def _bandwidth_mib(section: dict[str, Any]) -> float:
    """Bandwidth in MiB/s: fio 3's bw_bytes (bytes/s), else fio 2's bw (KiB/s)."""
    if "bw_bytes" in section:
        return number(section, "bw_bytes", tool=TOOL) / 2**20
    return number(section, "bw", tool=TOOL) / 2**10


@register_parser("fio", accepts=_l("fio 2.x 或 3.x 的 fio --output-format=json 输出，一个或多个任务"))
def parse_output(text: str) -> list[Sample]:
    """IOPS, bandwidth (MiB/s), latency percentiles (us) of each job's read and write side (fio 2 and 3)."""
    data = load_json_object(text, TOOL)
    jobs = dig(data, "jobs", tool=TOOL, expected=list)
    if not jobs:
        raise ParseError(TOOL, _("jobs 列表为空"))
    samples: list[Sample] = []
    names = [job.get("jobname") if isinstance(job, dict) else None for job in jobs]
    for index, job in enumerate(jobs):
        if not isinstance(job, dict):
            raise ParseError(TOOL, _("jobs.%(index)s 不是对象", index=index))
        if job.get("error"):
            raise ToolError(
                TOOL,
                _("任务 %(job)s 失败，错误码 %(error)s", job=job.get("jobname", index), error=job["error"]),
            )
        metadata = {
            "tool_version": data.get("fio version"),
            "job": job.get("jobname"),
            **_options(job, data),
        }
        if names.count(job.get("jobname")) > 1:
            metadata["job_index"] = index  # several jobs share a name (numjobs without group_reporting)
        found = False
        for side in ("read", "write"):
            section = dig(job, side, tool=TOOL, expected=dict) if side in job else {}
            if not _did_io(section):
                continue
            found = True
            samples.append(Sample(f"{side}_iops", number(section, "iops", tool=TOOL), "IOPS", dict(metadata)))
            samples.append(Sample(f"{side}_bandwidth", _bandwidth_mib(section), "MiB/s", dict(metadata)))
            latency_key = "clat_ns" if "clat_ns" in section else "clat"
            samples += _latency_samples(section, latency_key, f"{side}_latency", metadata)
            runtime_ms = float(job.get("job_runtime") or section.get("runtime") or 0)
            if side == "write" and runtime_ms > 0:
                effective = _io_mib(section) / (runtime_ms / 1000)
                samples.append(Sample("write_effective_bandwidth", effective, "MiB/s", dict(metadata)))
        if isinstance(job.get("sync"), dict) and job["sync"].get("total_ios"):
            samples += _latency_samples(job["sync"], "lat_ns", "fsync_latency", metadata)
        if not found:
            raise ParseError(TOOL, _("任务 %(job)s 没有做任何 I/O", job=job.get("jobname", index)))
    return _merge_clones(samples)


def _merge_clones(samples: list[Sample]) -> list[Sample]:
    """Jobs that share a name (numjobs without group_reporting) become one set, as group_reporting prints it.

    Rates add up across the clones; latency figures keep the worst clone's value.
    """
    merged: dict[tuple, Sample] = {}
    for sample in samples:
        if "job_index" not in sample.metadata:
            merged[(id(sample),)] = sample
            continue
        metadata = {key: value for key, value in sample.metadata.items() if key != "job_index"}
        key = (sample.metric, metadata.get("job"), metadata.get("percentile"))
        previous = merged.get(key)
        if previous is None:
            merged[key] = Sample(sample.metric, sample.value, sample.unit, {**metadata, "jobs": 1})
            continue
        combine = sum if sample.metric in SUMMED_METRICS else max
        value = combine((float(previous.value), float(sample.value)))
        jobs = previous.metadata["jobs"] + 1
        merged[key] = Sample(sample.metric, value, sample.unit, {**previous.metadata, "jobs": jobs})
    return list(merged.values())


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
        check_result(result, _("在 %(path)s 下创建测试目录", path=ctx.params.storage_path))
        self.workdir = result.stdout.strip()
        if "gpuvet-fio." not in self.workdir:
            raise ProbeFailed(_("mktemp 输出了意外的路径：%(path)s", path=repr(self.workdir)))

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
            raise ProbeFailed(
                _("%(what)s 在 %(seconds).0f 秒后超时", what=f"fio {self.mode}", seconds=result.duration)
            )

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
