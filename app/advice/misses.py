"""Nearest misses: when no offer fits, the offers that fail the fewest hard conditions, each condition with
its gap, and how many offers relaxing that one answer would bring in (no dead ends)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.advice.facts import SOURCE_LABELS
from app.advice.knowledge import assumptions
from app.advice.numbers import fmt, zh_unit
from app.advice.ranked import Ranking
from app.advice.ranking.assessment import Assessment
from app.advice.ranking.figures import best, storage_figures
from app.advice.requirements import Needs
from benchmarks.gc_pause import without_gc

MAX_MISSES = 5


@dataclass(frozen=True)
class Gap:
    """How far one offer is from one hard condition: what it has, what the case needs."""

    have: Any
    need: Any
    unit: str
    higher_is_better: bool | None = None  # None: not a number (relaxing admits every such offer)

    def closer_or_equal(self, other: Gap) -> bool:
        """Whether this gap is no wider than `other` (relaxing the answer to `other` admits it too)."""
        if self.higher_is_better is None:
            return True
        return self.have >= other.have if self.higher_is_better else self.have <= other.have

    def relative(self) -> float:
        """The gap as a share of the need (1 for a yes/no condition)."""
        if self.higher_is_better is None or not self.need:
            return 1.0
        return abs(float(self.have) - float(self.need)) / float(self.need)


def _cost(a: Assessment, needs: Needs) -> Gap:
    return Gap(a.cost.value if a.cost else None, needs.budget_cny, "CNY/month", False)


def _intranet(a: Assessment, needs: Needs) -> Gap:
    return Gap(a.effective_gbps, needs.needed_effective_gbps, "Gbps", True)


def _storage(index: int) -> Callable[[Assessment, Needs], Gap]:
    def gap(a: Assessment, needs: Needs) -> Gap:
        figures = storage_figures(a.offer, assumptions()["storage"]["typical"])
        need = needs.read_iops if index == 0 else needs.checkpoint_write_mb_s
        return Gap(figures[index][0], need, "IOPS" if index == 0 else "MB/s", True)

    return gap


def _gpus(a: Assessment, needs: Needs) -> Gap:
    return Gap(best(a.offer, "gpu_count", a.offer.gpus_per_node)[0], needs.gpus_per_node, "GPUs", True)


def _memory(a: Assessment, needs: Needs) -> Gap:
    return Gap(a.offer.gpu_memory_gb, needs.min_gpu_memory_gb, "GB", True)


def _latency(a: Assessment, needs: Needs) -> Gap:
    worst = max(a.user_rtt_ms.values()) if a.user_rtt_ms else None
    return Gap(worst, needs.network_budget_ms, "ms", False)


def _words(
    have: Callable[[Assessment], str], need: Callable[[Needs], str]
) -> Callable[[Assessment, Needs], Gap]:
    return lambda a, needs: Gap(have(a), need(needs), "")


# Per exclusion code: the questionnaire step and answer behind it, and how to measure the gap.
CONDITIONS: dict[str, tuple[str, str, Callable[[Assessment, Needs], Gap]]] = {
    "cost.budget": ("budget", "monthly_cny", _cost),
    "intranet.too_slow": ("model", "target_step_seconds", _intranet),
    "intranet.rdma": ("model", "target_step_seconds", _words(lambda a: "none", lambda n: "RDMA")),
    "storage.iops": ("data", "samples_per_second", _storage(0)),
    "storage.checkpoint": ("checkpoint", "acceptable_stall_seconds", _storage(1)),
    "gpu.per_node": ("compute", "gpus_per_node", _gpus),
    "gpu.model": (
        "compute",
        "gpu_strict",
        _words(lambda a: a.offer.gpu_model, lambda n: " / ".join(n.gpu_models)),
    ),
    "gpu.memory": ("compute", "min_gpu_memory_gb", _memory),
    "latency.budget": ("users", "latency_budget_ms", _latency),
    "compliance.iso27001": ("compliance", "iso27001", _words(lambda a: "expired", lambda n: "ISO 27001")),
    "compliance.dengbao": (
        "compliance",
        "dengbao_level",
        _words(lambda a: str(a.offer.provider.dengbao_level or "expired"), lambda n: str(n.dengbao_level)),
    ),
    "bandwidth.shared": (
        "compliance",
        "dedicated_bandwidth",
        _words(lambda a: "shared", lambda n: "dedicated"),
    ),
    "residency.province": (
        "compliance",
        "residency",
        _words(lambda a: a.offer.datacenter_province or "", lambda n: n.residency_province or ""),
    ),
}
# How each condition's gap reads: (Chinese label, English label).
LABELS = {
    "cost.budget": ("预算", "budget"),
    "intranet.too_slow": ("内网", "intranet"),
    "intranet.rdma": ("RDMA", "RDMA"),
    "storage.iops": ("随机读", "random read"),
    "storage.checkpoint": ("检查点写入", "checkpoint writes"),
    "gpu.per_node": ("每节点 GPU", "GPUs per node"),
    "gpu.model": ("GPU 型号", "GPU model"),
    "gpu.memory": ("显存", "GPU memory"),
    "latency.budget": ("用户往返时延", "user round trip"),
    "compliance.iso27001": ("ISO 27001", "ISO 27001"),
    "compliance.dengbao": ("等保级别", "MLPS level"),
    "bandwidth.shared": ("公网带宽", "public bandwidth"),
    "residency.province": ("机房省份", "datacenter province"),
}
STEP_LABELS = {
    "budget": ("预算与优先级", "budget and priorities"),
    "model": ("模型与步长", "model and step time"),
    "data": ("数据集", "dataset"),
    "checkpoint": ("检查点", "checkpoints"),
    "compute": ("算力规模", "compute"),
    "users": ("用户与时延", "users and latency"),
    "compliance": ("合规与带宽", "compliance and bandwidth"),
}


def _shown(value: Any, unit: str) -> str:
    if unit == "CNY/month":
        return f"¥{fmt(value)}"
    return fmt(value) if isinstance(value, int | float) else str(value)


def _gap_texts(code: str, gap: Gap, source: str | None) -> tuple[str, str]:
    """E.g. "intranet 25 Gbps measured vs 100 needed", "budget ¥38,000/month vs ¥30,000"."""
    zh_label, en_label = LABELS[code]
    have, need = _shown(gap.have, gap.unit), _shown(gap.need, gap.unit)
    if gap.unit == "CNY/month":
        return f"{zh_label}：每月 {have}，预算 {need}", f"{en_label} {have}/month vs {need}"
    src_zh, src_en = SOURCE_LABELS.get(source or "", ("", ""))
    unit = f" {gap.unit}" if gap.unit else ""
    zh_src = f"（{src_zh}）" if src_zh else ""
    en_src = f" {src_en}" if src_en else ""
    return (
        f"{zh_label}：{have}{zh_unit(gap.unit)}{zh_src}，要求 {need}",
        f"{en_label} {have}{unit}{en_src} vs {need} needed",
    )


def _relax_texts(code: str, gap: Gap, count: int) -> tuple[str, str]:
    step_zh, step_en = STEP_LABELS[CONDITIONS[code][0]]
    to_zh = to_en = ""
    if gap.higher_is_better is not None and gap.have is not None:
        unit = "" if gap.unit == "CNY/month" else f" {gap.unit}"
        to_zh = f"放宽到 {_shown(gap.have, gap.unit)}{'' if gap.unit == 'CNY/month' else zh_unit(gap.unit)}"
        to_zh, to_en = f"（{to_zh}）", f" to {_shown(gap.have, gap.unit)}{unit}"
    return (
        f"放宽“{step_zh}”这一答案{to_zh}可让 {count} 个套餐入选",
        f"relaxing the {step_en} answer{to_en} would bring in {count} offer(s)",
    )


@dataclass
class Candidate:
    """An excluded offer whose every failed condition is an answer the buyer can change."""

    a: Assessment
    codes: dict[str, str | None]  # condition code -> source of the figure it rests on
    gaps: dict[str, Gap]


def _candidates(excluded: list[Assessment]) -> list[tuple[Assessment, dict[str, str | None]]]:
    """Excluded offers whose reasons are all relaxable, with their condition codes (fewest first)."""
    found = []
    known = CONDITIONS.keys()
    for a in excluded:
        reasons = a.excluded
        if all(reason.code in known for reason in reasons):
            found.append((a, {reason.code: reason.source for reason in reasons}))
    found.sort(key=lambda item: (len(item[1]), item[0].offer.id))
    return found


def _with_gaps(a: Assessment, codes: dict[str, str | None], needs: Needs) -> Candidate:
    return Candidate(a, codes, {code: CONDITIONS[code][2](a, needs) for code in codes})


def nearest_misses(ranked: Ranking, needs: Needs, *, limit: int = MAX_MISSES) -> dict[str, Any] | None:
    """The nearest misses and the relaxations that would help, or None when some offer fits."""
    if len(ranked.eligible):
        return None
    with without_gc():
        return _nearest(list(ranked), needs, limit)


def _nearest(ranked: list[Assessment], needs: Needs, limit: int) -> dict[str, Any]:
    found = _candidates(ranked)
    singles = [_with_gaps(a, codes, needs) for a, codes in found if len(codes) == 1]
    fewest: list[tuple[Assessment, dict[str, str | None]]] = []
    if found:
        cut = len(found[min(limit, len(found)) - 1][1])
        fewest = [item for item in found if len(item[1]) <= cut and len(item[1]) > 1]
    chosen = singles + [_with_gaps(a, codes, needs) for a, codes in fewest]
    chosen.sort(key=lambda c: (len(c.codes), sum(g.relative() for g in c.gaps.values()), c.a.offer.id))
    return {
        "offers": [_miss_dict(c, singles) for c in chosen[:limit]],
        "relaxations": _relaxations(singles),
        "unrelaxable": len(ranked) - len(found),
    }


def _brings_in(code: str, gap: Gap, singles: list[Candidate]) -> int:
    """Offers that fail only `code`, no further from it than `gap`: eligible if that answer moved to it."""
    return sum(1 for c in singles if code in c.codes and c.gaps[code].closer_or_equal(gap))


def _miss_dict(c: Candidate, singles: list[Candidate]) -> dict[str, Any]:
    offer = c.a.offer
    misses = []
    for code, source in c.codes.items():
        gap = c.gaps[code]
        count = _brings_in(code, gap, singles) if len(c.codes) == 1 else 0
        gap_zh, gap_en = _gap_texts(code, gap, source)
        relax_zh, relax_en = _relax_texts(code, gap, count)
        misses.append(
            {
                "code": code,
                "step": CONDITIONS[code][0],
                "answer": CONDITIONS[code][1],
                "have": gap.have,
                "need": gap.need,
                "unit": gap.unit,
                "source": source,
                "gap_zh": gap_zh,
                "gap_en": gap_en,
                "brings_in": count,
                "relax_zh": relax_zh,
                "relax_en": relax_en,
            }
        )
    return {
        "offer_id": offer.id,
        "offer_name": offer.name,
        "provider_name": offer.provider.name,
        "gpu_model": offer.gpu_model,
        "conditions": len(c.codes),
        "misses": misses,
    }


def _relaxations(singles: list[Candidate]) -> list[dict[str, Any]]:
    """Per condition: how many offers fail only it (all of them fit once that answer is relaxed)."""
    counts: dict[str, int] = {}
    for c in singles:
        for code in c.codes:
            counts[code] = counts.get(code, 0) + 1
    out = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        step_zh, step_en = STEP_LABELS[CONDITIONS[code][0]]
        zh_label, en_label = LABELS[code]
        out.append(
            {
                "code": code,
                "step": CONDITIONS[code][0],
                "answer": CONDITIONS[code][1],
                "brings_in": count,
                "message_zh": f"只差“{zh_label}”一项的套餐有 {count} 个：放宽“{step_zh}”这一步的答案即可入选",
                "message_en": f"{count} offer(s) miss only on {en_label}: relaxing the {step_en} answer "
                "brings them in",
            }
        )
    return out
