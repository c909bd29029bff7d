"""The sentences of the ranking: why an offer is excluded, flagged or scored lower, in Chinese and English."""

from __future__ import annotations

from typing import Any

from app.advice import sizing
from app.advice.facts import SOURCE_LABELS, UNKNOWN, Measurement, OfferFacts
from app.advice.numbers import fmt
from app.advice.reasons import Reason, Texts
from app.advice.requirements import Needs
from app.advice.sizing import MonthlyCost


def cost_texts(cost: MonthlyCost, offer: OfferFacts, needs: Needs) -> tuple[str, str]:
    parts_zh, parts_en = [], []
    if cost.by_month is not None:
        parts_zh.append(
            f"月价 {fmt(offer.price_month_cny)} 元 × {needs.nodes} 节点 = {fmt(cost.by_month)} 元"
        )
        parts_en.append(
            f"monthly price CNY {fmt(offer.price_month_cny)} × {needs.nodes} nodes = {fmt(cost.by_month)}"
        )
    if cost.by_gpu_hour is not None:
        parts_zh.append(
            f"{fmt(offer.price_gpu_hour_cny)} 元/卡·时 × {offer.gpus_per_node} 卡 "
            f"× {fmt(needs.hours_per_month)} h × "
            f"{needs.nodes} 节点 = {fmt(cost.by_gpu_hour)} 元"
        )
        parts_en.append(
            f"CNY {fmt(offer.price_gpu_hour_cny)}/GPU-h × {offer.gpus_per_node} GPUs "
            f"× {fmt(needs.hours_per_month)} h "
            f"× {needs.nodes} nodes = {fmt(cost.by_gpu_hour)}"
        )
    basis_zh = {"month": "按月价", "gpu_hour": "按卡时价", "unknown": "无报价"}[cost.basis]
    basis_en = {"month": "monthly price", "gpu_hour": "GPU-hour price", "unknown": "no price"}[cost.basis]
    return f"{'；'.join(parts_zh)}（取{basis_zh}）", f"{'; '.join(parts_en)} (using the {basis_en})"


# What is not on record, per fact to confirm with the provider (the question to ask is in checklist.yaml).
CONFIRM_TEXTS = {
    "iso27001": (
        "登记中没有该供应商的 ISO 27001 记录",
        "the registry holds no ISO 27001 record for this provider",
    ),
    "dengbao": ("登记中没有该供应商的等保记录", "the registry holds no MLPS record for this provider"),
}


def unrecorded(key: str, zh: str, en: str) -> Reason:
    """The 待确认 mark of a fact nobody recorded: not a failure, a question for the provider."""
    return Reason(
        f"confirm.{key}", f"待确认：{zh}，请向服务商索取", f"to confirm: {en}; ask the provider", UNKNOWN
    )


TRANSPORT_NAMES = {"tcp": "TCP", "roce": "RoCE", "infiniband": "InfiniBand"}  # as the reasons write them


def too_slow_texts(
    needs: Needs, value: float, source: str, effective: float, transport: str, sync: float | None
) -> tuple[str, str]:
    zh, en = SOURCE_LABELS[source]
    transport = TRANSPORT_NAMES.get(transport, transport)
    return (
        f"内网 {fmt(value)} Gbps（{zh}，{transport}）有效约 {fmt(effective)} Gbps，同步一次约 {fmt(sync)} s，"
        f"超出你允许的 {fmt(needs.sync_budget_s)} s；需要 {fmt(needs.needed_effective_gbps)} Gbps",
        f"intranet {fmt(value)} Gbps ({en}, {transport}) gives about {fmt(effective)} Gbps effective; "
        f"one sync takes {fmt(sync)} s, over your {fmt(needs.sync_budget_s)} s; "
        f"{fmt(needs.needed_effective_gbps)} Gbps is needed",
    )


def step_unknown_texts(
    value: float, source: str, effective: float, transport: str, sync: float, shortest: float
) -> tuple[str, str]:
    """The step time is not known: the shortest step the offer's intranet supports, and what would decide."""
    zh, en = SOURCE_LABELS[source]
    transport = TRANSPORT_NAMES.get(transport, transport)
    return (
        f"待确认：内网 {fmt(value)} Gbps（{zh}，{transport}）有效约 {fmt(effective)} Gbps，同步一次约 "
        f"{fmt(sync)} s，步长 {fmt(shortest)} s 及以上够用；你的目标步长若短于 {fmt(shortest)} s，"
        "这个套餐会因内网太慢被排除。在“模型与步长”一步填上目标步长即可定论",
        f"to confirm: intranet {fmt(value)} Gbps ({en}, {transport}) gives about {fmt(effective)} Gbps "
        f"effective and one sync takes about {fmt(sync)} s: fine for steps of {fmt(shortest)} s or longer. "
        f"A target step shorter than {fmt(shortest)} s would exclude this offer (intranet too slow); "
        "answer the step time in the model step to settle it",
    )


def checkpoint_texts(needs: Needs, write: float, source: str) -> tuple[str, str]:
    stall = sizing.checkpoint_stall_seconds(needs.checkpoint_gb or 0, write)
    zh, en = SOURCE_LABELS[source]
    return (
        f"写入约 {fmt(write)} MB/s（{zh}），保存一次 {fmt(needs.checkpoint_gb)} GB 检查点要停顿约 "
        f"{fmt(stall)} s，需要 {fmt(needs.checkpoint_write_mb_s)} MB/s",
        f"about {fmt(write)} MB/s of writes ({en}) stalls training for about {fmt(stall)} s per "
        f"{fmt(needs.checkpoint_gb)} GB checkpoint; {fmt(needs.checkpoint_write_mb_s)} MB/s is needed",
    )


def measure_first_texts(texts: Texts, *args: Any) -> tuple[str, str]:
    """The texts of a shortfall that rests on a typical value only: keep the offer, measure first."""
    zh, en = texts(*args)
    return f"先实测再签约：{zh}", f"measure before signing: {en}"


def iops_texts(needs: Needs, iops: float, source: str) -> tuple[str, str]:
    zh, en = SOURCE_LABELS[source]
    return (
        f"随机读 {fmt(iops)} IOPS（{zh}）低于数据加载需要的 {fmt(needs.read_iops)} IOPS",
        f"{fmt(iops)} random-read IOPS ({en}) is below the {fmt(needs.read_iops)} IOPS the loader needs",
    )


BANDWIDTH_TEXTS = {
    "bandwidth.shared_ok": (
        "公网带宽为共享，晚高峰可能被挤占；偶尔上传少量数据尚可",
        "public bandwidth is shared and may collapse at evening peaks; fine for occasional small uploads",
    ),
    "bandwidth.shared": (
        "公网带宽为共享，而你的场景要求独享带宽（共享带宽在晚高峰可能掉到零头）",
        "public bandwidth is shared, but your case needs dedicated bandwidth (shared links can drop to a "
        "fraction at evening peaks)",
    ),
    "bandwidth.unknown": (
        "套餐未说明带宽是独享还是共享，须书面确认并在不同时段实测",
        "the offer does not say whether bandwidth is dedicated or shared; confirm in writing and measure at "
        "different times of day",
    ),
}


def over_budget_texts(value: float, budget: float) -> tuple[str, str]:
    return (
        f"每月约 {fmt(value)} 元，超出预算 {fmt(budget)} 元",
        f"about CNY {fmt(value)} a month, over the CNY {fmt(budget)} budget",
    )


def contradicted_texts(rdma: float, measured: float, claimed: float, ratio: float) -> tuple[str, str]:
    return (
        f"RDMA {fmt(rdma)} Gbps：服务商声称，已被其他实测否定：签约前请实测 RDMA"
        f"（内网实测 {fmt(measured)} Gbps，只有声称 {fmt(claimed)} Gbps 的 {ratio:.0%}；该声称不计分）",
        f"RDMA {fmt(rdma)} Gbps: claimed, contradicted elsewhere: measure RDMA before signing "
        f"(measured intranet {fmt(measured)} Gbps is only {ratio:.0%} of the claimed {fmt(claimed)} Gbps; "
        "the claim does not score)",
    )


def stale_texts(keys: list[str], oldest: Any, days: int) -> tuple[str, str]:
    listed = ", ".join(keys)
    return (
        f"实测数据已过期（最早于 {oldest:%Y-%m-%d} 测得，超过 {days} 天）：{listed}；"
        "评分按较低权重计，签约前请重测",
        f"stale measurements (the oldest taken on {oldest:%Y-%m-%d}, over {days} days ago): {listed}; "
        "they weigh less in the score, measure again before signing",
    )


def below_claim_texts(measured: Measurement, claimed: float, ratio: float, verdict: str) -> tuple[str, str]:
    level_zh, level_en = {"warn": ("偏低", "below par"), "fail": ("不合格", "a failure")}[verdict]
    run_zh = f"（测试 #{measured.run_id}）" if measured.run_id else ""
    run_en = f" (run #{measured.run_id})" if measured.run_id else ""
    return (
        f"实测 {fmt(measured.value)} {measured.unit}，只有声称 {fmt(claimed)} {measured.unit} 的 "
        f"{ratio:.0%}{run_zh}，{level_zh}：得分相应降低",
        f"measured {fmt(measured.value)} {measured.unit}, only {ratio:.0%} of the claimed {fmt(claimed)} "
        f"{measured.unit}{run_en}, which is {level_en}: the score is lowered",
    )


def stale_reason(reason: Reason) -> Reason:
    """The criterion's explanation, saying that it rests on a stale measurement."""
    return Reason(
        reason.code,
        lambda: (
            f"{reason.zh}（实测已过期，按较低权重计）",
            f"{reason.en} (stale measurement, weighted less)",
        ),
    )


BANDWIDTH_LABELS = {
    "dedicated": ("独享", "dedicated"),
    "shared": ("共享", "shared"),
    "unknown": ("未说明", "not stated"),
}
