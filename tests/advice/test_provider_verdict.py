"""The provider's verdict in the ranking, on plain facts: licence red flags exclude with the flag named, a
failure on evidence ranks on the measurement, and a claimed RDMA figure never scores where the measured
intranet contradicts the claims."""

from __future__ import annotations

from app.advice.deciding import rank_offers
from app.advice.engine import advise
from app.advice.facts import CheckFacts, FindingFacts, Measurement
from app.advice.provider_verdict import verdict_dict
from app.advice.requirements import compute_needs
from tests.advice.factories import TODAY, offer, provider, training_answers

# training_answers needs 56 Gbps effective (RDMA required); the offers claim RoCE 400 Gbps over a 100 Gbps
# intranet, which claimed RoCE at 90% covers easily.
BANDWIDTH_FAIL = FindingFacts(
    "benchmarks.bandwidth_below_claim",
    "blocker",
    "实测内网只有声称的 46%。",
    "measured intranet 46% of the claim.",
    12,
)


def ranked(offers, answers=None):
    advice = advise(answers or training_answers(), offers, today=TODAY)
    return {a.offer.id: a for a in advice.ranked}, advice


def codes(reasons):
    return [reason.code for reason in reasons]


def checked(pid, *findings, verdict="fail"):
    return provider(pid, check=CheckFacts(at=None, run_id=pid * 10, verdict=verdict), findings=findings)


def intranet(gbps):
    return {"intranet_gbps": Measurement(gbps, "Gbps", run_id=7, link="/bench-runs/7")}


def test_a_licence_red_flag_blocker_excludes_with_the_flag_named():
    coverage = FindingFacts("licence.coverage", "blocker", "机房不在许可范围", "datacenter not covered", 3)
    blacklisted = FindingFacts("filing.blacklisted", "blocker", "备案被列入黑名单", "filing blacklisted", 7)
    foreign = FindingFacts(
        "licence.foreign_invested", "warning", "合字许可证", "foreign-invested licence", 10
    )
    offers = [
        offer(1, provider=checked(1, coverage)),
        offer(2, provider=checked(2, blacklisted)),
        offer(3, provider=checked(3, foreign, verdict="needs_review")),
    ]
    by_id, _advice = ranked(offers)
    (reason,) = by_id[1].excluded
    assert reason.code == "finding.licence.coverage" and reason.source == "verified"
    assert "许可证红旗 3" in reason.zh and "机房不在许可范围" in reason.zh
    assert "licence red flag 3" in reason.en and "datacenter not covered" in reason.en
    # a blocker that is not about the licence still excludes, worded as before
    assert codes(by_id[2].excluded) == ["finding.filing.blacklisted"]
    assert "red flag" not in by_id[2].excluded[0].en
    # a licence red flag that only needs review (合字, flag 10) does not exclude
    assert by_id[3].excluded == () and by_id[3].rank is not None


def test_a_failure_on_evidence_stays_ranked_on_the_measurement_and_is_marked():
    failing = offer(1, provider=checked(1, BANDWIDTH_FAIL), intranet_gbps=100, measurements=intranet(90))
    by_id, advice = ranked([failing])
    a = by_id[1]
    assert a.excluded == () and a.rank == 1
    (mark,) = [m for m in a.marks if m.code == "verdict.fails_on_evidence"]
    assert "ranked on the measured figures" in mark.en and "（实测内网只有声称的 46%）" in mark.zh
    assert "(measured intranet 46% of the claim)" in mark.en  # quoted without its own full stop
    shown = verdict_dict(failing.provider)
    assert (shown["level"], shown["label_zh"], shown["ranked_on_measurements"]) == ("fail", "不通过", True)
    assert shown["findings"][0]["red_flag"] == 12 and shown["check_run_id"] == 10
    assert advice.to_dict()["offers"][0]["verdict"]["level"] == "fail"


def test_a_claimed_rdma_figure_contradicted_by_the_measured_intranet_does_not_score():
    # measured intranet 46 of the claimed 100 Gbps (a failure): the claimed RoCE 400 Gbps is not used, and
    # 46 Gbps is below the 56 Gbps needed, so the offer is excluded on the measured figure
    contradicted = offer(1, measurements=intranet(46))
    by_id, _advice = ranked([contradicted, offer(2)])
    a = by_id[1]
    assert codes(a.excluded) == ["intranet.too_slow"]
    assert a.excluded[0].source == "measured" and "46 Gbps" in a.excluded[0].en
    assert "（实测，TCP）" in a.excluded[0].zh  # the transport named as written, on the measured figure
    assert a.excluded[0].link == "/bench-runs/7"
    assert by_id[2].rank == 1  # the same claims without a measurement still count
    (mark,) = [m for m in a.marks if m.code == "evidence.rdma_contradicted"]
    assert "RDMA 400 Gbps: claimed, contradicted elsewhere: measure RDMA before signing" in mark.en
    assert "服务商声称，已被其他实测否定：签约前请实测 RDMA" in mark.zh and "46%" in mark.zh
    assert "rdma_gbps" in a.verify


def test_a_contradicted_rdma_claim_ranks_on_the_measured_intranet_where_it_suffices():
    answers = training_answers(model={"target_step_seconds": 60, "sync_share": 0.5})  # about 5.6 Gbps needed
    by_id, advice = ranked([offer(1, measurements=intranet(46)), offer(2)], answers)
    a = by_id[1]
    assert a.excluded == () and a.effective_gbps == 46  # iperf3 goodput, not 400 x 90%
    intranet_reason = next(c for c in a.criteria if c.key == "intranet").reason
    assert "46 Gbps" in intranet_reason.en and "measured" in intranet_reason.en
    assert by_id[2].effective_gbps == 360
    shown = advice.to_dict()["offers"]
    assert {"key": "rdma_gbps", "checklist_key": "rdma_nccl"} in shown[
        [o["offer_id"] for o in shown].index(1)
    ]["verify"]


def test_an_intranet_only_below_par_or_a_measured_rdma_figure_leaves_the_rdma_figure_alone():
    below_par = offer(1, measurements=intranet(60))  # 60%: below par, not a failure
    measured_rdma = offer(
        2, measurements={**intranet(46), "rdma_gbps": Measurement(380, "Gbps", run_id=8)}
    )  # RDMA measured itself: the measurement counts, nothing to contradict
    by_id, _advice = ranked([below_par, measured_rdma])
    for a in by_id.values():
        assert a.excluded == () and "evidence.rdma_contradicted" not in codes(a.marks)
        assert "rdma_gbps" not in a.verify
    assert by_id[1].effective_gbps == 360 and by_id[2].effective_gbps == 380


def test_the_column_ranking_agrees_on_contradicted_claims():
    offers = [offer(1, measurements=intranet(46)), offer(2, measurements=intranet(60)), offer(3)]
    needs = compute_needs(training_answers())
    ranking = rank_offers(offers, needs, today=TODAY)
    assert ranking.measure_first_counts() == {}  # the only contradicted offer is excluded (too slow)
    assert len(ranking.excluded) == 1 and ranking.excluded[0].offer.id == 1
    loose = compute_needs(training_answers(model={"target_step_seconds": 60, "sync_share": 0.5}))
    assert rank_offers(offers, loose, today=TODAY).measure_first_counts() == {"rdma_nccl": 1}


def test_the_verdict_without_a_session_is_the_latest_check_runs_level():
    assert verdict_dict(provider(1))["label_zh"] == "未核验"
    shown = verdict_dict(checked(2, verdict="needs_review"))
    assert (shown["level"], shown["label_en"], shown["unverified"]) == ("needs_review", "needs review", None)
    many = [FindingFacts(f"rule.{n}", "warning", f"警告{n}", f"warning {n}") for n in range(5)]
    shown = verdict_dict(checked(3, *many, verdict="needs_review"))
    assert len(shown["findings"]) == 3 and shown["more_findings"] == 2
