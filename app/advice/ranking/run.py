"""One ranking run: its context, one offer assessed and scored, and the JSON form of an assessment."""

from __future__ import annotations

import math
from datetime import date, timedelta
from typing import Any

from app.advice.checklist import confirm_asks
from app.advice.facts import OfferFacts
from app.advice.knowledge import assumptions, benchmark_thresholds, load
from app.advice.ranking.assessment import EMPTY, NO_KEYS, Assessment, Context, Outcome, figures_of
from app.advice.ranking.figures import CRITERION_FIGURES, VERIFY_ITEMS
from app.advice.ranking.registry import CONSTRAINT_SPECS, CONSTRAINTS, CRITERIA
from app.advice.requirements import Needs, network_constants


def evidence_settings() -> dict[str, Any]:
    """How evidence counts: stale age, estimate margin, claim ratios and score factors (knowledge base)."""
    settings = assumptions()["evidence"]
    return {
        "stale_after_days": int(settings["stale_after_days"]["value"]),
        "estimate_exclude_margin": float(settings["estimate_exclude_margin"]["value"]),
        "stale_factor": float(load("scoring")["evidence"]["stale_factor"]),
        "below_claim_factor": load("scoring")["evidence"]["below_claim_factor"],
        "thresholds": benchmark_thresholds(),
    }


def weights_for(needs: Needs) -> dict[str, float]:
    """Criterion weights for the case's workload kind, its priorities boosted."""
    scoring = load("scoring")
    multiplier = float(scoring["priority_multiplier"])
    weights = {name: float(value) for name, value in scoring["weights"][needs.kind.value].items()}
    for name in needs.priorities:
        weights[name] = weights.get(name, 0.0) * multiplier if weights.get(name) else 5.0 * multiplier
    return weights


def context(needs: Needs, today: date) -> Context:
    """The per-run values every check and criterion reads (constants, weights, the stale date)."""
    evidence = evidence_settings()
    return Context(
        needs=needs,
        today=today,
        network=network_constants(),
        typical_storage=assumptions()["storage"]["typical"],
        scoring=load("scoring"),
        weights={name: weight for name, weight in weights_for(needs).items() if weight > 0},
        evidence=evidence,
        stale_before=today - timedelta(days=int(evidence["stale_after_days"])),
    )


def assess(offer: OfferFacts, ctx: Context, verdicts: dict[str, dict[Any, Outcome]]) -> Assessment:
    """Every constraint's reasons and values for one offer; offers without measured figures share a
    constraint's verdict by its key through `verdicts` (per constraint name)."""
    a = Assessment(offer)
    measured = bool(offer.measurements)
    for name, check in CONSTRAINTS.items():
        spec = CONSTRAINT_SPECS[name]
        if spec.measured_only and not measured:
            continue
        key_of = spec.key
        if key_of is None or (measured and spec.reads_measurements):
            check(a, ctx)
            continue
        known = verdicts.setdefault(name, {})
        key = key_of(offer)
        outcome = known.get(key)
        if outcome is None:
            outcome = known[key] = verdict(name, offer, ctx)
        if outcome is not EMPTY:
            outcome.apply(a)
    return a


def verdict(name: str, offer: OfferFacts, ctx: Context) -> Outcome:
    """One constraint's verdict on one offer, as recorded on a blank assessment."""
    spec = CONSTRAINT_SPECS[name]
    if spec.outcome_of is not None:
        return spec.outcome_of(offer, ctx)
    return Outcome.record(CONSTRAINTS[name], offer, ctx, spec.sets)


def score(a: Assessment, ctx: Context) -> None:
    """Score an offer that passed every constraint (ctx.cheapest set); a stale figure weighs less."""
    weights = ctx.weights
    total = sum(weights.values())
    stale_factor = float(ctx.evidence["stale_factor"])
    points, scores = 0.0, []
    for name, weight in weights.items():
        value = clamped(CRITERIA[name](a, ctx))
        if a.stale and a.stale & CRITERION_FIGURES.get(name, NO_KEYS):
            value *= stale_factor
        scores.append(value)
        points += weight * value
    a._scores, a._ctx = scores, ctx
    a.score = round(points / total * 100 * a.penalty, 1) if total else 0.0


def clamped(score: float) -> float:
    return min(1.0, max(0.0, score)) if math.isfinite(score) else 0.0


def assessment_dict(a: Assessment, needs: Needs) -> dict[str, Any]:
    """JSON form of one assessed offer."""
    offer, labels = a.offer, load("scoring")["criteria"]
    cost_zh, cost_en = a.cost_text(needs) or (None, None)
    return {
        "rank": a.rank,
        "offer_id": offer.id,
        "offer_name": offer.name,
        "offer_kind": offer.offer_kind,
        "provider_id": offer.provider.id,
        "provider_name": offer.provider.name,
        "gpu_model": offer.gpu_model,
        "gpus_per_node": offer.gpus_per_node,
        "datacenter": {
            "name": offer.datacenter_name,
            "province": offer.datacenter_province,
            "city": offer.datacenter_city,
        },
        "monthly_cost_cny": round(a.cost.value, 2) if a.cost and a.cost.value is not None else None,
        "cost_basis": a.cost.basis if a.cost else "unknown",
        "cost_arithmetic_zh": cost_zh,
        "cost_arithmetic_en": cost_en,
        "score": a.score,
        "excluded": bool(a.excluded),
        "excluded_because": [reason.to_dict() for reason in a.excluded],
        "measure_before_signing": bool(a.verify) and not a.excluded,
        "to_confirm": bool(a.confirm) and not a.excluded,
        "confirm": [_confirm_dict(key) for key in a.confirm],
        "verify": [{"key": key, "checklist_key": VERIFY_ITEMS.get(key)} for key in a.verify],
        "stale": sorted(a.stale),
        "score_factor": round(a.penalty, 3),
        "marks": [reason.to_dict() for reason in a.marks],
        "reasons": [item.to_dict(labels) for item in a.criteria],
        "figures": [figure.to_dict() for figure in figures_of(a)],
        "office_rtt_ms": round(a.office_rtt_ms, 1) if a.office_rtt_ms is not None else None,
        "user_rtt_ms": {name: round(ms, 1) for name, ms in a.user_rtt_ms.items()},
        "licence": a.coverage.reason.to_dict() if a.coverage else None,
    }


def _confirm_dict(key: str) -> dict[str, Any]:
    """One unrecorded fact of an offer: what to ask the provider and the checklist item that checks it."""
    ask = confirm_asks().get(key, {})
    return {
        "key": key,
        "checklist_key": ask.get("item"),
        "ask_zh": ask.get("ask_zh"),
        "ask_en": ask.get("ask_en"),
    }
