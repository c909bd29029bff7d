"""Data loading: many small files (the shape of an image dataset) read by 1, half the cores and all cores.

A training job's DataLoader reads thousands of small files a second; storage that serves them slowly
starves the GPUs however fast they are. The script below writes the files under `storage_path`, drops
them from the page cache (fsync + POSIX_FADV_DONTNEED, no root needed), then times each reader count.
Every pass is bounded in time and the directory is always removed.
"""

from __future__ import annotations

from typing import Any

from benchmarks.messages import message as _
from benchmarks.probes import register_parser, register_probe
from benchmarks.probes._json import dig, load_json_object, number
from benchmarks.probes.base import TARGET, Probe, ProbeContext, ProbeFailed
from benchmarks.sample import ParseError, Sample

TOOL = "dataload"
MIB = 2**20
# argv: storage path, file count, file size in KiB, seconds per pass. Prints one JSON object.
SCRIPT = r"""
import json, os, shutil, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
path, count, kib, budget = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
cores = os.cpu_count() or 1
work = tempfile.mkdtemp(prefix="gpuvet-dataload.", dir=path)
evicts = hasattr(os, "posix_fadvise")
def evict(name):
    if evicts:
        fd = os.open(name, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
try:
    block, names, began = os.urandom(kib * 1024), [], time.monotonic()
    for i in range(count):
        folder = os.path.join(work, "%03d" % (i // 1000))
        os.makedirs(folder, exist_ok=True)
        name = os.path.join(folder, "%07d.jpg" % i)
        with open(name, "wb") as handle:
            handle.write(block)
        names.append(name)
        if time.monotonic() - began > budget * 4:
            break
    os.sync()
    write_seconds = time.monotonic() - began
    passes = []
    for readers in sorted({1, max(1, cores // 2), cores}):
        for name in names:
            evict(name)
        deadline = time.monotonic() + budget
        def read(name):
            if time.monotonic() > deadline:
                return -1
            with open(name, "rb", buffering=0) as handle:
                return len(handle.read())
        started = time.monotonic()
        with ThreadPoolExecutor(readers) as pool:
            sizes = list(pool.map(read, names, chunksize=8))
        seconds = time.monotonic() - started
        done = [size for size in sizes if size >= 0]
        passes.append({"readers": readers, "files": len(done), "bytes": sum(done), "seconds": seconds,
                       "complete": len(done) == len(names)})
    print(json.dumps({"cores": cores, "files": len(names), "file_kib": kib, "evicted": evicts,
                      "write_seconds": write_seconds, "passes": passes}))
finally:
    shutil.rmtree(work, ignore_errors=True)
"""


@register_parser(TOOL, accepts=_("gpuvet 数据加载脚本输出的 JSON"))
def parse_output(text: str) -> list[Sample]:
    """Files/s and MB/s for each reader count, with the cores, file size and whether the cache was dropped."""
    data = load_json_object(text, TOOL)
    passes = dig(data, "passes", tool=TOOL, expected=list)
    if not passes:
        raise ParseError(TOOL, _("输出中没有读取轮次"))
    common: dict[str, Any] = {
        "cores": int(number(data, "cores", tool=TOOL)),
        "file_kib": int(number(data, "file_kib", tool=TOOL)),
        "files": int(number(data, "files", tool=TOOL)),
        "cache_dropped": bool(data.get("evicted")),
    }
    samples = []
    for index, entry in enumerate(passes):
        seconds = number(entry, "seconds", tool=TOOL)
        if seconds <= 0:
            raise ParseError(TOOL, _("passes.%(index)s：seconds 必须大于零", index=index))
        metadata = {
            **common,
            "readers": int(number(entry, "readers", tool=TOOL)),
            "complete": entry.get("complete"),
        }
        files_per_s = number(entry, "files", tool=TOOL) / seconds
        samples.append(Sample("dataload_files_per_s", files_per_s, "files/s", dict(metadata)))
        mb_per_s = number(entry, "bytes", tool=TOOL) / MIB / seconds
        samples.append(Sample("dataload_mib_per_s", mb_per_s, "MiB/s", dict(metadata)))
    return samples


@register_probe
class DataLoadProbe(Probe):
    """Writes `dataload_files` small files and reads them back with 1, half the cores and all cores."""

    name = TOOL
    tool = "python3"

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """python3 on the target (every GPU server has it)."""
        return {TARGET: ("python3",)}

    def run(self, ctx: ProbeContext) -> None:
        """One bounded run of the script; its JSON is parsed later."""
        params = ctx.params
        argv = ["python3", "-c", SCRIPT, params.storage_path, str(params.dataload_files)]
        argv += [str(params.dataload_file_kib), str(params.dataload_seconds)]
        result = ctx.execute(
            TARGET,
            "data loading",
            argv,
            timeout=self.estimated_seconds(params) + params.command_grace_s,
            parser=TOOL,
            metadata={"storage_path": params.storage_path},
        )
        if result.timed_out:
            raise ProbeFailed(_("数据加载测试在 %(seconds).0f 秒后超时", seconds=result.duration))
        if result.exit_code != 0:
            raise ProbeFailed(_("数据加载脚本失败：%(detail)s", detail=result.stderr.strip()[-300:]))

    def estimated_seconds(self, params) -> float:
        """Writing (at most 4 passes' time) plus three read passes."""
        return params.dataload_seconds * 7
