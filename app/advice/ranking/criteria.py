"""The scored criteria: how each offer scores on cost, GPU, network, storage, latency and the provider."""

from __future__ import annotations

from app.advice.facts import SOURCE_LABELS
from app.advice.knowledge import assumptions
from app.advice.numbers import fmt
from app.advice.ranking.assessment import Assessment, Context, explanation
from app.advice.ranking.claims import effective_intranet
from app.advice.ranking.figures import (
    INTRANET_COLUMNS,
    INTRANET_MEASURES,
    STORAGE_MEASURES,
    bandwidth_kind,
    best,
    gpu_preference_rank,
    storage_figures,
    storage_kind,
)
from app.advice.ranking.registry import criterion
from app.advice.ranking.texts import BANDWIDTH_LABELS, cost_texts
from app.advice.reasons import Reason
from app.advice.requirements import storage_name


@criterion("cost", after=("budget",))
def _cost_score(a: Assessment, ctx: Context) -> float:
    cost = a.cost
    if cost is None or cost.value is None:
        return 0.0
    return (ctx.cheapest / cost.value) if ctx.cheapest and cost.value else 1.0


@explanation("cost")
def _cost_reason(a: Assessment, ctx: Context) -> Reason:
    cost = a.cost
    if cost is None or cost.value is None:
        return Reason("cost", "无报价（未核实）", "no price (unverified)")
    text_zh, text_en = cost_texts(cost, a.offer, ctx.needs)
    return Reason(
        "cost", f"每月约 {fmt(cost.value)} 元：{text_zh}", f"about CNY {fmt(cost.value)} a month: {text_en}"
    )


@criterion("gpu", columns=("gpu_model",))
def _gpu_score(a: Assessment, ctx: Context) -> float:
    needs = ctx.needs
    if not needs.gpu_models:
        return 1.0
    rank = gpu_preference_rank(needs, a.offer.gpu_model)
    if rank is None:
        return float(ctx.scoring["gpu_other_score"])
    return max(0.0, 1.0 - rank * float(ctx.scoring["gpu_rank_step"]))


@explanation("gpu")
def _gpu_reason(a: Assessment, ctx: Context) -> Reason:
    needs, offer = ctx.needs, a.offer
    if not needs.gpu_models:
        return Reason(
            "gpu", f"{offer.gpu_model}（未指定偏好型号）", f"{offer.gpu_model} (no preferred model given)"
        )
    rank = gpu_preference_rank(needs, offer.gpu_model)
    if rank is None:
        return Reason(
            "gpu",
            f"{offer.gpu_model} 不在偏好型号（{'、'.join(needs.gpu_models)}）中",
            f"{offer.gpu_model} is not among the preferred models ({', '.join(needs.gpu_models)})",
        )
    return Reason(
        "gpu",
        f"{offer.gpu_model} 是你的第 {rank + 1} 偏好",
        f"{offer.gpu_model} is your choice no. {rank + 1}",
    )


@criterion("intranet", columns=INTRANET_COLUMNS, measures=INTRANET_MEASURES)
def _intranet_score(a: Assessment, ctx: Context) -> float:
    needs = ctx.needs
    effective = a.effective_gbps = effective_intranet(a.offer, ctx)[2]
    if effective is None:
        return 0.0
    if needs.needed_effective_gbps:
        headroom = effective / needs.needed_effective_gbps
        return min(1.0, headroom / float(assumptions()["storage"]["headroom"]))
    return min(1.0, effective / 10)


@explanation("intranet")
def _intranet_reason(a: Assessment, ctx: Context) -> Reason:
    needs = ctx.needs
    source = effective_intranet(a.offer, ctx)[1]
    if a.effective_gbps is None:
        return Reason("intranet", "内网带宽未知（未核实）", "intranet bandwidth unknown (unverified)")
    zh, en = SOURCE_LABELS[source]
    if needs.needed_effective_gbps:
        headroom = a.effective_gbps / needs.needed_effective_gbps
        return Reason(
            "intranet",
            f"有效约 {fmt(a.effective_gbps)} Gbps（{zh}），为需求的 {fmt(headroom)} 倍，"
            f"同步一次约 {fmt(a.sync_s)} s",
            f"about {fmt(a.effective_gbps)} Gbps effective ({en}), {fmt(headroom)}× the need; one sync takes "
            f"about {fmt(a.sync_s)} s",
        )
    return Reason(
        "intranet",
        f"有效约 {fmt(a.effective_gbps)} Gbps（{zh}）",
        f"about {fmt(a.effective_gbps)} Gbps effective ({en})",
    )


@criterion("storage", columns=("storage_type", "nominal_iops"), measures=STORAGE_MEASURES)
def _storage_score(a: Assessment, ctx: Context) -> float:
    needs, offer = ctx.needs, a.offer
    parts = [needs.storage_fit.get(storage_kind(offer), 0.0)]
    (iops, _iops_source), (write, _write_source) = storage_figures(offer, ctx.typical_storage)
    headroom = float(assumptions()["storage"]["headroom"])
    if needs.read_iops and iops:
        parts.append(min(1.0, iops / needs.read_iops / headroom))
    if needs.checkpoint_write_mb_s and write:
        parts.append(min(1.0, write / needs.checkpoint_write_mb_s / headroom))
    return sum(parts) / len(parts)


@explanation("storage")
def _storage_reason(a: Assessment, ctx: Context) -> Reason:
    kind = storage_kind(a.offer)
    (iops, iops_source), (write, write_source) = storage_figures(a.offer, ctx.typical_storage)
    iops_zh, iops_en = SOURCE_LABELS[iops_source]
    write_zh, write_en = SOURCE_LABELS[write_source]
    name_zh, name_en = storage_name(kind, "zh"), storage_name(kind, "en")
    return Reason(
        "storage",
        f"{name_zh}，随机读 {fmt(iops)} IOPS（{iops_zh}），写入约 {fmt(write)} MB/s（{write_zh}）",
        f"{name_en}, {fmt(iops)} random-read IOPS ({iops_en}), about {fmt(write)} MB/s of writes "
        f"({write_en})",
    )


@criterion("latency", after=("latency",))
def _latency_score(a: Assessment, ctx: Context) -> float:
    needs = ctx.needs
    if a.city is None:
        return 0.0
    if a.user_rtt_ms and needs.network_budget_ms:
        return max(0.0, 1.0 - max(a.user_rtt_ms.values()) / needs.network_budget_ms)
    return max(0.0, 1.0 - (a.office_rtt_ms or 0.0) / 100)


@explanation("latency")
def _latency_reason(a: Assessment, ctx: Context) -> Reason:
    needs = ctx.needs
    if a.city is None:
        return Reason("latency", "机房位置未知（未核实）", "datacenter location unknown (unverified)")
    if a.user_rtt_ms and needs.network_budget_ms:
        listed = "、".join(f"{name} {fmt(ms)} ms" for name, ms in a.user_rtt_ms.items())
        listed_en = ", ".join(f"{name} {fmt(ms)} ms" for name, ms in a.user_rtt_ms.items())
        return Reason(
            "latency",
            f"机房在{a.city.name}，用户往返估算：{listed}（预算 {fmt(needs.network_budget_ms)} ms）",
            f"datacenter in {a.city.name}; estimated user round trips: {listed_en} "
            f"(budget {fmt(needs.network_budget_ms)} ms)",
        )
    rtt = a.office_rtt_ms or 0.0
    return Reason(
        "latency",
        f"机房在{a.city.name}，距{needs.office_city.name}办公室往返约 {fmt(rtt)} ms（估算）",
        f"datacenter in {a.city.name}; about {fmt(rtt)} ms round trip from the {needs.office_city.name} "
        "office (estimated)",
    )


@criterion("bandwidth", columns=("bandwidth_type",), measures=("bandwidth_type",))
def _bandwidth_score(a: Assessment, ctx: Context) -> float:
    return float(ctx.scoring["bandwidth_type_score"][bandwidth_kind(a.offer)])


@explanation("bandwidth")
def _bandwidth_reason(a: Assessment, ctx: Context) -> Reason:
    offer = a.offer
    label = BANDWIDTH_LABELS[bandwidth_kind(offer)]
    mbps, mbps_source = best(offer, "public_mbps", offer.public_mbps)
    zh, en = SOURCE_LABELS[mbps_source]
    return Reason(
        "bandwidth",
        f"公网 {fmt(mbps)} Mbps（{zh}），{label[0]}",
        f"public {fmt(mbps)} Mbps ({en}), {label[1]}",
    )


@criterion("compliance", columns=("provider.iso27001", "provider.dengbao_level"))
def _compliance_score(a: Assessment, ctx: Context) -> float:
    provider = a.offer.provider
    has_iso = 0.5 if provider.iso27001 else 0.0
    level = provider.dengbao_level or 0
    return has_iso + (0.5 if level >= 3 else (0.25 if level else 0.0))


@explanation("compliance")
def _compliance_reason(a: Assessment, ctx: Context) -> Reason:
    provider = a.offer.provider
    level = provider.dengbao_level or 0
    return Reason(
        "compliance",
        f"ISO 27001：{'有' if provider.iso27001 else '无记录'}；等保：{f'{level} 级' if level else '无记录'}",
        f"ISO 27001: {'yes' if provider.iso27001 else 'none on record'}; MLPS: "
        f"{f'level {level}' if level else 'none on record'}",
    )


@criterion("credentials", columns=("provider.credential_standing",))
def _credentials_score(a: Assessment, ctx: Context) -> float:
    provider = a.offer.provider
    settings = ctx.scoring["credentials"]
    if provider.check is None and not provider.findings:
        return float(settings["unchecked_score"])
    warnings = sum(1 for f in provider.findings if f.severity == "warning")
    return max(0.0, 1.0 - warnings * float(settings["warning_penalty"]))


@explanation("credentials")
def _credentials_reason(a: Assessment, ctx: Context) -> Reason:
    provider = a.offer.provider
    warnings = [f for f in provider.findings if f.severity == "warning"]
    if provider.check is None and not provider.findings:
        return Reason(
            "credentials",
            "尚无资质核查记录：许可证、备案等只是登记数据（未核实）",
            "no credential check on record: licences and filings are registry data only (unverified)",
        )
    if not warnings:
        return Reason("credentials", "资质核查未发现问题", "the credential check found no problems")
    listed = "；".join(f.message_zh for f in warnings[:3])
    listed_en = "; ".join(f.message_en for f in warnings[:3])
    return Reason(
        "credentials",
        f"资质核查有 {len(warnings)} 条警告：{listed}",
        f"the credential check raised {len(warnings)} warning(s): {listed_en}",
    )


TRANSPARENCY_VALUES = {True: 0.5, None: 0.25, False: 0.0}


@criterion("transparency", columns=("provider.discloses_network", "provider.discloses_storage"))
def _transparency_score(a: Assessment, ctx: Context) -> float:
    provider = a.offer.provider
    return TRANSPARENCY_VALUES[provider.discloses_network] + TRANSPARENCY_VALUES[provider.discloses_storage]


@explanation("transparency")
def _transparency_reason(a: Assessment, ctx: Context) -> Reason:
    provider = a.offer.provider
    words = {True: ("公开", "disclosed"), None: ("未知", "unknown"), False: ("拒绝说明", "refused")}
    return Reason(
        "transparency",
        f"网络拓扑：{words[provider.discloses_network][0]}；存储配置：{words[provider.discloses_storage][0]}",
        f"network topology: {words[provider.discloses_network][1]}; storage configuration: "
        f"{words[provider.discloses_storage][1]}",
    )
