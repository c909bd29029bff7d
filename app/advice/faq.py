"""FAQ recommendations: the knowledge base's questions answered with the case's own numbers."""

from __future__ import annotations

import functools
import string
from typing import Any

from app.advice import cities
from app.advice.answers import WorkloadKind
from app.advice.knowledge import assumptions, load
from app.advice.numbers import fmt, hours_text, tidy
from app.advice.ranked import Ranking
from app.advice.requirements import Needs, network_constants


@functools.cache
def questions() -> tuple[dict[str, Any], ...]:
    """The question templates of app/knowledge/advice/faq.yaml."""
    loaded = tuple(load("faq")["questions"])
    keys = [question["key"] for question in loaded]
    if len(keys) != len(set(keys)):
        raise ValueError("faq.yaml: question keys must be unique")
    return loaded


def _network_facts(needs: Needs) -> dict[str, Any]:
    if needs.allreduce_bytes is None:
        return {}
    tcp = network_constants()["tcp"]
    sync_1g = needs.value("sync_seconds_1g")
    facts: dict[str, Any] = {
        "allreduce_gb": needs.allreduce_bytes / 1e9,
        "sync_1g_s": sync_1g,
        "sync_10g_s": needs.value("sync_seconds_10g"),
        "tcp_ceiling": network_constants()["tcp_ceiling"],
    }
    if needs.sync_budget_s is not None and needs.needed_effective_gbps is not None:
        facts.update(
            {
                "sync_budget_s": needs.sync_budget_s,
                "target_step_s": needs.target_step_s,
                "needed_gbps": needs.needed_effective_gbps,
                "needed_line_gbps": needs.needed_effective_gbps / tcp,
                "has_budget": True,
                "gbe_enough": sync_1g is not None and sync_1g <= needs.sync_budget_s,
                "rdma_required": needs.rdma_required,
                "rdma_recommended": needs.rdma_recommended,
            }
        )
    return facts


def _storage_facts(needs: Needs) -> dict[str, Any]:
    typical = assumptions()["storage"]["typical"]
    facts: dict[str, Any] = {}
    if needs.checkpoint_write_mb_s and needs.checkpoint_gb:
        facts.update(
            {
                "checkpoint_gb": needs.checkpoint_gb,
                "checkpoint_write_mb_s": needs.checkpoint_write_mb_s,
                "stall_s": needs.checkpoint_gb * 1000 / needs.checkpoint_write_mb_s,
                "stall_nvme_s": needs.checkpoint_gb * 1000 / typical["local_nvme"]["write_mb_s"],
                "stall_cloud_s": needs.checkpoint_gb * 1000 / typical["cloud_disk"]["write_mb_s"],
            }
        )
    if needs.read_iops:
        facts["read_iops"] = needs.read_iops
        facts["cloud_disk_enough"] = needs.read_iops <= typical["cloud_disk"]["iops"]
    return facts


def _ranking_facts(needs: Needs, ranked: Ranking) -> dict[str, Any]:
    eligible = ranked.eligible
    facts: dict[str, Any] = {
        "eligible_count": len(eligible),
        "licence_excluded_count": ranked.licence_excluded_count(),
    }
    facts["licence_excluded"] = facts["licence_excluded_count"] > 0
    facts["to_confirm_count"] = ranked.to_confirm_count()
    facts["has_to_confirm"] = facts["to_confirm_count"] > 0
    facts["nothing_fits"] = bool(len(ranked)) and not len(eligible)
    if len(eligible):
        top = eligible[0]
        facts["top_offer"] = top.offer.label
        facts["top_cost"] = top.cost.value if top.cost else None
        if top.city is not None:
            facts["top_city"] = top.city.name
            facts["top_office_rtt_ms"] = top.office_rtt_ms
            facts["top_office_km"] = cities.distance_km(needs.office_city, top.city)
        cheapest = ranked.cheapest()
        if cheapest is not None and cheapest.cost is not None:
            facts["cheapest_offer"] = cheapest.offer.label
            facts["cheapest_cost"] = cheapest.cost.value
            basis = cheapest.cost.basis
            facts["cheapest_basis_zh"] = "按月价" if basis == "month" else "按卡时价 × 卡数 × 小时"
            facts["cheapest_basis_en"] = (
                "monthly price" if basis == "month" else "GPU-hour price × GPUs × hours"
            )
        nearest = ranked.nearest()
        if nearest is not None:
            facts["has_nearest"] = True
            facts["nearest_city"] = nearest.city.name if nearest.city else None
            facts["nearest_rtt_ms"] = max(nearest.user_rtt_ms.values())
    return facts


def facts(needs: Needs, ranked: Ranking) -> dict[str, Any]:
    """Every placeholder value and condition the templates may use."""
    scenario = load("scenarios")["kinds"][needs.kind.value]
    values: dict[str, Any] = {
        "kind_zh": scenario["label_zh"],
        "kind_en": scenario["label_en"],
        "inference": needs.kind == WorkloadKind.interactive_inference,
        "nodes": needs.nodes,
        "gpus_total": needs.nodes * needs.gpus_per_node,
        "office_city": needs.office_city.name,
        "dedicated_required": needs.dedicated_bandwidth,
        "budget_cny": needs.budget_cny,
        "has_budget_cny": needs.budget_cny is not None,
    }
    if needs.upload_s is not None and needs.dataset_gb:
        upload_real = needs.upload_s / network_constants()["tcp"]
        values.update(
            {
                "dataset_gb": needs.dataset_gb,
                "uplink_mbps": needs.dataset_gb * 8000 / needs.upload_s,
                "upload_h": needs.upload_s / 3600,
                "upload_h_real": upload_real / 3600,
                "upload_human_zh": hours_text(needs.upload_s, "zh"),
                "upload_human_en": hours_text(needs.upload_s, "en"),
                "upload_over_day": needs.upload_s > 24 * 3600,
            }
        )
    if needs.network_budget_ms is not None:
        values.update(
            {
                "user_cities": "、".join(city.name for city in needs.user_cities),
                "network_budget_ms": needs.network_budget_ms,
                "latency_budget_ms": needs.latency_budget_ms,
                "model_time_ms": needs.model_time_ms,
            }
        )
    values.update(_network_facts(needs))
    values.update(_storage_facts(needs))
    values.update(_ranking_facts(needs, ranked))
    return values


def _holds(conditions: list[str] | None, values: dict[str, Any]) -> bool:
    for name in conditions or []:
        negate = name.startswith("not_")
        value = bool(values.get(name.removeprefix("not_")))
        if value == negate:
            return False
    return True


def _render(template: str, values: dict[str, Any]) -> str:
    text = tidy(template)
    names = {name for _, name, _, _ in string.Formatter().parse(text) if name}
    shown = {
        name: fmt(values[name]) if isinstance(values[name], (int, float)) else values[name] for name in names
    }
    return text.format_map(shown)


def _present(names: list[str], values: dict[str, Any]) -> bool:
    return all(values.get(name) not in (None, "") for name in names)


def build(needs: Needs, ranked: Ranking) -> list[dict[str, Any]]:
    """The questions that apply to the case, each answered in Chinese and English with its numbers."""
    values = facts(needs, ranked)
    out = []
    for question in questions():
        if question.get("kinds") and needs.kind.value not in question["kinds"]:
            continue
        if not _present(question.get("requires", []), values):
            continue
        answer = next((a for a in question["answers"] if _holds(a.get("when"), values)), None)
        if answer is None:
            continue
        texts = [question["question_zh"], question["question_en"], answer["zh"], answer["en"]]
        names = {name for text in texts for _, name, _, _ in string.Formatter().parse(text) if name}
        if not _present(sorted(names), values):
            continue
        out.append(
            {
                "key": question["key"],
                "question_zh": _render(question["question_zh"], values),
                "question_en": _render(question["question_en"], values),
                "answer_zh": _render(answer["zh"], values),
                "answer_en": _render(answer["en"], values),
            }
        )
    return out
