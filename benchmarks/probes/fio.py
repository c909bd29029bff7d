"""Storage: fio 4k random read (32 jobs, direct I/O) for IOPS and latency, 1 MiB sequential writes with fsync.

The test file lives in a fresh `gpuvet-fio.*` directory under `storage_path`, bounded in size and time,
and the directory is always removed in cleanup.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.messages import message as _
from benchmarks.probes import UploadTool, register_parser, register_probe, register_upload
from benchmarks.probes._json import dig, load_json_object, number
from benchmarks.probes.base import TARGET, Probe, ProbeContext, ProbeFailed, check_result
from benchmarks.sample import ParseError, Sample, ToolError

TOOL = "fio"
PERCENTILES = ("50.000000", "90.000000", "99.000000", "99.900000")
REMOVE_DIR = 'case "$1" in *gpuvet-fio.*) rm -rf -- "$1";; esac'
LAYOUT_MIB_PER_S = 20  # pessimistic write speed for laying out the test file, to size the timeout
MODES = ("randread", "write")
ONE_WAY_MODES = {"read": "read", "randread": "read", "write": "write", "randwrite": "write"}  # rw -> side


def _options(job: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    merged = {**(data.get("global options") or {}), **(job.get("job options") or {})}
    keep = ("rw", "bs", "numjobs", "direct", "iodepth", "ioengine", "size", "runtime", "fsync")
    return {key: merged[key] for key in keep if key in merged}


def _latency_samples(latency: dict[str, Any], divisor: float, metric: str, metadata: dict) -> list[Sample]:
    """Mean and percentiles in us of one latency section (`divisor` 1000 for fio 3's ns, 1 for fio 2's us)."""
    samples = []
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
    """Bytes moved in MiB: io_bytes counts bytes since fio 2.21 (which added io_kbytes), KiB before."""
    in_kib = "io_kbytes" not in section
    return number(section, "io_bytes", tool=TOOL) / (2**10 if in_kib else 2**20)


def _io_count(section: dict[str, Any]) -> float:
    """I/Os completed: total_ios (fio 2.1.14 on), else iops over the runtime."""
    if "total_ios" in section:
        return number(section, "total_ios", tool=TOOL)
    return number(section, "iops", tool=TOOL) * _runtime_ms(section) / 1000


def _runtime_ms(section: dict[str, Any]) -> float:
    """The side's runtime in ms, fsyncs included; under group_reporting the longest job's.

    Never job_runtime: fio adds that up over every job of a group, numjobs times the wall time.
    """
    return number(section, "runtime", tool=TOOL) if "runtime" in section else 0.0


def _bandwidth_mib(section: dict[str, Any]) -> float:
    """Bandwidth in MiB/s: fio 3's bw_bytes (bytes/s), else fio 2's bw (KiB/s)."""
    if "bw_bytes" in section:
        return number(section, "bw_bytes", tool=TOOL) / 2**20
    return number(section, "bw", tool=TOOL) / 2**10


def _latency_key(section: dict[str, Any]) -> tuple[str, float]:
    """Where the completion latency is and its divisor to us: fio 3's `clat_ns`, fio 2's `clat` (us)."""
    return ("clat_ns", 1000) if "clat_ns" in section else ("clat", 1)


def _merged_latency(parts: list[tuple[dict[str, Any], float]]) -> dict[str, Any]:
    """(latency section, I/O count) of clones as one: the mean weighted by I/Os, each percentile the worst.

    The worst clone's percentile is an upper bound of what group_reporting prints (fio merges histograms).
    """
    weighted = [(latency, count) for latency, count in parts if "mean" in latency and count > 0]
    merged: dict[str, Any] = {"percentile": {}}
    total = sum(count for _latency, count in weighted)
    if total:
        merged["mean"] = sum(float(latency["mean"]) * count for latency, count in weighted) / total
    for latency, _count in parts:
        for name, value in (latency.get("percentile") or {}).items():
            if name in PERCENTILES:
                merged["percentile"][name] = max(float(value), merged["percentile"].get(name, 0.0))
    return merged


def _group_report(sections: list[dict[str, Any]], job: str) -> dict[str, Any]:
    """One side of clones (numjobs without group_reporting) summed as group_reporting does it.

    Bytes and I/Os add up; the runtime is the longest clone's, so rates are totals over the wall time.
    """
    runtime = max(_runtime_ms(section) for section in sections)
    if runtime <= 0:
        raise ParseError(TOOL, _("任务 %(job)s 做了 I/O，但 runtime 为 0", job=job))
    mib = sum(_io_mib(section) for section in sections)
    ios = sum(_io_count(section) for section in sections)
    key, _divisor = _latency_key(sections[0])
    return {
        "io_bytes": mib * 2**20,
        "io_kbytes": mib * 2**10,
        "bw_bytes": mib * 2**20 / (runtime / 1000),
        "iops": ios / (runtime / 1000),
        "runtime": runtime,
        "total_ios": ios,
        key: _merged_latency([(section.get(key) or {}, _io_count(section)) for section in sections]),
    }


def _side_samples(side: str, section: dict[str, Any], metadata: dict) -> list[Sample]:
    """IOPS, bandwidth, latency of one side of a job; for writes also the bandwidth fsyncs included."""
    samples = [
        Sample(f"{side}_iops", number(section, "iops", tool=TOOL), "IOPS", dict(metadata)),
        Sample(f"{side}_bandwidth", _bandwidth_mib(section), "MiB/s", dict(metadata)),
    ]
    key, divisor = _latency_key(section)
    samples += _latency_samples(section.get(key) or {}, divisor, f"{side}_latency", metadata)
    runtime_ms = _runtime_ms(section)
    if side == "write" and runtime_ms > 0:
        effective = _io_mib(section) / (runtime_ms / 1000)
        details = {**metadata, "runtime_ms": runtime_ms}
        samples.append(Sample("write_effective_bandwidth", effective, "MiB/s", details))
    return samples


def _fsync_samples(clones: list[dict[str, Any]], metadata: dict) -> list[Sample]:
    """fsync latency (fio 3's `sync` section) of a job or its clones merged."""
    syncs = [job.get("sync") for job in clones]
    syncs = [sync for sync in syncs if isinstance(sync, dict) and sync.get("total_ios")]
    if not syncs:
        return []
    if len(syncs) == 1:
        return _latency_samples(syncs[0].get("lat_ns") or {}, 1000, "fsync_latency", metadata)
    parts = [(sync.get("lat_ns") or {}, number(sync, "total_ios", tool=TOOL)) for sync in syncs]
    return _latency_samples(_merged_latency(parts), 1000, "fsync_latency", metadata)


def _check_job(job: Any, index: int) -> None:
    """A job is an object and did not fail."""
    if not isinstance(job, dict):
        raise ParseError(TOOL, _("jobs.%(index)s 不是对象", index=index))
    if job.get("error"):
        raise ToolError(
            TOOL,
            _("任务 %(job)s 失败，错误码 %(error)s", job=job.get("jobname", index), error=job["error"]),
        )


def _clone_sets(jobs: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Jobs that ran together under one name (numjobs without group_reporting), in the order printed."""
    sets: dict[tuple, list[dict[str, Any]]] = {}
    for job in jobs:
        sets.setdefault((str(job.get("jobname")), str(job.get("groupid"))), []).append(job)
    return list(sets.values())


def _job_samples(clones: list[dict[str, Any]], data: dict[str, Any]) -> list[Sample]:
    """The samples of one job as fio's group_reporting would print it (its clones summed)."""
    first = clones[0]
    name = first.get("jobname")
    metadata = {"tool_version": data.get("fio version"), "job": name, **_options(first, data)}
    if len(clones) > 1:
        metadata["jobs"] = len(clones)
    samples: list[Sample] = []
    for side in ("read", "write"):
        sections = _sections(clones, side, metadata.get("rw"))
        if sections:
            reported = sections[0] if len(sections) == 1 else _group_report(sections, str(name))
            samples += _side_samples(side, reported, metadata)
    if not samples and any(isinstance(job.get("mixed"), dict) and _did_io(job["mixed"]) for job in clones):
        raise ParseError(
            TOOL, _("任务 %(job)s 用 unified_rw_reporting 把读和写合在一起报告（mixed），无法分开", job=name)
        )
    if not samples:
        raise ParseError(TOOL, _("任务 %(job)s 没有做任何 I/O", job=name))
    return samples + _fsync_samples(clones, metadata)


def _sections(clones: list[dict[str, Any]], side: str, rw: Any) -> list[dict[str, Any]]:
    """Each clone's read or write side that did I/O; unified_rw_reporting's `mixed` one when rw is one-way."""
    found = []
    for job in clones:
        section = dig(job, side, tool=TOOL, expected=dict) if side in job else {}
        if not _did_io(section) and ONE_WAY_MODES.get(str(rw)) == side and isinstance(job.get("mixed"), dict):
            section = job["mixed"]
        if _did_io(section):
            found.append(section)
    return found


def _final_report(text: str) -> dict[str, Any]:
    """fio's last JSON document: with --status-interval it prints an interim one every interval before it."""
    last = text.rfind('"fio version"')
    start = text.rfind("{", 0, last) if last > 0 else -1
    return load_json_object(text[start:] if start >= 0 else text, TOOL)


@register_parser("fio", accepts=_("fio 2.x 或 3.x 的 fio --output-format=json 输出，一个或多个任务"))
def parse_output(text: str) -> list[Sample]:
    """IOPS, bandwidth (MiB/s), latency percentiles (us) of each job's read and write side (fio 2 and 3).

    Rates are bytes or I/Os over the side's runtime, the longest job's where several ran together.
    """
    data = _final_report(text)
    jobs = dig(data, "jobs", tool=TOOL, expected=list)
    if not jobs:
        raise ParseError(TOOL, _("jobs 列表为空"))
    for index, job in enumerate(jobs):
        _check_job(job, index)
    samples: list[Sample] = []
    for clones in _clone_sets(jobs):
        samples += _job_samples(clones, data)
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


def uploaded_step(samples: Sequence[Sample]) -> str:
    """The suite step an uploaded fio output stands for: fio_randread when it read, else fio_write."""
    return "fio_randread" if any(sample.metric == "read_iops" for sample in samples) else "fio_write"


# Outputs of this tool captured by hand and uploaded (the upload form, the API, `flask bench upload`).
register_upload(
    UploadTool(
        "fio",
        "fio",
        "fio_randread",
        ("storage",),
        "fio --name=randread --rw=randread --bs=4k --direct=1 --numjobs=32 --group_reporting "
        "--size=1G --runtime=30 --time_based --output-format=json --filename=/DATA/fio.test",
        order=30,
        step_of=uploaded_step,
    )
)
