"""The offer's hard constraints: what excludes an offer or flags it to measure or confirm first."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.advice import cities
from app.advice.answers import WorkloadKind
from app.advice.facts import ASSUMED, CLAIMED, ESTIMATED, SOURCE_LABELS, UNKNOWN, OfferFacts
from app.advice.numbers import fmt
from app.advice.offer_table import SOURCE_CODES, OfferTable, combine
from app.advice.ranking.assessment import Assessment, Context, RowVerdict
from app.advice.ranking.claims import effective_intranet, intranet_contradiction_rows
from app.advice.ranking.figures import (
    CLAIMED_CODE,
    INTRANET_COLUMNS,
    INTRANET_MEASURES,
    STORAGE_MEASURES,
    Figure,
    best,
    best_rows,
    datacenter_city,
    gpu_preference_rank,
    rtt_to,
    storage_figures,
    storage_kind,
)
from app.advice.ranking.registry import constraint
from app.advice.ranking.texts import (
    BANDWIDTH_TEXTS,
    checkpoint_texts,
    iops_texts,
    measure_first_texts,
    over_budget_texts,
    step_unknown_texts,
    too_slow_texts,
)
from app.advice.reasons import Reason, Texts
from app.advice.sizing import monthly_cost, shortest_step_seconds, sync_seconds


def _measured_or_claimed(offer: OfferFacts, key: str, claimed: Any) -> tuple[Any, str]:
    """The measured figure when the offer has measurements (best()), else the claim, even when missing."""
    return best(offer, key, claimed) if offer.measurements else (claimed, CLAIMED)


@constraint(
    "gpu", columns=("gpus_per_node", "gpu_model", "gpu_memory_gb"), measures=("gpu_count", "gpu_model")
)
def _gpu(a: Assessment, ctx: Context) -> None:
    needs, offer = ctx.needs, a.offer
    have, have_source = _measured_or_claimed(offer, "gpu_count", offer.gpus_per_node)
    want = needs.gpus_per_node
    if have < want:
        a.fail(
            ctx.shared(
                ("gpu.per_node", have),
                "gpu.per_node",
                lambda: (
                    f"每节点只有 {fmt(have)} 张 GPU（{SOURCE_LABELS[have_source][0]}），"
                    f"你需要每节点 {want} 张",
                    f"{fmt(have)} GPUs per node ({SOURCE_LABELS[have_source][1]}); you need {want} per node",
                ),
                have_source,
            )
        )
    model, model_source = _measured_or_claimed(offer, "gpu_model", offer.gpu_model)
    if needs.gpu_strict and needs.gpu_models and gpu_preference_rank(needs, model) is None:
        wanted = needs.gpu_models
        a.fail(
            ctx.shared(
                ("gpu.model", model),
                "gpu.model",
                lambda: (
                    f"GPU 型号 {model} 不在你限定的型号（{'、'.join(wanted)}）中",
                    f"GPU model {model} is not one of the required models ({', '.join(wanted)})",
                ),
                model_source,
            )
        )
    least = needs.min_gpu_memory_gb
    if least:
        memory = offer.gpu_memory_gb
        if memory is None:
            a.to_confirm(
                "gpu_memory_gb",
                ctx.shared_by_code(
                    "gpu.memory_unknown",
                    lambda: (
                        f"套餐未写明显存，无法确认是否达到 {least} GB",
                        f"the offer does not state GPU memory; cannot confirm {least} GB",
                    ),
                ),
            )
        elif memory < least:
            a.fail(
                ctx.shared(
                    ("gpu.memory", memory),
                    "gpu.memory",
                    lambda: (
                        f"每卡显存 {memory} GB，低于要求的 {least} GB",
                        f"{memory} GB per GPU, below the required {least} GB",
                    ),
                    CLAIMED,
                )
            )


def _intranet_rows(table: OfferTable, ctx: Context) -> RowVerdict:
    """_intranet for every offer: RDMA missing where required, intranet unknown, or too slow."""
    needs = ctx.needs
    if needs.allreduce_bytes is None or needs.kind != WorkloadKind.distributed_training:
        return RowVerdict()
    no_rdma = table.per_row("rdma_type", lambda kind: kind == "none", dtype=bool)
    rdma, rdma_source = best_rows(table, "rdma_gbps", table.numbers("rdma_gbps"))
    tcp, tcp_source = best_rows(table, "intranet_gbps", table.numbers("intranet_gbps"))
    use_rdma = ~no_rdma & ~np.isnan(rdma) & ~intranet_contradiction_rows(table, ctx)
    source = np.where(use_rdma, rdma_source, tcp_source)
    nominal = np.where(use_rdma, ctx.network["rdma"], ctx.network["tcp"])
    rated = (source == CLAIMED_CODE) | (source == SOURCE_CODES[ASSUMED])  # a line rate, not goodput
    effective = np.where(use_rdma, rdma, tcp) * np.where(rated, nominal, 1.0)
    failing = no_rdma if needs.rdma_required else np.zeros(table.size, dtype=bool)
    unknown = ~failing & np.isnan(effective)
    slow = np.zeros(table.size, dtype=bool)
    if needs.needed_effective_gbps is not None:
        slow = ~failing & ~unknown & (effective < needs.needed_effective_gbps)
    confirm = [("intranet_gbps", unknown)]
    if needs.step_unknown:
        confirm.append(("step_time", ~failing & ~unknown))
    return RowVerdict((failing | slow).astype(np.int64), tuple(confirm))


@constraint(
    "intranet",
    columns=INTRANET_COLUMNS,
    measures=INTRANET_MEASURES,
    sets=("effective_gbps", "sync_s"),
    rows=_intranet_rows,
)
def _intranet(a: Assessment, ctx: Context) -> None:
    needs, offer = ctx.needs, a.offer
    if needs.allreduce_bytes is None or needs.kind != WorkloadKind.distributed_training:
        return
    value, source, effective, transport = effective_intranet(offer, ctx)
    a.effective_gbps = effective
    if effective is not None:
        a.sync_s = sync_seconds(needs.allreduce_bytes, effective, 1.0)
    if needs.rdma_required and offer.rdma_type == "none":
        gbps = fmt(needs.needed_effective_gbps)
        a.fail(
            ctx.shared_by_code(
                "intranet.rdma",
                lambda: (
                    f"你的梯度同步需要约 {gbps} Gbps 有效带宽，须 RDMA，而该套餐没有 RDMA",
                    f"your gradient sync needs about {gbps} Gbps effective, which calls for RDMA; "
                    "this offer has none",
                ),
                CLAIMED,
            )
        )
        return
    if effective is None:
        a.to_confirm(
            "intranet_gbps",
            ctx.shared_by_code(
                "intranet.unknown",
                lambda: (
                    "套餐未写明节点间内网带宽，无法确认梯度同步是否来得及（须实测）",
                    "the offer does not state intranet bandwidth; "
                    "the gradient sync cannot be checked (measure it)",
                ),
            ),
        )
        return
    if needs.step_unknown:
        a.to_confirm("step_time", _step_unknown(ctx, value, source, effective, transport))
        return
    if needs.needed_effective_gbps is not None and effective < needs.needed_effective_gbps:
        a.exclude(
            "intranet.too_slow",
            too_slow_texts,
            source=source,
            key="rdma_gbps" if transport != "tcp" else "intranet_gbps",
            args=(needs, value, source, effective, transport, a.sync_s),
        )


def _step_unknown(ctx: Context, value: Any, source: str, effective: float, transport: str) -> Reason:
    """The 待确认 mark of an offer when the step time is not known: the shortest step it supports."""
    needs = ctx.needs
    traffic = needs.allreduce_bytes or 0.0
    sync = sync_seconds(traffic, effective, 1.0)
    shortest = shortest_step_seconds(traffic, effective, 1.0, needs.sync_share)
    args = (value, source, effective, transport, sync, shortest)
    return ctx.shared(
        ("intranet.step_unknown", *args), "intranet.step_unknown", lambda: step_unknown_texts(*args), source
    )


def _storage_rows(table: OfferTable, ctx: Context) -> RowVerdict:
    """_storage for every offer: type unknown, IOPS or write rate short (to measure first if only typical)."""
    needs = ctx.needs
    codes, first = combine([table.column("storage_type"), table.column("m:storage_type")], table.size)
    kinds = [storage_kind(table.offers[row]) for row in first.tolist()]
    confirm = (("storage_type", np.array([kind == "unknown" for kind in kinds], dtype=bool)[codes]),)
    if needs.read_iops is None and needs.checkpoint_write_mb_s is None:
        return RowVerdict(None, confirm)
    typical = [ctx.typical_storage.get(kind) for kind in kinds]
    excluded, verify = np.zeros(table.size, dtype=np.int64), []
    for key, need, claimed in (
        ("read_iops", needs.read_iops, table.numbers("nominal_iops")),
        ("write_mb_s", needs.checkpoint_write_mb_s, np.full(table.size, np.nan)),
    ):
        if need is None:
            continue
        name = "iops" if key == "read_iops" else key
        per_kind = np.array([found[name] if found else np.nan for found in typical], dtype=float)
        value, source = best_rows(table, key, claimed, per_kind[codes])
        short = ~np.isnan(value) & (value < need)
        assumed = source == SOURCE_CODES[ASSUMED]
        excluded += short & ~assumed
        verify.append((key, short & assumed))
    return RowVerdict(excluded, confirm, tuple(verify))


@constraint(
    "storage",
    columns=("storage_type", "nominal_iops", "storage_capacity_gb"),
    measures=STORAGE_MEASURES,
    rows=_storage_rows,
)
def _storage(a: Assessment, ctx: Context) -> None:
    needs, offer = ctx.needs, a.offer
    if storage_kind(offer) == "unknown":
        a.to_confirm(
            "storage_type",
            ctx.shared_by_code(
                "storage.unknown",
                lambda: (
                    "套餐未写明存储类型（本地盘还是云盘），须让服务商书面说明并实测",
                    "the offer does not say whether storage is local or network; "
                    "get it in writing and measure it",
                ),
            ),
        )
    if needs.read_iops is None and needs.checkpoint_write_mb_s is None:
        _capacity(a, ctx)
        return
    (iops, iops_source), (write, write_source) = storage_figures(offer, ctx.typical_storage)
    if needs.read_iops is not None and iops is not None and iops < needs.read_iops:
        _shortfall(a, "read_iops", "storage.iops", iops_texts, (needs, iops, iops_source), iops_source)
    if needs.checkpoint_write_mb_s is not None and write is not None and write < needs.checkpoint_write_mb_s:
        args = (needs, write, write_source)
        _shortfall(a, "write_mb_s", "storage.checkpoint", checkpoint_texts, args, write_source)
    _capacity(a, ctx)


def _shortfall(a: Assessment, key: str, code: str, texts: Texts, args: tuple[Any, ...], source: str) -> None:
    """A storage figure below the need excludes, unless it is only a typical value (then: measure first)."""
    if source == ASSUMED:
        a.measure_first(key, Reason(f"verify.{key}", measure_first_texts, None, ASSUMED, args=(texts, *args)))
    else:
        a.exclude(code, texts, source=source, key=key, args=args)


def _capacity(a: Assessment, ctx: Context) -> None:
    capacity, dataset = a.offer.storage_capacity_gb, ctx.needs.dataset_gb
    if dataset and capacity is not None and capacity < dataset:
        a.note(
            ctx.shared(
                ("storage.capacity", capacity),
                "storage.capacity",
                lambda: (
                    f"本地存储 {fmt(capacity)} GB 放不下 {fmt(dataset)} GB 数据集，需另配共享存储做中转",
                    f"{fmt(capacity)} GB of storage cannot hold the {fmt(dataset)} GB dataset; plan shared "
                    "storage as a staging area",
                ),
            )
        )


@constraint("bandwidth", columns=("bandwidth_type",), measures=("bandwidth_type",))
def _bandwidth(a: Assessment, ctx: Context) -> None:
    offer = a.offer
    claimed = None if offer.bandwidth_type == "unknown" else offer.bandwidth_type
    kind, source = best(offer, "bandwidth_type", claimed)
    if not ctx.needs.dedicated_bandwidth:
        if kind == "shared":
            zh, en = BANDWIDTH_TEXTS["bandwidth.shared_ok"]
            a.note(ctx.shared(("bandwidth.shared_ok",), "bandwidth.shared", lambda: (zh, en)))
        return
    if kind == "shared":
        zh, en = BANDWIDTH_TEXTS["bandwidth.shared"]
        a.fail(ctx.shared_by_code("bandwidth.shared", lambda: (zh, en), source))
    elif kind is None:
        zh, en = BANDWIDTH_TEXTS["bandwidth.unknown"]
        a.to_confirm("bandwidth_type", ctx.shared_by_code("bandwidth.unknown", lambda: (zh, en)))


@constraint("residency", columns=("datacenter_province",))
def _residency(a: Assessment, ctx: Context) -> None:
    """Where the data must stay: an offer whose datacenter is in another province is excluded; one with no
    datacenter province on record is to confirm (every registered province is in mainland China)."""
    needs, province = ctx.needs, a.offer.datacenter_province
    if needs.residency == "none":
        return
    if not province:
        a.to_confirm(
            "datacenter_province",
            ctx.shared_by_code(
                "residency.unknown",
                lambda: (
                    "待确认：套餐未登记机房省份，无法确认数据是否留在你要求的地区",
                    "to confirm: the offer records no datacenter province, so where the data stays cannot be "
                    "checked",
                ),
                UNKNOWN,
            ),
        )
        return
    wanted = needs.residency_province
    if needs.residency == "province" and province != wanted:
        a.fail(
            ctx.shared(
                ("residency.province", province),
                "residency.province",
                lambda: (
                    f"机房在{province}，而你要求数据留在{wanted}",
                    f"the datacenter is in {province}; your data must stay in {wanted}",
                ),
                CLAIMED,
            )
        )


@dataclass(slots=True)
class Place:
    """Where a datacenter is and how far its users are (shared by every offer in that city)."""

    city: cities.City | None
    office_rtt_ms: float | None = None
    user_rtt_ms: dict[str, float] = field(default_factory=dict)
    figure: Figure | None = None
    excluded: list[Reason] = field(default_factory=list)
    marks: list[Reason] = field(default_factory=list)
    verify: Reason | None = None
    confirm: Reason | None = None


def _place(offer: OfferFacts, ctx: Context) -> Place:
    needs = ctx.needs
    city, fallback = datacenter_city(offer)
    place = Place(city)
    if city is None:
        place.marks.append(
            Reason(
                "latency.no_city",
                "套餐未关联机房城市，无法估算时延",
                "the offer has no datacenter city, so latency cannot be estimated",
            )
        )
        if needs.kind == WorkloadKind.interactive_inference:
            place.confirm = Reason(
                "confirm.datacenter_city",
                "待确认：交互式推理须知道机房位置才能判断时延，请向服务商问清机房所在城市",
                "to confirm: interactive inference needs the datacenter location to judge latency; ask the "
                "provider which city it is in",
                UNKNOWN,
            )
        return place
    if fallback:
        written = offer.datacenter_city
        place.marks.append(
            Reason(
                "latency.city_fallback",
                f"机房城市“{written or '未填写'}”不在城市表中，时延按省会{city.name}估算",
                f"datacenter city {written or '(none)'!r} is not in the city table; latency is estimated "
                f"from the provincial capital {city.name}",
            )
        )
    place.office_rtt_ms = rtt_to(needs.office_city, city)
    place.user_rtt_ms = {user.name: rtt_to(user, city) for user in needs.user_cities}
    worst = max(place.user_rtt_ms.values()) if place.user_rtt_ms else place.office_rtt_ms
    place.figure = Figure("rtt_ms", worst, "ms", ESTIMATED, None, city.name)
    if needs.network_budget_ms is None or not place.user_rtt_ms:
        return place
    worst_city = max(place.user_rtt_ms, key=lambda name: place.user_rtt_ms[name])
    budget = needs.network_budget_ms
    if worst > budget * (1 + ctx.evidence["estimate_exclude_margin"]):
        place.excluded.append(
            Reason(
                "latency.budget",
                f"机房在{city.name}，{worst_city}的用户往返约 {fmt(worst)} ms（估算），"
                f"远超留给网络的 {fmt(budget)} ms",
                f"the datacenter is in {city.name}; users in {worst_city} would see about {fmt(worst)} ms "
                f"round trip (estimated), far over the {fmt(budget)} ms left for the network",
                ESTIMATED,
            )
        )
    elif worst > budget:
        place.verify = Reason(
            "verify.rtt_ms",
            f"先实测再签约：{worst_city}的用户往返估算约 {fmt(worst)} ms，略超 {fmt(budget)} ms 的预算，"
            "估算不足以排除，请实测",
            f"measure before signing: users in {worst_city} are estimated at about {fmt(worst)} ms round "
            f"trip, a little over the {fmt(budget)} ms budget; an estimate is not enough to exclude, so "
            "measure it",
            ESTIMATED,
        )
    return place


@constraint(
    "latency",
    columns=("datacenter_city", "datacenter_province"),
    sets=("city", "office_rtt_ms", "user_rtt_ms", "rtt_figure"),
)
def _latency(a: Assessment, ctx: Context) -> None:
    place = _place(a.offer, ctx)
    a.city = place.city
    a.office_rtt_ms = place.office_rtt_ms
    a.user_rtt_ms = place.user_rtt_ms
    a.rtt_figure = place.figure
    a.excluded += tuple(place.excluded)
    a.marks += tuple(place.marks)
    if place.verify is not None:
        a.measure_first("rtt_ms", place.verify)
    if place.confirm is not None:
        a.to_confirm("datacenter_city", place.confirm)


@constraint("budget", columns=("price_month_cny", "price_gpu_hour_cny", "gpus_per_node"), sets=("cost",))
def _budget(a: Assessment, ctx: Context) -> None:
    needs, offer = ctx.needs, a.offer
    cost = a.cost = monthly_cost(
        price_month_cny=offer.price_month_cny,
        price_gpu_hour_cny=offer.price_gpu_hour_cny,
        gpus_per_node=offer.gpus_per_node,
        nodes=needs.nodes,
        hours_per_month=needs.hours_per_month,
    )
    value = cost.value
    if value is None:
        a.to_confirm(
            "price",
            ctx.shared_by_code(
                "cost.unknown",
                lambda: ("套餐没有报价，无法核算成本", "the offer has no price; cost cannot be worked out"),
            ),
        )
        return
    budget = needs.budget_cny
    if budget is not None and value > budget:
        a.exclude("cost.budget", over_budget_texts, source=CLAIMED, args=(value, budget))
