"""Red flag 12: trial-server measurements contradict the offer (shared bandwidth, storage not local NVMe).

Reads the "benchmarks" fact (app.services.bench_runs): the latest finished run of each trial server with
its claims-versus-measurements comparisons. A comparison that benchmarks.compare marked red_flag 12 with
verdict fail becomes a finding here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.vetting.findings import Finding, RuleContext, Severity, rule

# comparison check -> how a person confirms it
VERIFY = {
    "stability": (
        "在不同时段（含晚高峰）重复带宽测试；要求供应商书面说明带宽是否独享、上联及收敛比。",
        "Repeat the throughput test at different times (including the evening peak); ask the provider "
        "to state in writing whether the bandwidth is dedicated, and the uplink and oversubscription ratio.",
    ),
    "storage_type": (
        "在服务器上运行 lsblk -d -o NAME,TRAN,MODEL 与 findmnt -T 数据目录，要求供应商说明数据盘类型与位置。",
        "Run lsblk -d -o NAME,TRAN,MODEL and findmnt -T on the data directory, and ask the provider which "
        "disk the data lives on and where.",
    ),
}


def _red_flags(context: RuleContext, check: str) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    fact = context.facts.get("benchmarks") or {}
    for run in fact.get("runs", []):
        for comparison in run.get("comparisons", []):
            flagged = comparison.get("red_flag") == 12 and comparison.get("verdict") == "fail"
            if flagged and comparison.get("check") == check:
                yield run, comparison


def _where(run: dict[str, Any]) -> tuple[str, str, str]:
    """Where the measurement came from (zh, en, subject): a trial server, or output an analyst uploaded."""
    if run.get("origin") == "uploaded":
        who, tool = run.get("uploaded_by") or "?", run.get("tool") or ""
        return (
            f"{who} 上传的 {tool} 输出（测试 #{run['run_id']}，未经 gpuvet 执行）",
            f"{tool} output uploaded by {who} (run #{run['run_id']}, not executed by gpuvet)",
            f"bench_run:{run['run_id']}",
        )
    return (
        f"试用服务器“{run['trial_server']}”（测试 #{run['run_id']}）",
        f"Trial server '{run['trial_server']}' (run #{run['run_id']})",
        f"trial_server:{run['trial_server_id']}",
    )


def _finding(rule_id: str, run: dict[str, Any], comparison: dict[str, Any]) -> Finding:
    verify_zh, verify_en = VERIFY[comparison["check"]]
    where_zh, where_en, subject = _where(run)
    return Finding(
        rule_id=rule_id,
        severity=Severity.warning,
        message_zh=f"{where_zh}：{comparison['reason_zh']}",
        message_en=f"{where_en}: {comparison['reason_en']}",
        how_to_verify_zh=verify_zh,
        how_to_verify_en=verify_en,
        subject=subject,
        evidence=(
            {
                "kind": "benchmark",
                "run_id": run["run_id"],
                "offer_id": run.get("offer_id"),
                "check": comparison["check"],
                "measured": comparison.get("measured"),
                "claimed": comparison.get("claimed"),
                **(comparison.get("evidence") or {}),
            },
        ),
    )


@rule(
    "benchmarks.shared_bandwidth",
    title_zh="宣称独享带宽，实测表现为共享",
    title_en="Bandwidth claimed dedicated behaves like shared",
    red_flag=12,
)
def shared_bandwidth(context: RuleContext) -> Iterator[Finding]:
    """Repeated throughput swings (high CV or a low minimum) on an offer claiming dedicated bandwidth."""
    for run, comparison in _red_flags(context, "stability"):
        yield _finding("benchmarks.shared_bandwidth", run, comparison)


@rule(
    "benchmarks.storage_not_nvme",
    title_zh="宣称本地 NVMe，实测为虚拟盘或网络存储",
    title_en="Storage claimed local NVMe is virtual or network storage",
    red_flag=12,
)
def storage_not_nvme(context: RuleContext) -> Iterator[Finding]:
    """The data directory is not on a local NVMe disk although the offer claims so."""
    for run, comparison in _red_flags(context, "storage_type"):
        yield _finding("benchmarks.storage_not_nvme", run, comparison)
