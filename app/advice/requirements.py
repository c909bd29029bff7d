"""What a case needs, worked out from its answers with the arithmetic shown in Chinese and English."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from app.advice import cities, sizing
from app.advice.answers import Answers, DataSource, Unanswered, WorkloadKind, provisional
from app.advice.knowledge import assumptions, load
from app.advice.numbers import fmt, hours_text

# Names of the non-numeric requirement values and storage types, in Chinese and English.
STORAGE_NAMES = {
    "local_nvme": ("本地 NVMe", "local NVMe"),
    "local_sata_ssd": ("本地 SATA SSD", "local SATA SSD"),
    "cloud_disk": ("云盘", "cloud disk"),
    "nfs": ("NFS", "NFS"),
    "parallel_fs": ("并行文件系统", "parallel file system"),
    "unknown": ("未知", "unknown"),
}
# What stands for an answer the buyer gave in words: not sure of a figure, data kept in mainland China.
ANSWER_NAMES = {"not_sure": ("不确定", "not sure"), "mainland": ("中国大陆境内", "mainland China")}
VALUE_NAMES = {
    "required": ("需要", "required"),
    "recommended": ("建议", "recommended"),
    "not_needed": ("不需要", "not needed"),
    **STORAGE_NAMES,
} | ANSWER_NAMES


def storage_name(kind: str, lang: str) -> str:
    """The storage type's name in `lang`."""
    names = STORAGE_NAMES.get(kind, (kind, kind))
    return names[0] if lang == "zh" else names[1]


@dataclass(frozen=True)
class Quantity:
    """One requirement: its value and unit, and how it was computed."""

    key: str
    label_zh: str
    label_en: str
    value: float | bool | str | None
    unit: str
    arithmetic_zh: str
    arithmetic_en: str

    def display(self, lang: str) -> str:
        """The value as shown to people: a rounded number, or the named choice."""
        if isinstance(self.value, (int, float)) and not isinstance(self.value, bool):
            return f"{fmt(self.value)} {self.unit}".strip()
        names = VALUE_NAMES.get(str(self.value))
        if names:
            return names[0] if lang == "zh" else names[1]
        return str(self.value)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (value, unit, the value as displayed and the arithmetic)."""
        value = self.value
        if isinstance(value, float) and math.isfinite(value):
            value = round(value, 6)
        return {
            "key": self.key,
            "label_zh": self.label_zh,
            "label_en": self.label_en,
            "value": value,
            "unit": self.unit,
            "display_zh": self.display("zh"),
            "display_en": self.display("en"),
            "arithmetic_zh": self.arithmetic_zh,
            "arithmetic_en": self.arithmetic_en,
        }


@dataclass
class Needs:
    """The numbers the ranking compares offers against (None: the case does not constrain it)."""

    kind: WorkloadKind
    nodes: int
    gpus_per_node: int
    gpu_models: list[str]
    gpu_strict: bool
    min_gpu_memory_gb: int | None
    hours_per_month: float
    contract_months: int
    budget_cny: float | None
    priorities: list[str]
    iso27001: bool
    dengbao_level: int
    dedicated_bandwidth: bool
    office_city: cities.City
    user_cities: list[cities.City] = field(default_factory=list)
    network_budget_ms: float | None = None
    latency_budget_ms: float | None = None
    model_time_ms: float | None = None
    target_step_s: float | None = None
    gradient_bytes: float | None = None
    allreduce_bytes: float | None = None
    sync_budget_s: float | None = None
    needed_effective_gbps: float | None = None
    rdma_required: bool = False
    rdma_recommended: bool = False
    upload_s: float | None = None
    dataset_gb: float | None = None
    checkpoint_gb: float | None = None
    checkpoint_write_mb_s: float | None = None
    read_iops: float | None = None
    read_mb_s: float | None = None
    step_unknown: bool = False  # the buyer is not sure of the step time: offers are marked, not excluded
    sync_share: float = 0.3
    uplink_unknown: bool = False  # the buyer is not sure of the office uplink
    residency: str = "none"  # where the data must stay: "none", "mainland" or "province"
    residency_province: str | None = None
    storage_fit: dict[str, float] = field(default_factory=dict)
    quantities: list[Quantity] = field(default_factory=list)

    def value(self, key: str) -> Any:
        """The value of the quantity `key`, or None."""
        return next((q.value for q in self.quantities if q.key == key), None)


def _const(section: str, name: str) -> float:
    item = assumptions()[section][name]
    return float(item["value"] if isinstance(item, dict) else item)


def network_constants() -> dict[str, float]:
    """Efficiencies and thresholds of the network arithmetic."""
    return {
        "tcp": _const("network", "ethernet_tcp_efficiency"),
        "rdma": _const("network", "rdma_efficiency"),
        "tcp_ceiling": _const("network", "tcp_practical_ceiling_gbps"),
        "rdma_recommended": _const("network", "rdma_recommended_gbps"),
    }


def latency_constants() -> dict[str, float]:
    """Fibre speed, route factor and equipment delay."""
    return {
        "km_per_ms": _const("latency", "fibre_km_per_ms"),
        "route_factor": _const("latency", "route_factor"),
        "equipment_ms": _const("latency", "equipment_delay_ms"),
    }


def rtt_between(a: cities.City, b: cities.City) -> tuple[float, float]:
    """Great-circle distance (km) and estimated round-trip time (ms) between two cities."""
    constants = latency_constants()
    distance = cities.distance_km(a, b)
    return distance, sizing.rtt_ms(
        distance,
        route_factor=constants["route_factor"],
        km_per_ms=constants["km_per_ms"],
        equipment_ms=constants["equipment_ms"],
    )


def _network(answers: Answers, needs: Needs, out: list[Quantity]) -> None:
    model = answers.model
    if model.parameters_billion is None:
        return
    per_gradient = assumptions()["gpu"]["bytes_per_gradient"][model.precision.value]
    parameters = model.parameters_billion * 1e9
    gradient = sizing.gradient_bytes(parameters, per_gradient)
    needs.gradient_bytes = gradient
    out.append(
        Quantity(
            "gradient_gb",
            "每步梯度数据量 S",
            "gradient bytes per step S",
            gradient / 1e9,
            "GB",
            f"S = {fmt(model.parameters_billion)}×10⁹ 参数 × {per_gradient} 字节（{model.precision.value}）"
            f" = {fmt(gradient / 1e9)} GB",
            f"S = {fmt(model.parameters_billion)}e9 parameters × {per_gradient} bytes "
            f"({model.precision.value})"
            f" = {fmt(gradient / 1e9)} GB",
        )
    )
    nodes = answers.compute.nodes
    if nodes < 2:
        return
    factor = sizing.ring_factor(nodes)
    traffic = sizing.allreduce_bytes_per_node(gradient, nodes)
    needs.allreduce_bytes = traffic
    out.append(
        Quantity(
            "allreduce_gb",
            "每步每节点收发的梯度流量（环形 all-reduce）",
            "all-reduce traffic per node per step (ring)",
            traffic / 1e9,
            "GB",
            f"2(N−1)/N × S = 2×({nodes}−1)/{nodes} × {fmt(gradient / 1e9)} GB = {fmt(factor)} × "
            f"{fmt(gradient / 1e9)} GB = {fmt(traffic / 1e9)} GB",
            f"2(N−1)/N × S = 2×({nodes}−1)/{nodes} × {fmt(gradient / 1e9)} GB = {fmt(factor)} × "
            f"{fmt(gradient / 1e9)} GB = {fmt(traffic / 1e9)} GB",
        )
    )
    constants = network_constants()
    for gbps in (1, 10):
        seconds = sizing.sync_seconds(traffic, gbps, constants["tcp"])
        out.append(
            Quantity(
                f"sync_seconds_{gbps}g",
                f"在 {gbps} Gbps 以太网上同步一次的时间",
                f"one synchronisation on {gbps} Gbps Ethernet",
                seconds,
                "s",
                f"{fmt(traffic / 1e9)} GB × 8 ÷ ({gbps} Gbps × {constants['tcp']}) = {fmt(seconds)} s",
                f"{fmt(traffic / 1e9)} GB × 8 ÷ ({gbps} Gbps × {constants['tcp']}) = {fmt(seconds)} s",
            )
        )
    needs.sync_share = model.sync_share
    if model.step_unknown:
        needs.step_unknown = True
        out.append(_unsure_step(traffic, model.sync_share, constants["tcp"]))
        return
    if model.target_step_seconds is None:
        return
    budget = model.target_step_seconds * model.sync_share
    needs.sync_budget_s = budget
    needs.target_step_s = model.target_step_seconds
    effective = sizing.needed_gbps(traffic, budget)
    needs.needed_effective_gbps = effective
    tcp_line = effective / constants["tcp"]
    out.append(
        Quantity(
            "intranet_gbps_needed",
            "所需节点间有效带宽",
            "effective intranet bandwidth needed",
            effective,
            "Gbps",
            f"同步时间上限 = 目标步长 {fmt(model.target_step_seconds)} s × {fmt(model.sync_share * 100)}% = "
            f"{fmt(budget)} s；{fmt(traffic / 1e9)} GB × 8 ÷ {fmt(budget)} s = {fmt(effective)} Gbps"
            f"（以太网 TCP 按 {constants['tcp']} 折算，线速需 {fmt(tcp_line)} Gbps）",
            f"sync budget = target step {fmt(model.target_step_seconds)} s × {fmt(model.sync_share * 100)}% "
            f"= {fmt(budget)} s; {fmt(traffic / 1e9)} GB × 8 ÷ {fmt(budget)} s = {fmt(effective)} Gbps"
            f" (over Ethernet TCP at {constants['tcp']}, a line rate of {fmt(tcp_line)} Gbps)",
        )
    )
    needs.rdma_required = effective > constants["tcp_ceiling"]
    needs.rdma_recommended = needs.rdma_required or effective > constants["rdma_recommended"]
    verdict_zh = (
        "需要 RDMA" if needs.rdma_required else ("建议 RDMA" if needs.rdma_recommended else "以太网 TCP 即可")
    )
    verdict_en = (
        "RDMA needed"
        if needs.rdma_required
        else ("RDMA recommended" if needs.rdma_recommended else "Ethernet TCP is enough")
    )
    out.append(
        Quantity(
            "rdma",
            "是否需要 RDMA",
            "RDMA needed?",
            "required"
            if needs.rdma_required
            else ("recommended" if needs.rdma_recommended else "not_needed"),
            "",
            f"{fmt(effective)} Gbps 对比阈值：超过 {fmt(constants['tcp_ceiling'])} Gbps 需要 RDMA，超过 "
            f"{fmt(constants['rdma_recommended'])} Gbps 建议 RDMA → {verdict_zh}",
            f"{fmt(effective)} Gbps against the thresholds: above {fmt(constants['tcp_ceiling'])} "
            f"Gbps RDMA is needed, above {fmt(constants['rdma_recommended'])} Gbps it is recommended "
            f"→ {verdict_en}",
        )
    )


def _unsure_step(traffic: float, share: float, tcp: float) -> Quantity:
    """The step time the buyer is not sure of: how each offer's shortest supported step is worked out."""
    example = sizing.shortest_step_seconds(traffic, 10, tcp, share)
    return Quantity(
        "target_step",
        "目标步长",
        "target step time",
        "not_sure",
        "",
        "步长不确定，不按步长排除套餐。每个套餐能支持的最短步长 = "
        f"每步同步流量 {fmt(traffic / 1e9)} GB × 8 ÷ 有效带宽 ÷ 同步占比 {fmt(share * 100)}%；"
        f"例如 10 Gbps 以太网（按 {tcp} 折算）："
        f"{fmt(traffic / 1e9)} × 8 ÷ (10 × {tcp}) ÷ {fmt(share)} = {fmt(example)} s，步长不短于它就够用",
        f"the step time is not known, so no offer is excluded on it. The shortest step an offer supports = "
        f"sync traffic per step {fmt(traffic / 1e9)} GB × 8 ÷ effective bandwidth ÷ sync share "
        f"{fmt(share * 100)}%; e.g. 10 Gbps Ethernet (at {tcp}): {fmt(traffic / 1e9)} × 8 ÷ (10 × {tcp}) ÷ "
        f"{fmt(share)} = {fmt(example)} s, fine for steps that long or longer",
    )


def _upload(answers: Answers, needs: Needs, out: list[Quantity]) -> None:
    data, uplink = answers.data, answers.site.uplink_mbps
    needs.dataset_gb = data.dataset_gb
    if not data.dataset_gb or data.source != DataSource.office_upload:
        return
    if uplink is None and answers.site.uplink_unknown:
        needs.uplink_unknown = True
        out.append(_unsure_upload(answers.site.office_city, data.dataset_gb))
        return
    if uplink is None:
        return
    seconds = sizing.upload_seconds(data.dataset_gb, uplink)
    realistic = sizing.upload_seconds(data.dataset_gb, uplink, network_constants()["tcp"])
    needs.upload_s = seconds
    out.append(
        Quantity(
            "upload_hours",
            f"从{answers.site.office_city}办公室上传数据集的时间",
            f"dataset upload time from the {answers.site.office_city} office",
            seconds / 3600,
            "h",
            f"{fmt(data.dataset_gb)} GB × 8 ÷ {fmt(uplink)} Mbps = {fmt(seconds)} s "
            f"≈ {hours_text(seconds, 'zh')}"
            f"（满速；按 TCP 实际吞吐约 {hours_text(realistic, 'zh')}）",
            f"{fmt(data.dataset_gb)} GB × 8 ÷ {fmt(uplink)} Mbps = {fmt(seconds)} s "
            f"≈ {hours_text(seconds, 'en')}"
            f" (at line rate; about {hours_text(realistic, 'en')} at TCP goodput)",
        )
    )


# Office uplinks the upload time is shown for when the buyer is not sure of theirs (Mbps).
TYPICAL_UPLINKS_MBPS = (50, 100, 1000)


def _unsure_upload(city: str, dataset_gb: float) -> Quantity:
    """The uplink the buyer is not sure of: the upload time over a few typical office uplinks."""
    times = [(mbps, sizing.upload_seconds(dataset_gb, mbps)) for mbps in TYPICAL_UPLINKS_MBPS]
    zh = "；".join(f"{mbps} Mbps 约 {hours_text(seconds, 'zh')}" for mbps, seconds in times)
    en = "; ".join(f"{mbps} Mbps: about {hours_text(seconds, 'en')}" for mbps, seconds in times)
    return Quantity(
        "upload_hours",
        f"从{city}办公室上传数据集的时间",
        f"dataset upload time from the {city} office",
        "not_sure",
        "",
        f"上行带宽不确定（请在测速网站测上传速度后补填）；{fmt(dataset_gb)} GB × 8 ÷ 上行带宽（满速）：{zh}",
        f"the uplink is not known (measure the upload speed on a speed-test site and fill it in); "
        f"{fmt(dataset_gb)} GB × 8 ÷ uplink (at line rate): {en}",
    )


def _latency(answers: Answers, needs: Needs, out: list[Quantity]) -> None:
    if answers.kind != WorkloadKind.interactive_inference:
        return
    users = answers.users
    budget = users.latency_budget_ms - users.model_time_ms
    needs.network_budget_ms = budget
    needs.latency_budget_ms = users.latency_budget_ms
    needs.model_time_ms = users.model_time_ms
    needs.user_cities = [cities.lookup(name) for name in users.user_cities]  # type: ignore[misc]
    out.append(
        Quantity(
            "network_rtt_budget_ms",
            "留给网络往返的时间",
            "round-trip time left for the network",
            budget,
            "ms",
            f"时延预算 {fmt(users.latency_budget_ms)} ms − 模型计算 {fmt(users.model_time_ms)} ms "
            f"= {fmt(budget)} ms",
            f"latency budget {fmt(users.latency_budget_ms)} ms − model time {fmt(users.model_time_ms)} ms = "
            f"{fmt(budget)} ms",
        )
    )


def _storage(answers: Answers, needs: Needs, out: list[Quantity]) -> None:
    typical = assumptions()["storage"]
    checkpoint = answers.checkpoint
    if answers.trains and checkpoint.size_gb and checkpoint.acceptable_stall_seconds:
        rate = sizing.checkpoint_write_mb_s(checkpoint.size_gb, checkpoint.acceptable_stall_seconds)
        needs.checkpoint_gb = checkpoint.size_gb
        needs.checkpoint_write_mb_s = rate
        every = f"，每 {fmt(checkpoint.interval_minutes)} 分钟一次" if checkpoint.interval_minutes else ""
        every_en = f", every {fmt(checkpoint.interval_minutes)} min" if checkpoint.interval_minutes else ""
        out.append(
            Quantity(
                "checkpoint_write_mb_s",
                "检查点写入所需的持续写速度",
                "sustained write rate for checkpoints",
                rate,
                "MB/s",
                f"{fmt(checkpoint.size_gb)} GB ÷ 可接受停顿 {fmt(checkpoint.acceptable_stall_seconds)} s = "
                f"{fmt(rate)} MB/s{every}",
                f"{fmt(checkpoint.size_gb)} GB ÷ acceptable "
                f"stall {fmt(checkpoint.acceptable_stall_seconds)} s = "
                f"{fmt(rate)} MB/s{every_en}",
            )
        )
    data = answers.data
    if data.samples_per_second and data.sample_kb:
        block = float(typical["read_block_kb"])
        reads = sizing.reads_per_sample(data.sample_kb, block)
        iops = sizing.read_iops(data.samples_per_second, data.sample_kb, block)
        needs.read_iops = iops
        needs.read_mb_s = sizing.read_mb_s(data.samples_per_second, data.sample_kb)
        out.append(
            Quantity(
                "read_iops",
                "数据加载所需的随机读 IOPS",
                "random-read IOPS for data loading",
                iops,
                "IOPS",
                f"{fmt(data.samples_per_second)} 样本/s × ⌈{fmt(data.sample_kb)} KB ÷ {fmt(block)} KB⌉ = "
                f"{fmt(data.samples_per_second)} × {reads} = {fmt(iops)} IOPS"
                f"（吞吐 {fmt(needs.read_mb_s)} MB/s）",
                f"{fmt(data.samples_per_second)} samples/s × ⌈{fmt(data.sample_kb)} KB ÷ {fmt(block)} KB⌉ = "
                f"{fmt(data.samples_per_second)} × {reads} = {fmt(iops)} IOPS ({fmt(needs.read_mb_s)} MB/s)",
            )
        )
    fit = load("scenarios")["kinds"][answers.kind.value]["storage_types"]
    needs.storage_fit = {name: float(score) for name, score in fit.items()}
    suitable = [
        name
        for name, values in typical["typical"].items()
        if (needs.read_iops is None or values["iops"] >= needs.read_iops)
        and (needs.checkpoint_write_mb_s is None or values["write_mb_s"] >= needs.checkpoint_write_mb_s)
    ]
    best = max(needs.storage_fit, key=lambda name: needs.storage_fit[name])
    if needs.read_iops is None and needs.checkpoint_write_mb_s is None:
        fits_zh, fits_en = (
            "本案没有 IOPS / 写入速度的硬性要求",
            "this case sets no IOPS or write-rate requirement",
        )
    else:
        fits_zh = "按典型能力满足上面 IOPS / 写速度要求的类型：" + (
            "、".join(storage_name(n, "zh") for n in suitable) or "无"
        )
        fits_en = "types whose typical figures meet the IOPS / write needs above: " + (
            ", ".join(storage_name(n, "en") for n in suitable) or "none"
        )
    out.append(
        Quantity(
            "storage_type",
            "建议的存储类型",
            "suggested storage type",
            best,
            "",
            f"按场景首选{storage_name(best, 'zh')}；{fits_zh}",
            f"{storage_name(best, 'en')} fits this workload best; {fits_en}",
        )
    )


def _cost(answers: Answers, needs: Needs, out: list[Quantity]) -> None:
    budget = answers.budget
    gpus = answers.compute.nodes * answers.compute.gpus_per_node
    out.append(
        Quantity(
            "gpus_total",
            "GPU 总数",
            "GPUs in total",
            gpus,
            "",
            f"{answers.compute.nodes} 节点 × {answers.compute.gpus_per_node} 卡 = {gpus}",
            f"{answers.compute.nodes} nodes × {answers.compute.gpus_per_node} GPUs = {gpus}",
        )
    )
    if budget.monthly_cny is not None:
        per_gpu_hour = budget.monthly_cny / gpus / budget.hours_per_month
        out.append(
            Quantity(
                "budget_per_gpu_hour",
                "预算折合每卡每小时",
                "budget per GPU-hour",
                per_gpu_hour,
                "CNY",
                f"{fmt(budget.monthly_cny)} 元 ÷ {gpus} 卡 ÷ {fmt(budget.hours_per_month)} 小时 = "
                f"{fmt(per_gpu_hour)} 元/卡·时",
                f"CNY {fmt(budget.monthly_cny)} ÷ {gpus} GPUs ÷ {fmt(budget.hours_per_month)} h = "
                f"CNY {fmt(per_gpu_hour)} per GPU-hour",
            )
        )


def _residency(answers: Answers, needs: Needs, out: list[Quantity]) -> None:
    compliance = answers.compliance
    if compliance.residency.value == "none":
        return
    where = compliance.residency_province if compliance.residency.value == "province" else "mainland"
    zh, en = (
        (f"机房不在{where}的套餐被排除", f"offers whose datacenter is outside {where} are excluded")
        if compliance.residency.value == "province"
        else ("登记的机房省份都在中国大陆境内", "every datacenter province on record is in mainland China")
    )
    out.append(
        Quantity(
            "residency",
            "数据须留在",
            "data must stay in",
            where,
            "",
            f"按机房所在省份核对：{zh}；未登记机房省份的套餐标为待确认",
            f"checked against each datacenter's province: {en}; offers with no datacenter province on "
            "record are marked to confirm",
        )
    )


def compute_needs(answers: Answers) -> Needs:
    """Work out the case's needs, each with its arithmetic."""
    scenario = load("scenarios")["kinds"][answers.kind.value]
    dedicated = answers.compliance.dedicated_bandwidth
    needs = Needs(
        kind=answers.kind,
        nodes=answers.compute.nodes,
        gpus_per_node=answers.compute.gpus_per_node,
        gpu_models=list(answers.compute.gpu_models),
        gpu_strict=answers.compute.gpu_strict,
        min_gpu_memory_gb=answers.compute.min_gpu_memory_gb,
        hours_per_month=answers.budget.hours_per_month,
        contract_months=answers.budget.contract_months,
        budget_cny=answers.budget.monthly_cny,
        priorities=[p.value for p in answers.budget.priorities],
        iso27001=answers.compliance.iso27001,
        dengbao_level=answers.compliance.dengbao_level,
        dedicated_bandwidth=bool(scenario["dedicated_bandwidth"]) if dedicated is None else dedicated,
        residency=answers.compliance.residency.value,
        residency_province=answers.compliance.residency_province,
        office_city=cities.lookup(answers.site.office_city),  # type: ignore[arg-type]
    )
    out: list[Quantity] = []
    _cost(answers, needs, out)
    _network(answers, needs, out)
    _upload(answers, needs, out)
    _latency(answers, needs, out)
    _storage(answers, needs, out)
    _residency(answers, needs, out)
    needs.quantities = out
    return needs


# ---------------------------------------------------------------- previews of a questionnaire in progress
def _scratch_needs(kind: WorkloadKind) -> Needs:
    """A Needs to collect quantities into, for answers that are not complete yet."""
    required = {
        item.name: None
        for item in dataclasses.fields(Needs)
        if item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING
    }
    return Needs(**{**required, "kind": kind})


def preview(raw: dict[str, Any]) -> dict[str, Quantity]:
    """The quantities the answers given so far already fix, by key, worked out as the result page does.

    `raw` may be incomplete: each part of the arithmetic that reads an unanswered field is left out.
    """
    answers = provisional(raw)
    try:
        kind = answers.kind
    except Unanswered:
        return {}
    out: list[Quantity] = []
    for part in (_cost, _network, _upload, _latency, _storage, _residency):
        try:
            part(answers, _scratch_needs(kind), out)
        except (Unanswered, TypeError, ValueError, ZeroDivisionError):
            continue
    return {quantity.key: quantity for quantity in out}


def storage_types_writing(write_mb_s: float) -> list[str]:
    """Storage types whose typical sustained write rate reaches `write_mb_s`, fastest first."""
    typical = assumptions()["storage"]["typical"]
    fast_first = sorted(typical, key=lambda name: -float(typical[name]["write_mb_s"]))
    return [name for name in fast_first if float(typical[name]["write_mb_s"]) >= write_mb_s]
