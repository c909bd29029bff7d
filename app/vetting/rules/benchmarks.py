"""Benchmark findings: trial-server measurements or uploaded outputs that contradict the offer.

Reads the "benchmarks" fact (app.trials.bench_runs): the latest finished run of each trial server, the
latest uploads and the runs that count for an offer's figures, with the claims-versus-measurements
comparisons benchmarks.compare stored on them; a comparison about a figure another run counts for is left
out (app.trials.measurements), so a finding rests on the run the ranking and the report cite.
A comparison that failed becomes a finding here: red flag 12 (shared bandwidth, storage not local NVMe,
bandwidth far below the claim), IOPS or fsync'd writes far below the claim, GPUs that do not match.
Texts and severities live in app/knowledge/sources.yaml; a finding from uploaded output weighs at most
vetting.yaml benchmarks.uploaded_max_severity.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.vetting.findings import Finding, RuleCheck, RuleContext, Severity, rule
from app.vetting.rules._sources import texts

SEVERITY_RANK = {Severity.info.value: 0, Severity.warning.value: 1, Severity.blocker.value: 2}


def _runs(context: RuleContext) -> list[dict[str, Any]]:
    return (context.facts.get("benchmarks") or {}).get("runs", [])


def _failed(context: RuleContext, *checks: str, red_flag: int | None = None) -> Iterator[tuple[dict, dict]]:
    """(run, comparison) of every failed comparison of `checks` (and of `red_flag`, when given)."""
    for run in _runs(context):
        for comparison in run.get("comparisons", []):
            if comparison.get("check") not in checks or comparison.get("verdict") != "fail":
                continue
            if red_flag is None or comparison.get("red_flag") == red_flag:
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


def _severity(context: RuleContext, rule_id: str, run: dict[str, Any]) -> str:
    """The rule's severity, capped for uploaded output (gpuvet did not run those commands)."""
    severity = str(texts()["rules"][rule_id]["severity"])
    if run.get("origin") != "uploaded":
        return severity
    cap = (context.knowledge.get("benchmarks") or {}).get("uploaded_max_severity", Severity.warning.value)
    return min(severity, cap, key=SEVERITY_RANK.__getitem__)


def _finding(context: RuleContext, rule_id: str, run: dict[str, Any], comparison: dict[str, Any]) -> Finding:
    where_zh, where_en, subject = _where(run)
    evidence = {
        "kind": "benchmark",
        "run_id": run["run_id"],
        "origin": run.get("origin") or "executed",
        "offer_id": run.get("offer_id"),
        "check": comparison["check"],
        "verdict": comparison.get("verdict"),
        "measured": comparison.get("measured"),
        "claimed": comparison.get("claimed"),
        "ratio": comparison.get("ratio"),
        "unit": comparison.get("unit"),
        **(comparison.get("evidence") or {}),
    }
    spec = texts()["rules"][rule_id]
    return Finding(
        rule_id=rule_id,
        severity=Severity(_severity(context, rule_id, run)),
        message_zh=spec["message_zh"].format(where=where_zh, reason=comparison["reason_zh"]),
        message_en=spec["message_en"].format(where=where_en, reason=comparison["reason_en"]),
        how_to_verify_zh=spec["verify_zh"],
        how_to_verify_en=spec["verify_en"],
        subject=subject,
        evidence=(evidence,),
    )


def _failed_rule(
    rule_id: str, title_zh: str, title_en: str, *checks: str, red_flag: int | None = None
) -> RuleCheck:
    """Register rule `rule_id`: a finding per failed comparison of `checks` (of `red_flag`, when given)."""

    def check(context: RuleContext) -> Iterator[Finding]:
        for run, comparison in _failed(context, *checks, red_flag=red_flag):
            yield _finding(context, rule_id, run, comparison)

    return rule(rule_id, title_zh=title_zh, title_en=title_en, red_flag=red_flag)(check)


def _bandwidth_path(comparison: dict[str, Any]) -> Any:
    """The path a throughput comparison measured (older runs stored no path: the nominal tells it apart)."""
    return (comparison.get("evidence") or {}).get("path") or comparison.get("claimed")


# Repeated throughput swings (high CV or a low minimum) on an offer claiming dedicated bandwidth.
shared_bandwidth = _failed_rule(
    "benchmarks.shared_bandwidth",
    "宣称独享带宽，实测表现为共享",
    "Bandwidth claimed dedicated behaves like shared",
    "stability",
    red_flag=12,
)


# The data directory is not on a local NVMe disk although the offer claims so.
storage_not_nvme = _failed_rule(
    "benchmarks.storage_not_nvme",
    "宣称本地 NVMe，实测为虚拟盘或网络存储",
    "Storage claimed local NVMe is virtual or network storage",
    "storage_type",
    red_flag=12,
)


@rule(
    "benchmarks.bandwidth_below_claim",
    title_zh="实测带宽远低于标称",
    title_en="Measured bandwidth far below the nominal",
    red_flag=12,
)
def bandwidth_below_claim(context: RuleContext) -> Iterator[Finding]:
    """The best throughput test of a path in one run failed (below bandwidth_warn of the nominal)."""
    for run in _runs(context):
        best: dict[Any, dict[str, Any]] = {}
        for comparison in run.get("comparisons", []):
            if comparison.get("check") != "bandwidth" or comparison.get("ratio") is None:
                continue
            path = _bandwidth_path(comparison)
            if path not in best or comparison["ratio"] > best[path]["ratio"]:
                best[path] = comparison
        for comparison in best.values():
            if comparison.get("verdict") == "fail":
                yield _finding(context, "benchmarks.bandwidth_below_claim", run, comparison)


# 4k random-read IOPS below iops_warn of the offer's nominal IOPS.
iops_below_claim = _failed_rule(
    "benchmarks.iops_below_claim", "实测 IOPS 远低于标称", "Measured IOPS far below the nominal", "iops"
)


# Checkpoint writes below write_warn of the usual floor of the claimed storage type.
write_below_claim = _failed_rule(
    "benchmarks.write_below_claim",
    "含 fsync 的写入速度远低于所称存储的常见水平",
    "fsync'd write rate far below what the claimed storage sustains",
    "write_rate",
)


# The run found another GPU count (0 included) or model than the offer claims.
gpu_mismatch = _failed_rule(
    "benchmarks.gpu_mismatch",
    "GPU 数量或型号与报价不符",
    "GPU count or model differs from the offer",
    "gpu_count",
    "gpu_model",
)
