"""GPU health: Xid events in the kernel log, the nvidia-smi health query, and DCGM's diagnostic.

What a careful engineer checks before trusting rented GPUs: uncorrected ECC errors and pages waiting for
retirement, Xid events (79: the GPU fell off the bus), clocks slowed by power or heat, PCIe links running
narrower than the card supports (x4 risers, a degraded slot), and `dcgmi diag` where DCGM is installed
(benchmarks.probes.dcgm reads it).
"""

from __future__ import annotations

import re

from benchmarks.messages import message as _
from benchmarks.probes import UploadTool, dcgm, register_parser, register_probe, register_upload
from benchmarks.probes.base import TARGET, Probe, ProbeContext, ProbeFailed
from benchmarks.sample import ParseError, Sample, ToolError

TOOL = "xid"
HEALTH_QUERY = (
    "index",
    "name",
    "pci.bus_id",
    "pcie.link.gen.current",
    "pcie.link.gen.max",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "temperature.gpu",
    "power.draw",
    "power.limit",
    "clocks_throttle_reasons.active",
    "ecc.errors.uncorrected.volatile.total",
    "retired_pages.pending",
)
_XID = re.compile(r"NVRM: Xid \(PCI:(?P<bus>[0-9A-Fa-f:.]+)\): (?P<code>\d+),\s*(?P<detail>.*)$", re.M)
UNREADABLE_LOG = "### kernel log unreadable"
# dmesg needs root or kernel.dmesg_restrict=0; journalctl -k needs the systemd-journal group.
READ_KERNEL_LOG = (
    f"dmesg 2>/dev/null || journalctl -k --no-pager -q -n 50000 2>/dev/null || echo '{UNREADABLE_LOG}'"
)
_KERNEL_LOG = re.compile(r"^\[\s*\d+\.\d+\]|^\w{3}\s+\d+ \d\d:\d\d:\d\d |^\d{4}-\d\d-\d\dT", re.MULTILINE)
# Xid codes that point at the hardware or the platform (NVIDIA's Xid catalogue), with what to ask.
SERIOUS_XIDS: dict[int, tuple[str, str, str]] = {
    48: ("fail", "双比特 ECC 错误", "double-bit ECC error"),
    62: ("warn", "GPU 内部微控制器停止", "internal micro-controller halt"),
    63: ("warn", "ECC 页面退役或行重映射", "ECC page retirement or row remapping"),
    64: ("fail", "ECC 页面退役或行重映射失败", "ECC page retirement or row remapping failed"),
    74: ("fail", "NVLink 错误", "NVLink error"),
    79: ("fail", "GPU 从总线上掉线", "GPU has fallen off the bus"),
    92: ("warn", "单比特 ECC 错误率过高", "high single-bit ECC error rate"),
    94: ("warn", "已隔离的 ECC 错误", "contained ECC error"),
    95: ("fail", "未隔离的 ECC 错误", "uncontained ECC error"),
    119: ("warn", "GSP 固件超时", "GSP firmware timeout"),
    120: ("warn", "GSP 固件错误", "GSP firmware error"),
}
# clocks_throttle_reasons bits that mean the card is slowed by power or heat (not idle or app clocks).
SLOWDOWN_BITS = {
    0x4: ("软件功耗上限", "software power cap"),
    0x8: ("硬件降频", "hardware slowdown"),
    0x20: ("软件温度降频", "software thermal slowdown"),
    0x40: ("硬件温度降频", "hardware thermal slowdown"),
    0x80: ("硬件功耗刹车", "hardware power brake"),
}


@register_parser(TOOL, accepts=_("dmesg、journalctl -k 或 /var/log/kern.log 的文本"))
def parse_kernel_log(text: str) -> list[Sample]:
    """One `gpu_xid` sample per Xid line (value: the code) and `gpu_xid_events`, the count."""
    if UNREADABLE_LOG in text:
        raise ToolError(TOOL, _("无法读取内核日志（dmesg 和 journalctl -k 都被拒绝）：未检查 Xid"))
    if text.strip() and _XID.search(text) is None and _KERNEL_LOG.search(text) is None:
        raise ParseError(TOOL, _("这看起来不是内核日志（没有时间戳，也没有 NVRM 行）"))
    samples = []
    for match in _XID.finditer(text):
        code = int(match["code"])
        metadata = {"pci.bus_id": match["bus"], "detail": match["detail"].strip()[:200]}
        if code in SERIOUS_XIDS:
            metadata["severity"] = SERIOUS_XIDS[code][0]
        samples.append(Sample("gpu_xid", float(code), "", metadata))
    samples.append(Sample("gpu_xid_events", float(len(samples)), "count", {}))
    return samples


def slowdowns(mask_text: str) -> list[tuple[str, str]]:
    """The power/heat slowdowns set in a clocks_throttle_reasons bit mask like 0x0000000000000048."""
    try:
        mask = int(mask_text, 16)
    except (TypeError, ValueError):
        return []
    return [names for bit, names in SLOWDOWN_BITS.items() if mask & bit]


@register_probe
class GpuHealthProbe(Probe):
    """The nvidia-smi health query, Xid events in the kernel log, `dcgmi diag -r 1` where DCGM is there."""

    name = "gpu_health"
    tool = "nvidia-smi"

    def tools(self, ctx: ProbeContext) -> dict[str, tuple[str, ...]]:
        """nvidia-smi on the target."""
        return {TARGET: ("nvidia-smi",)}

    def run(self, ctx: ProbeContext) -> None:
        """Three short commands; their outputs are parsed later."""
        query = ["nvidia-smi", f"--query-gpu={','.join(HEALTH_QUERY)}", "--format=csv"]
        result = ctx.execute(TARGET, "nvidia-smi health", query, timeout=60, parser="nvidia-smi")
        if result.exit_code != 0:
            raise ProbeFailed(
                _(
                    "%(what)s 以状态 %(code)s 退出：%(detail)s",
                    what="nvidia-smi",
                    code=result.exit_code,
                    detail=result.stderr.strip()[-200:],
                )
            )
        ctx.execute(TARGET, "kernel log (Xid)", ["sh", "-c", READ_KERNEL_LOG], timeout=60, parser=TOOL)
        ctx.execute(
            TARGET,
            "dcgmi diag",
            ["sh", "-c", dcgm.RUN_DIAG],
            timeout=dcgm.DIAG_TIMEOUT_S,
            parser=dcgm.TOOL,
            parse_args={"optional": True},
        )

    def estimated_seconds(self, params) -> float:
        """A few seconds (dcgmi diag -r 1 takes some more where DCGM is installed)."""
        return 10


# Outputs of this tool captured by hand and uploaded (the upload form, the API, `flask bench upload`).
register_upload(
    UploadTool(
        "nvidia-smi-health",
        "nvidia-smi",
        "gpu_health",
        (),
        f"nvidia-smi --query-gpu={','.join(HEALTH_QUERY)} --format=csv",
        order=70,
    )
)
register_upload(UploadTool("dmesg", TOOL, "gpu_health", (), "dmesg (or journalctl -k --no-pager)", order=80))
