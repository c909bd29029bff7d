"""The ranking's faster steps equal the plain ones: provider verdicts, claim limits, scores."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta
from operator import attrgetter
from pathlib import Path

import pytest

from app.advice.answers import validate_answers
from app.advice.engine import advise
from app.advice.knowledge import assumptions, load
from app.advice.ranking import assessment, figures, provider_checks, registry, run
from app.advice.requirements import compute_needs, network_constants
from benchmarks.compare import Verdict, ratio_verdict
from perf.advice_perf import TODAY, build_offers

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "answers"


def _answers(case: str):
    return validate_answers(json.loads((EXAMPLES / f"{case}.json").read_text(encoding="utf-8")))


def _context(needs) -> assessment.Context:
    evidence = run.evidence_settings()
    return assessment.Context(
        needs=needs,
        today=TODAY,
        network=network_constants(),
        typical_storage=assumptions()["storage"]["typical"],
        scoring=load("scoring"),
        evidence=evidence,
        stale_before=TODAY - timedelta(days=int(evidence["stale_after_days"])),
    )


def _provider_on_an_assessment(a: assessment.Assessment, ctx: assessment.Context) -> None:
    """The provider constraint as it was written on an assessment (the reference)."""
    offer = a.offer
    scope = provider_checks.Scope(offer.provider, offer.datacenter_province, offer.offer_kind)
    for check in provider_checks.PROVIDER_CONSTRAINTS.values():
        check(scope, ctx)
    a.coverage = scope.coverage
    a.excluded += tuple(scope.excluded)
    a.marks += tuple(scope.marks)
    for key, reason in scope.confirm:
        a.to_confirm(key, reason)


@pytest.mark.parametrize("case", ["offline_batch", "interactive_inference"])
def test_the_provider_verdict_without_an_assessment_equals_the_one_recorded_on_an_assessment(case):
    # ISO 27001 and 等保 3 wanted: providers without a record get 待确认, the others may be excluded
    ctx = _context(dataclasses.replace(compute_needs(_answers(case)), iso27001=True, dengbao_level=3))
    key_of = registry.CONSTRAINT_SPECS["provider"].key
    firsts = {}
    for offer in build_offers(1500, seed=7):
        firsts.setdefault(key_of(offer), offer)
    outcomes = [(provider_checks.provider_outcome(o, ctx), o) for o in firsts.values()]
    assert any(outcome.excluded for outcome, _ in outcomes) and any(
        outcome.confirm for outcome, _ in outcomes
    )
    assert any(outcome.marks for outcome, _ in outcomes)
    for outcome, offer in outcomes:
        reference = assessment.Outcome.record(_provider_on_an_assessment, offer, ctx, ("coverage",))
        assert outcome.excluded == reference.excluded and outcome.marks == reference.marks
        assert (outcome.verify, outcome.confirm) == (reference.verify, reference.confirm)
        assert outcome.values == reference.values


def test_claim_limits_give_the_verdicts_of_the_thresholds():
    evidence = run.evidence_settings()
    limits = figures.claim_limits(evidence)
    thresholds = evidence["thresholds"]
    assert [key for key, *_ in limits] == [key for key, _claim, _kind in figures.BELOW_CLAIM]
    for (_key, _claim, pass_at, warn_at), (_name, _of, kind) in zip(limits, figures.BELOW_CLAIM, strict=True):
        assert pass_at == getattr(thresholds, f"{kind}_pass")
        assert warn_at == getattr(thresholds, f"{kind}_warn")
        for ratio in (pass_at, pass_at - 1e-9, warn_at, warn_at - 1e-9, 0.0):
            assert (ratio >= pass_at) == (ratio_verdict(ratio, pass_at, warn_at) == Verdict.passed)


def test_scores_equal_the_weighted_criteria_of_each_offer():
    advice = advise(_answers("distributed_training"), build_offers(800, seed=17, measured=0.6), today=TODAY)
    eligible = advice.eligible
    assert any(a.stale for a in eligible) and any(a.penalty < 1 for a in eligible)
    ctx = eligible[0]._ctx
    weights, total = ctx.weights, sum(ctx.weights.values())
    stale_factor = float(run.evidence_settings()["stale_factor"])
    for a in eligible:
        points, scores = 0.0, []
        for name, weight in weights.items():
            score = run.clamped(registry.CRITERIA[name](a, ctx))
            if a.stale & figures.CRITERION_FIGURES.get(name, frozenset()):
                score *= stale_factor
            scores.append(score)
            points += weight * score
        assert a._scores == scores
        assert a.score == round(points / total * 100 * a.penalty, 1)
    assert [a.rank for a in eligible] == list(range(1, len(eligible) + 1))
    assert max(eligible, key=attrgetter("score")).score == eligible[0].score
