"""Red flag 12 from peak-hour campaigns: throughput at the evening peak far below the off-peak figure.

Reads the "peak_campaigns" fact (app.trials.campaigns): the latest finished campaign of each trial
server with its stored verdict (benchmarks.yaml peak_min_share). Texts live in app/knowledge/sources.yaml.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.vetting.findings import Finding, RuleContext, Severity, rule
from app.vetting.rules._sources import texts

RULE_ID = "benchmarks.sags_at_peak"


def _campaigns(context: RuleContext) -> list[dict[str, Any]]:
    return (context.facts.get("peak_campaigns") or {}).get("campaigns", [])


def _finding(campaign: dict[str, Any]) -> Finding:
    result = campaign["result"]
    demo_zh, demo_en = ("（演示数据）", " (demo data)") if campaign.get("origin") == "demo" else ("", "")
    where_zh = f"试用服务器“{campaign['trial_server']}”的高峰测试 #{campaign['campaign_id']}{demo_zh}"
    where_en = (
        f"Peak-hour campaign #{campaign['campaign_id']} on trial server '{campaign['trial_server']}'{demo_en}"
    )
    spec = texts()["rules"][RULE_ID]
    peak, offpeak = result.get("peak") or {}, result.get("offpeak") or {}
    evidence = {
        "kind": "peak_campaign",
        "campaign_id": campaign["campaign_id"],
        "origin": campaign.get("origin") or "executed",
        "peak_window": campaign.get("peak_window"),
        "offpeak_window": campaign.get("offpeak_window"),
        "peak_median": peak.get("median"),
        "offpeak_median": offpeak.get("median"),
        "share": result.get("share"),
        "threshold": result.get("threshold"),
    }
    return Finding(
        rule_id=RULE_ID,
        severity=Severity(str(spec["severity"])),
        message_zh=spec["message_zh"].format(where=where_zh, reason=result["reason_zh"]),
        message_en=spec["message_en"].format(where=where_en, reason=result["reason_en"]),
        how_to_verify_zh=spec["verify_zh"],
        how_to_verify_en=spec["verify_en"],
        subject=f"trial_server:{campaign['trial_server_id']}",
        evidence=(evidence,),
    )


@rule(RULE_ID, title_zh="晚高峰带宽明显下降", title_en="Bandwidth sags at the evening peak", red_flag=12)
def sags_at_peak(context: RuleContext) -> Iterator[Finding]:
    """A finished campaign whose peak median fell below peak_min_share of its off-peak median."""
    for campaign in _campaigns(context):
        if (campaign.get("result") or {}).get("verdict") == "fail":
            yield _finding(campaign)
