"""Price per useful GPU-hour: a quoted price divided by the share of each hour the GPUs compute, not wait.

The GPUs wait for the gradient sync of every step (at the offer's intranet bandwidth) and for every checkpoint
write (at its write rate). Hours per month are the case's own `budget.hours_per_month` (720 unless the buyer
says otherwise), the figure the sizing already turns a monthly budget into a price per GPU-hour with; not 730.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from app.advice import sizing
from app.advice.answers import Answers, WorkloadKind
from app.advice.facts import ASSUMED, CLAIMED, MEASURED, SOURCE_LABELS
from app.advice.numbers import fmt
from app.advice.reasons import Reason
from app.advice.requirements import Needs, network_constants

# The sizing gives the gradient sync its own slice of the step (requirements._network: sync budget = target
# step x sync share) instead of overlapping it with the backward pass, so no part of the sync is hidden here.
SYNC_HIDDEN_SHARE = 0.0
SECONDS_PER_HOUR = 3600
MINUTES_PER_HOUR = 60


@dataclass(frozen=True)
class Workload:
    """The case's sizing inputs that decide how long its GPUs wait."""

    gpus: int
    hours_per_month: float
    allreduce_bytes: float | None = None  # each node's ring all-reduce traffic per step; None: no sync
    step_seconds: float | None = None  # the target step: compute plus the sync budget
    sync_share: float = 0.3  # share of the target step the sizing leaves to the sync
    checkpoint_gb: float | None = None
    checkpoint_interval_minutes: float | None = None

    @classmethod
    def of_case(cls, answers: Answers, needs: Needs) -> Workload:
        """The inputs as a case's answers and worked-out needs give them."""
        syncs = needs.kind == WorkloadKind.distributed_training
        checkpoint = answers.checkpoint
        return cls(
            gpus=needs.nodes * needs.gpus_per_node,
            hours_per_month=needs.hours_per_month,
            allreduce_bytes=needs.allreduce_bytes if syncs else None,
            step_seconds=answers.model.target_step_seconds,
            sync_share=answers.model.sync_share,
            checkpoint_gb=checkpoint.size_gb if answers.trains else None,
            checkpoint_interval_minutes=checkpoint.interval_minutes if answers.trains else None,
        )


@dataclass(frozen=True)
class Figure:
    """An offer's figure and where it came from: facts.MEASURED where a run exists, else CLAIMED."""

    value: float | None
    source: str = CLAIMED

    @property
    def measured(self) -> bool:
        """Whether a benchmark run measured it."""
        return self.source == MEASURED


@dataclass(frozen=True)
class Price:
    """A quoted price per GPU-hour, per month for `month_gpus` GPUs (None: all the case's GPUs), or both."""

    gpu_hour_cny: float | None = None
    month_cny: float | None = None
    month_gpus: int | None = None


@dataclass(frozen=True)
class UsefulHours:
    """Every figure from the quoted price to the price per useful GPU-hour, and the sentences showing them."""

    price_basis: str  # "gpu_hour": the quoted price per GPU-hour; "month": worked out from the monthly price
    price_gpu_hour_cny: float
    hours_per_month: float
    intranet: Figure  # the intranet bandwidth the sync runs at (Gbps)
    write: Figure  # the checkpoint write rate (MB/s)
    step: StepTime
    stalls: Stalls
    useful_share: float
    price_per_useful_gpu_hour_cny: float
    reasons: tuple[Reason, ...]

    def explanation(self, lang: str) -> str:
        """The arithmetic in `lang` ("zh" or "en"), one sentence per step."""
        return ("；" if lang == "zh" else "; ").join(reason.text(lang) for reason in self.reasons)


class StepTime(NamedTuple):
    """One training step at the offer's intranet: compute, sync (all, and the part waited for), share."""

    compute_s: float | None
    efficiency: float | None
    sync_s: float
    exposed_s: float
    step_s: float | None
    share: float
    reason: Reason


class Stalls(NamedTuple):
    """Checkpoint stalls at the offer's write rate: per checkpoint and per hour."""

    per_checkpoint_s: float
    per_hour_s: float
    reason: Reason


def _positive(value: float | None, name: str) -> float:
    """`value`, or a ValueError naming the input when it is missing, zero or negative."""
    if value is None or value <= 0:
        raise ValueError(f"{name} must be a positive number for this case, got {value!r}")
    return value


def _percent(share: float) -> str:
    return f"{fmt(share * 100)}%"


def _step(workload: Workload, intranet: Figure, rdma: bool) -> StepTime:
    """Compute, sync and the share of the step the GPUs compute, at the offer's intranet bandwidth."""
    target = workload.step_seconds
    compute = target * (1 - workload.sync_share) if target is not None else None
    if workload.allreduce_bytes is None:
        reason = Reason(
            "useful.no_sync",
            "节点之间没有梯度同步，GPU 不必等内网",
            "no gradient sync between nodes: the GPUs never wait for the intranet",
        )
        return StepTime(compute, None, 0.0, 0.0, compute, 1.0, reason)
    target = _positive(target, "step_seconds (model.target_step_seconds)")
    gbps = _positive(intranet.value, "intranet_gbps")
    rated = intranet.source in (CLAIMED, ASSUMED)  # a line rate; a measured iperf3 figure is goodput
    efficiency = network_constants()["rdma" if rdma else "tcp"] if rated else 1.0
    sync = sizing.sync_seconds(workload.allreduce_bytes, gbps, efficiency)
    exposed = sync * (1 - SYNC_HIDDEN_SHARE)
    compute = target * (1 - workload.sync_share)
    step = compute + exposed
    share = compute / step
    source_zh, source_en = SOURCE_LABELS[intranet.source]
    traffic = fmt(workload.allreduce_bytes / 1e9)
    reason = Reason(
        "useful.sync",
        f"每步计算 {fmt(compute)} s（目标步长 {fmt(target)} s × (1 − {_percent(workload.sync_share)})）；"
        f"梯度同步 {traffic} GB × 8 ÷ ({fmt(gbps)} Gbps（{source_zh}）× {fmt(efficiency)}) = {fmt(sync)} s，"
        f"与计算不重叠；每步 {fmt(step)} s 中 GPU 计算占 {_percent(share)}",
        f"each step computes for {fmt(compute)} s (target step {fmt(target)} s × "
        f"(1 − {_percent(workload.sync_share)})); the gradient sync takes {traffic} GB × 8 ÷ "
        f"({fmt(gbps)} Gbps ({source_en}) × {fmt(efficiency)}) = {fmt(sync)} s, not overlapped with compute; "
        f"the GPUs compute for {_percent(share)} of each {fmt(step)} s step",
        source=intranet.source,
    )
    return StepTime(compute, efficiency, sync, exposed, step, share, reason)


def _stalls(workload: Workload, write: Figure) -> Stalls:
    """Seconds training stalls per checkpoint and per hour at the offer's write rate."""
    size, every = workload.checkpoint_gb, workload.checkpoint_interval_minutes
    if not size or not every:
        reason = Reason(
            "useful.no_checkpoint",
            "本案没有检查点大小和间隔，不计检查点停顿",
            "the case gives no checkpoint size and interval: checkpoint stalls are not counted",
        )
        return Stalls(0.0, 0.0, reason)
    rate = _positive(write.value, "write_mb_s")
    stall = sizing.checkpoint_stall_seconds(size, rate)
    per_hour = stall * MINUTES_PER_HOUR / every
    source_zh, source_en = SOURCE_LABELS[write.source]
    reason = Reason(
        "useful.checkpoint",
        f"检查点 {fmt(size)} GB ÷ {fmt(rate)} MB/s（{source_zh}）= 每次停顿 {fmt(stall)} s，"
        f"每 {fmt(every)} 分钟一次，每小时停顿 {fmt(per_hour)} s",
        f"a {fmt(size)} GB checkpoint at {fmt(rate)} MB/s ({source_en}) stalls training for {fmt(stall)} s, "
        f"every {fmt(every)} min: {fmt(per_hour)} s an hour",
        source=write.source,
    )
    return Stalls(stall, per_hour, reason)


def _quoted(hour: float) -> tuple[float, str, Reason]:
    """The quoted price per GPU-hour as it stands."""
    return (
        hour,
        "gpu_hour",
        Reason("useful.price", f"报价 {fmt(hour)} 元/卡·时", f"CNY {fmt(hour)} per GPU-hour"),
    )


def _gpu_hour_price(price: Price, workload: Workload) -> tuple[float, str, Reason]:
    """The price per GPU-hour: quoted, or the monthly price over GPUs x hours (the cheaper when both)."""
    hour, month = price.gpu_hour_cny, price.month_cny
    if hour is None and month is None:
        raise ValueError("price needs gpu_hour_cny or month_cny")
    if hour is not None:
        _positive(hour, "gpu_hour_cny")
    if month is None:
        return _quoted(hour)
    _positive(month, "month_cny")
    gpus = workload.gpus if price.month_gpus is None else int(_positive(price.month_gpus, "month_gpus"))
    hours = workload.hours_per_month
    cost = sizing.monthly_cost(
        price_month_cny=month, price_gpu_hour_cny=hour, gpus_per_node=gpus, nodes=1, hours_per_month=hours
    )
    if cost.basis == "gpu_hour":
        return _quoted(hour)
    per_hour = sizing.gpu_hour_price(month, gpus, hours)
    reason = Reason(
        "useful.price",
        f"月价 {fmt(month)} 元 ÷ ({gpus} 卡 × 每月 {fmt(hours)} 小时) = {fmt(per_hour)} 元/卡·时",
        f"monthly price CNY {fmt(month)} ÷ ({gpus} GPUs × {fmt(hours)} h a month) = "
        f"CNY {fmt(per_hour)} per GPU-hour",
    )
    return per_hour, "month", reason


def useful_hours(
    workload: Workload, price: Price, intranet: Figure, write: Figure, *, rdma: bool = False
) -> UsefulHours:
    """The price per useful GPU-hour of an offer for the case; `rdma`: the intranet figure is an RDMA link."""
    per_hour, basis, price_reason = _gpu_hour_price(price, workload)
    step = _step(workload, intranet, rdma)
    stalls = _stalls(workload, write)
    useful = max(0.0, 1 - stalls.per_hour_s / SECONDS_PER_HOUR) * step.share
    per_useful = per_hour / useful if useful > 0 else float("inf")
    share_reason = Reason(
        "useful.share",
        f"有效比例 = (1 − {fmt(stalls.per_hour_s)} s ÷ 3600 s) × {_percent(step.share)} = "
        f"{_percent(useful)}；{fmt(per_hour)} 元/卡·时 ÷ {_percent(useful)} = "
        f"每有效卡时 {fmt(per_useful)} 元",
        f"useful share = (1 − {fmt(stalls.per_hour_s)} s ÷ 3600 s) × {_percent(step.share)} = "
        f"{_percent(useful)}; CNY {fmt(per_hour)} ÷ {_percent(useful)} = "
        f"CNY {fmt(per_useful)} per useful GPU-hour",
    )
    return UsefulHours(
        price_basis=basis,
        price_gpu_hour_cny=per_hour,
        hours_per_month=workload.hours_per_month,
        intranet=intranet,
        write=write,
        step=step,
        stalls=stalls,
        useful_share=useful,
        price_per_useful_gpu_hour_cny=per_useful,
        reasons=(price_reason, step.reason, stalls.reason, share_reason),
    )
