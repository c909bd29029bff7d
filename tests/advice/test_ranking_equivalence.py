"""The fast ranking path gives exactly the advice of the plain one: generated offers, every example case."""

from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import math
import random
from pathlib import Path

import pytest

from app.advice import engine
from app.advice.answers import validate_answers
from app.advice.deciding import rank_offers
from app.advice.engine import advise
from app.advice.facts import Measurement, OfferFacts, parse_licence_number
from app.advice.ranking import assessment, registry, run
from app.advice.requirements import compute_needs
from app.vetting.identifiers import identify
from perf.advice_perf import TODAY, build_offers

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "answers"
CASES = sorted(path.stem for path in EXAMPLES.glob("*.json"))

# SHA-256 of the whole advice JSON (every offer, as `flask advise` prints it) for 2,000 generated offers,
# written by the ranking before it shared verdicts between offers and explained criteria lazily. A change
# to what the advice says (or to perf/advice_perf.build_offers, which makes the offers) changes these:
# regenerate them only for an intended change. Last regenerated when every offer gained its provider's
# verdict and a claimed RDMA figure that a failed intranet measurement contradicts stopped counting (issue 24:
# 97 such offers per case are marked to measure RDMA first; in distributed training they rank on the measured
# intranet, 97 of them then too slow), and the too-slow reason wrote its transport as TCP / RoCE / InfiniBand;
# then when checklist entries said whether their command is gpuvet's own (issue 27: shown to analysts only)
# and the measure-first note stopped quoting the bench command (checked: nothing else in the advice changed);
# then when English texts stopped quoting Chinese terms (MLPS, not 等保; a licence's status and the cloud
# scope in English; issue 27 item 10) and the checklist commands named their placeholders in upper-case
# English (checked by diff: only those texts changed).
GOLDEN = {
    ("distributed_training", 0.3): "9b627b50ce6c8b369578125a2aae5496a4ef02e2a6740c7266367d58696a4a88",
    ("distributed_training", 1.0): "e7c0044ac41a76682e362421ae957c5abadddcaf17e37715fbbe6d7cc523d2fb",
    ("interactive_inference", 0.3): "9c7f858b08604d16a94962bd006054d9358a108ecdefe00aff3a251134d13882",
    ("interactive_inference", 1.0): "1ee4eb32eaf51f430cbae27b4b8b4484807710c3830f0455042e26acf5ca7e31",
    ("offline_batch", 0.3): "62df455997de1391fb2421fa4b9a39bc7b2075570ac4da1ce040ea9d70f433b2",
    ("offline_batch", 1.0): "a2503de25596be503190b725fe98f5841f6a8ce9ad61ff962370b9c5d8ee6de8",
    ("single_node_training", 0.3): "76bbf8e2a2246fe0d103b826b46b8775119d3e12c18520fe99d10abfd40b81b5",
    ("single_node_training", 1.0): "621b9e0997f50b0794a784d047aae1a7fc7007e8ac4629ee76fd1ccaae0d08c8",
}


def _answers(case: str):
    return validate_answers(json.loads((EXAMPLES / f"{case}.json").read_text(encoding="utf-8")))


def _document(case: str, offers) -> str:
    doc = advise(_answers(case), offers, today=TODAY).to_dict()
    return json.dumps(doc, ensure_ascii=False, sort_keys=True, default=str, indent=0)


@pytest.mark.parametrize(("case", "measured"), sorted(GOLDEN))
def test_advice_matches_the_stored_digest(case, measured):
    assert set(CASES) == {name for name, _share in GOLDEN}
    text = _document(case, build_offers(2000, measured=measured))
    assert hashlib.sha256(text.encode()).hexdigest() == GOLDEN[(case, measured)]


def _plain_ranking(offers, needs):
    """The reference: every check run on every offer, nothing shared, sorted as the ranking promises."""
    ctx = run.context(needs, TODAY)
    assessed = []
    for offer in offers:
        a = assessment.Assessment(offer)
        for name, check in registry.CONSTRAINTS.items():
            if offer.measurements or not registry.CONSTRAINT_SPECS[name].measured_only:
                check(a, ctx)
        assessed.append(a)
    eligible = [a for a in assessed if not a.excluded]
    costs = [a.cost.value for a in eligible if a.cost and a.cost.value]
    ctx.cheapest = min(costs) if costs else None
    for a in eligible:
        run.score(a, ctx)
    eligible.sort(key=lambda a: (-a.score, a.cost.value if a.cost and a.cost.value else math.inf, a.offer.id))
    for index, a in enumerate(eligible, start=1):
        a.rank = index
    excluded = sorted((a for a in assessed if a.excluded), key=lambda a: (len(a.excluded), a.offer.id))
    return eligible, excluded


def _plain_summary(eligible, excluded):
    """What the advice reports about the whole ranking, counted over every assessment."""
    everyone = eligible + excluded
    priced = [a for a in eligible if a.cost and a.cost.value]
    with_users = [a for a in eligible if a.user_rtt_ms]
    cities = {}
    for a in everyone:
        if a.city is not None:
            cities.setdefault(a.city.name, a.city)
    return {
        "to_confirm": engine.confirm_counts(eligible),
        "measure_first": engine.measure_first_counts(eligible),
        "to_confirm_count": sum(1 for a in eligible if a.confirm),
        "licence": sum(1 for a in everyone if any(r.code.startswith("licence.") for r in a.excluded)),
        "cheapest": min(priced, key=lambda a: a.cost.value).offer.id if priced else None,
        "nearest": min(with_users, key=lambda a: max(a.user_rtt_ms.values())).offer.id
        if with_users
        else None,
        "cities": list(cities),
        "providers": sorted({a.offer.provider.id for a in eligible}),
    }


def _worst_rtt(a):
    return max(a.user_rtt_ms.values())


def _column_summary(ranked):
    cheapest, nearest = ranked.cheapest(), ranked.nearest()
    return {
        "to_confirm": ranked.confirm_counts(),
        "measure_first": ranked.measure_first_counts(),
        "to_confirm_count": ranked.to_confirm_count(),
        "licence": ranked.licence_excluded_count(),
        "cheapest": cheapest.offer.id if cheapest else None,
        "nearest": nearest.offer.id if nearest else None,
        "cities": [city.name for city in ranked.cities()],
        "providers": sorted(ranked.eligible_provider_ids()),
    }


def _offer_documents(needs, assessed):
    return [json.dumps(run.assessment_dict(a, needs), ensure_ascii=False, default=str) for a in assessed]


@pytest.mark.parametrize(
    ("case", "measured", "seed"),
    [(case, 0.3, 11) for case in CASES] + [("distributed_training", 1.0, 11), ("offline_batch", 0.6, 4)],
)
def test_column_decisions_equal_every_check_run_on_every_offer(case, measured, seed):
    _assert_equivalent(build_offers(600, seed=seed, measured=measured), compute_needs(_answers(case)))


@pytest.mark.parametrize("case", ["offline_batch", "interactive_inference"])
def test_column_decisions_of_certifications_equal_the_plain_path(case):
    # ISO 27001 and 等保 3 wanted: providers without a record get 待确认, the others may be excluded
    needs = dataclasses.replace(compute_needs(_answers(case)), iso27001=True, dengbao_level=3)
    ranked = _assert_equivalent(build_offers(800, seed=7, measured=0.3), needs)
    assert ranked.confirm_counts().keys() >= {"iso27001", "dengbao"}


def _jittered(offers, seed):
    """The offers with every measured number moved a little: real measurements rarely repeat a value."""
    rng = random.Random(seed)
    out = []
    for offer in offers:
        moved = {
            key: dataclasses.replace(m, value=m.value * rng.uniform(0.9, 1.1))
            if isinstance(m.value, (int, float)) and key != "gpu_count"
            else m
            for key, m in offer.measurements.items()
        }
        out.append(dataclasses.replace(offer, measurements=moved))
    return out


@pytest.mark.parametrize(
    ("case", "rdma_required"),
    [(case, False) for case in CASES] + [("distributed_training", True)],
)
def test_column_forms_of_the_numeric_checks_equal_the_plain_path_on_measurements_that_never_repeat(
    case, rdma_required
):
    offers = _jittered(build_offers(700, seed=21, measured=0.6), seed=4)
    needs = compute_needs(_answers(case))
    if rdma_required:
        needs = dataclasses.replace(needs, rdma_required=True)
    _assert_equivalent(offers, needs)


def test_column_forms_exclude_slow_intranet_and_writes_and_ask_for_unknown_intranet_as_the_plain_path():
    offers = []
    for index, offer in enumerate(_jittered(build_offers(700, seed=23, measured=0.5), seed=5)):
        if index % 7 == 0:  # no intranet figure at all: to confirm
            offer = dataclasses.replace(offer, intranet_gbps=None, rdma_type="none", rdma_gbps=None)
        if index % 5 == 0 and offer.measurements:  # a measured checkpoint write rate
            write = dataclasses.replace(offer.measurements["intranet_gbps"], value=400.0 + index, unit="MB/s")
            offer = dataclasses.replace(offer, measurements={**offer.measurements, "write_mb_s": write})
        offers.append(offer)
    needs = compute_needs(_answers("distributed_training"))
    needs = dataclasses.replace(
        needs, needed_effective_gbps=60.0, checkpoint_write_mb_s=600.0, rdma_required=False
    )
    ranked = _assert_equivalent(offers, needs)
    codes = {reason.code for a in ranked.excluded for reason in a.excluded}
    assert {"intranet.too_slow", "storage.checkpoint"} <= codes
    assert "intranet_gbps" in ranked.confirm_counts()


def test_column_forms_of_an_unknown_step_time_and_of_data_residency_equal_the_plain_path():
    # step time not known: nobody excluded on the intranet, each offer with an intranet figure to confirm;
    # data must stay in 内蒙古: offers elsewhere excluded, offers without a datacenter province to confirm
    offers = []
    for index, offer in enumerate(_jittered(build_offers(700, seed=29, measured=0.5), seed=6)):
        if index % 7 == 0:
            offer = dataclasses.replace(offer, intranet_gbps=None, rdma_type="none", rdma_gbps=None)
        if index % 11 == 0:
            offer = dataclasses.replace(offer, datacenter_province=None, datacenter_city=None)
        offers.append(offer)
    needs = compute_needs(_answers("distributed_training"))
    needs = dataclasses.replace(
        needs,
        step_unknown=True,
        needed_effective_gbps=None,
        rdma_required=False,
        residency="province",
        residency_province="内蒙古",
    )
    ranked = _assert_equivalent(offers, needs)
    codes = {reason.code for a in ranked.excluded for reason in a.excluded}
    assert "residency.province" in codes and not codes & {"intranet.too_slow", "intranet.rdma"}
    assert {"step_time", "intranet_gbps", "datacenter_province"} <= set(ranked.confirm_counts())


def _assert_equivalent(offers, needs):
    """The column ranking's offers, order and counts equal the plain path's."""
    ranked = rank_offers(offers, needs, today=TODAY)
    eligible, excluded = _plain_ranking(offers, needs)
    assert len(ranked.eligible) == len(eligible) and len(ranked.excluded) == len(excluded)
    assert eligible and excluded
    assert _offer_documents(needs, ranked) == _offer_documents(needs, eligible + excluded)
    assert _column_summary(ranked) == _plain_summary(eligible, excluded)
    return ranked


def test_a_constraint_of_measured_offers_only_adds_nothing_to_the_others():
    offers = build_offers(300, seed=3, measured=0.5)
    only_measured = [name for name, spec in registry.CONSTRAINT_SPECS.items() if spec.measured_only]
    assert only_measured == ["evidence"]
    needs = advise(_answers("offline_batch"), offers[:1], today=TODAY).needs
    ctx = assessment.Context(needs, TODAY, {}, {}, {}, stale_before=TODAY)
    for offer in offers:
        if not offer.measurements:
            blank = assessment.Assessment(offer)
            registry.CONSTRAINTS["evidence"](blank, ctx)
            assert (
                assessment.Outcome.record(registry.CONSTRAINTS["evidence"], offer, ctx, ())
                is assessment.EMPTY
            )
            assert (blank.excluded, blank.marks, blank.stale, blank.penalty) == ((), (), frozenset(), 1.0)


def test_criteria_are_explained_when_read():
    advice = advise(_answers("distributed_training"), build_offers(200), today=TODAY)
    first = advice.eligible[0]
    assert [c.key for c in first.criteria] == list(run.weights_for(advice.needs))[: len(first.criteria)]
    assert all(c.reason.zh and c.reason.en for c in first.criteria)
    assert first.criteria is first.criteria  # written once
    assert all(a.criteria == [] for a in advice.excluded[:5])


def test_ranking_leaves_the_collector_as_it_found_it():
    answers, offers = _answers("offline_batch"), build_offers(300)
    assert gc.isenabled()
    advise(answers, offers, today=TODAY)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        advise(answers, offers, today=TODAY)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_fast_offer_constructor_and_cached_licence_numbers_equal_the_plain_ones():
    offer = build_offers(10)[3]
    values = {item.name: getattr(offer, item.name) for item in dataclasses.fields(OfferFacts)}
    assert OfferFacts.of(values) == OfferFacts(**values) == offer
    assert set(vars(OfferFacts.of(values))) == set(values)
    for number in ("京B1-20221234", "B1-20225678", "沪B2-20230001", "合字B1-20190001", "not a number"):
        ident = identify(number)
        assert parse_licence_number(number) == (
            ident.normalized or number,
            ident.kind,
            ident.province,
            ident.parts.get("issuer_level"),
            bool(ident.parts.get("foreign_invested")),
        )


@pytest.mark.parametrize("case", ["distributed_training", "offline_batch"])
def test_offers_measured_on_some_figures_only_get_the_advice_of_the_plain_path(case):
    # each measured offer keeps a different part of its figures (one, several, or ones no check reads), as
    # uploads of a single tool's output give them
    offers = []
    for index, offer in enumerate(build_offers(600, seed=13, measured=0.6)):
        keys = sorted(offer.measurements)
        kept = {key: offer.measurements[key] for position, key in enumerate(keys) if (index >> position) & 1}
        offers.append(dataclasses.replace(offer, measurements=kept))
    assert sum(1 for o in offers if set(o.measurements) == {"rtt_ms"}) > 5
    _assert_equivalent(offers, compute_needs(_answers(case)))


def test_a_measured_rdma_figure_below_the_claim_lowers_the_score():
    offer = next(o for o in build_offers(400, seed=5, measured=0.0) if o.rdma_type != "none" and o.rdma_gbps)
    answers = _answers("offline_batch")
    claimed = advise(answers, [offer], today=TODAY).ranked[0]
    measured = Measurement(offer.rdma_gbps * 0.3, "Gbps", run_id=7, link="/bench-runs/7")
    slow = dataclasses.replace(offer, measurements={"rdma_gbps": measured})
    (assessed,) = advise(answers, [slow], today=TODAY).ranked
    assert "evidence.below_claim.rdma_gbps" in [mark.code for mark in assessed.marks]
    assert assessed.penalty < 1.0 and claimed.penalty == 1.0
    assert next(f for f in assessment.figures_of(assessed) if f.key == "rdma_gbps").source == "measured"


def test_a_column_a_check_reads_but_does_not_declare_makes_the_column_ranking_differ(monkeypatch):
    # the budget works out the cost from the GPU count: without that column, offers that differ only in it
    # share one verdict, and the equivalence with the plain path breaks (the tests above have teeth)
    offers = build_offers(600, seed=11, measured=0.3)
    needs = compute_needs(_answers("distributed_training"))
    spec = registry.CONSTRAINT_SPECS["budget"]
    narrower = dataclasses.replace(spec, columns=("price_month_cny", "price_gpu_hour_cny"))
    monkeypatch.setitem(registry.CONSTRAINT_SPECS, "budget", narrower)
    ranked = rank_offers(offers, needs, today=TODAY)
    eligible, excluded = _plain_ranking(offers, needs)
    assert _offer_documents(needs, ranked) != _offer_documents(needs, eligible + excluded)


def test_the_ranking_reads_like_a_list_and_writes_each_assessment_once():
    offers = build_offers(300, seed=11)
    ranked = rank_offers(offers, compute_needs(_answers("offline_batch")), today=TODAY)
    assert len(ranked) == 300 == len(ranked.eligible) + len(ranked.excluded)
    assert ranked[0] is ranked.eligible[0] is ranked[:1][0] and ranked[0].rank == 1
    assert ranked[-1] is ranked.excluded[-1] and ranked[-1].rank is None and ranked[-1].excluded
    assert [a.rank for a in ranked.eligible[:3]] == [1, 2, 3]
    with pytest.raises(IndexError):
        ranked[300]
    with pytest.raises(IndexError):
        ranked.excluded[len(ranked.excluded)]
    provider = offers[7].provider.id
    own = ranked.of_provider(provider)
    assert {a.offer.id for a in own} == {o.id for o in offers if o.provider.id == provider}
    positions = [next(i for i, a in enumerate(ranked) if a is mine) for mine in own]
    assert positions == sorted(positions)
    assert ranked.of_provider(-1) == []


def test_a_column_form_that_decides_otherwise_than_its_check_makes_the_column_ranking_differ(monkeypatch):
    offers = build_offers(600, seed=11, measured=0.5)
    needs = compute_needs(_answers("single_node_training"))
    lenient = dataclasses.replace(
        registry.CONSTRAINT_SPECS["storage"], rows=lambda table, ctx: assessment.RowVerdict()
    )
    monkeypatch.setitem(registry.CONSTRAINT_SPECS, "storage", lenient)
    ranked = rank_offers(offers, needs, today=TODAY)
    eligible, excluded = _plain_ranking(offers, needs)
    assert _offer_documents(needs, ranked) != _offer_documents(needs, eligible + excluded)
