"""Ranking on plain facts: constraints exclude with the reason, criteria score, measured beats claimed."""

from __future__ import annotations

from app.advice.engine import advise
from app.advice.facts import CheckFacts, FindingFacts, Measurement
from app.advice.ranking.assessment import figures_of
from app.advice.ranking.run import assessment_dict
from tests.advice.factories import TODAY, inference_answers, offer, provider, training_answers


def ranked(answers, offers):
    advice = advise(answers, offers, today=TODAY)
    return {a.offer.id: a for a in advice.ranked}, advice


def codes(assessment):
    return [reason.code for reason in assessment.excluded]


def test_intranet_1g_10g_and_rdma_against_a_56_gbps_need():
    # needs 21 GB per step within 3 s = 56 Gbps effective, so RDMA is required (above 25 Gbps)
    offers = [
        offer(1, intranet_gbps=1, rdma_type="none", rdma_gbps=None),
        offer(2, intranet_gbps=10, rdma_type="none", rdma_gbps=None),
        offer(3, intranet_gbps=100, rdma_type="roce", rdma_gbps=200),
        offer(4, intranet_gbps=25, rdma_type="infiniband", rdma_gbps=50),
    ]
    by_id, advice = ranked(training_answers(), offers)
    assert advice.needs.needed_effective_gbps == 56
    assert advice.needs.rdma_required
    assert codes(by_id[1]) == ["intranet.rdma"]
    assert codes(by_id[2]) == ["intranet.rdma"]
    assert by_id[3].rank == 1
    # 200 Gbps RoCE at 90%: 180 Gbps effective, 21 GB x 8 / 180 Gbps = 0.933 s per sync
    assert round(by_id[3].sync_s, 3) == 0.933
    # 50 Gbps IB at 90% = 45 Gbps < 56: too slow, with its sync time in the reason
    assert codes(by_id[4]) == ["intranet.too_slow"]
    assert "3.73 s" in by_id[4].excluded[0].en


def test_without_rdma_need_ethernet_sync_time_is_scored():
    answers = training_answers(model={"target_step_seconds": 60, "sync_share": 0.5})  # 30 s -> 5.6 Gbps
    by_id, advice = ranked(
        answers,
        [
            offer(1, intranet_gbps=1, rdma_type="none", rdma_gbps=None),
            offer(2, intranet_gbps=10, rdma_type="none", rdma_gbps=None),
        ],
    )
    assert not advice.needs.rdma_required and advice.needs.rdma_recommended is False
    # 1 Gbps at 94%: 168e9 / 0.94e9 = 178.7 s > 30 s
    assert codes(by_id[1]) == ["intranet.too_slow"]
    assert "179 s" in by_id[1].excluded[0].en
    assert by_id[2].rank == 1 and round(by_id[2].sync_s, 1) == 17.9


def test_a_measured_figure_beats_the_claim_and_says_so():
    measured = offer(1, measurements={"rdma_gbps": Measurement(40, "Gbps", link="/runs/7")})
    claimed = offer(2)
    by_id, _advice = ranked(training_answers(), [measured, claimed])
    assert codes(by_id[1]) == ["intranet.too_slow"]
    assert "实测" in by_id[1].excluded[0].zh
    figures = {key: {f.key: f for f in figures_of(by_id[key])} for key in (1, 2)}
    figure = figures[1]["rdma_gbps"]
    assert (figure.value, figure.source, figure.link) == (40, "measured", "/runs/7")
    assert figures[2]["rdma_gbps"].source == "claimed"
    assert figures[2]["write_mb_s"].source == "assumed"


def test_checkpoint_shortfall_on_a_typical_value_keeps_the_offer_ranked_and_marked():
    by_id, _advice = ranked(training_answers(), [offer(1, storage_type="cloud_disk", nominal_iops=50000)])
    assert codes(by_id[1]) == [] and by_id[1].rank == 1
    assert by_id[1].verify == ("write_mb_s",)
    mark = next(m for m in by_id[1].marks if m.code == "verify.write_mb_s")
    # 100 GB at a typical 150 MB/s = 667 s
    assert "667 s" in mark.en and mark.en.startswith("measure before signing") and "先实测再签约" in mark.zh
    assert mark.source == "assumed"


def test_measured_checkpoint_shortfall_excludes_with_the_stall_and_its_source():
    slow = Measurement(150, "MB/s", run_id=3)
    by_id, advice = ranked(training_answers(), [offer(1, measurements={"write_mb_s": slow})])
    assert codes(by_id[1]) == ["storage.checkpoint"]
    assert "667 s" in by_id[1].excluded[0].en and "measured" in by_id[1].excluded[0].en
    data = assessment_dict(by_id[1], advice.needs)
    assert [entry["source"] for entry in data["excluded_because"]] == ["measured"]


def test_blocker_findings_exclude_and_warnings_lower_the_score():
    blocked = provider(
        2,
        check=CheckFacts(at=None),
        findings=(FindingFacts("licence.status", "blocker", "许可证已吊销", "licence revoked", 4),),
    )
    warned = provider(
        3,
        check=CheckFacts(at=None),
        findings=(FindingFacts("names.mismatch", "warning", "名称不一致", "names differ", 5),),
    )
    clean = provider(4, check=CheckFacts(at=None))
    unchecked = provider(5)
    offers = [
        offer(2, provider=blocked),
        offer(3, provider=warned),
        offer(4, provider=clean),
        offer(5, provider=unchecked),
    ]
    by_id, advice = ranked(training_answers(), offers)
    assert codes(by_id[2]) == ["finding.licence.status"]
    assert "licence revoked" in by_id[2].excluded[0].en

    def credentials(a):
        return next(c for c in a.criteria if c.key == "credentials")

    assert credentials(by_id[4]).score == 1.0
    assert credentials(by_id[3]).score == 0.75
    assert credentials(by_id[5]).score == 0.5 and "unverified" in credentials(by_id[5]).reason.en
    assert by_id[4].score > by_id[3].score > by_id[5].score
    notes = advice.to_dict()["summary"]["unverified"]
    assert any(
        note["code"] == "credentials.unchecked" and note["message_en"].startswith("1 of 4") for note in notes
    )


def test_shared_bandwidth_is_excluded_when_dedicated_is_needed_and_marked_otherwise():
    shared = offer(
        1,
        bandwidth_type="shared",
        datacenter_province="上海",
        datacenter_city="上海",
        provider=provider(
            1,
            licences=(
                provider()
                .licences[0]
                .__class__.from_record(
                    number_raw="沪B1-20240001",
                    business_items=["B11"],
                    b11_includes_resource_collab=True,
                    coverage=[],
                    status="正常",
                    issued_on=None,
                    expires_on=None,
                ),
            ),
        ),
    )
    by_id, _ = ranked(inference_answers(), [shared])
    assert "bandwidth.shared" in codes(by_id[1])
    by_id, _ = ranked(training_answers(), [offer(1, bandwidth_type="shared")])
    assert codes(by_id[1]) == []
    assert [mark.code for mark in by_id[1].marks] == ["bandwidth.shared"]


def test_latency_budget_excludes_far_datacenters():
    # 40 ms for the network; Beijing from Shanghai is about 21 ms, Urumqi about 54 ms
    near = offer(1)
    far = offer(
        2,
        datacenter_province="新疆",
        datacenter_city="乌鲁木齐",
        provider=provider(
            2,
            licences=(
                provider()
                .licences[0]
                .__class__.from_record(
                    number_raw="新B1-20240002",
                    business_items=["B11"],
                    b11_includes_resource_collab=True,
                    coverage=[],
                    status="正常",
                    issued_on=None,
                    expires_on=None,
                ),
            ),
        ),
    )
    by_id, advice = ranked(inference_answers(), [near, far])
    assert advice.needs.network_budget_ms == 40
    assert by_id[1].rank == 1
    # 54 ms against 40 ms: an estimate within the 50% margin marks the offer instead of excluding it
    assert codes(by_id[2]) == [] and by_id[2].rank == 2 and by_id[2].verify == ("rtt_ms",)
    data = assessment_dict(by_id[2], advice.needs)
    assert data["measure_before_signing"] and data["verify"][0]["checklist_key"] == "ping_users"
    by_id, advice = ranked(inference_answers(users={"model_time_ms": 275}), [near, far])
    assert advice.needs.network_budget_ms == 25
    assert codes(by_id[2]) == ["latency.budget"]
    assert "乌鲁木齐" in by_id[2].excluded[0].zh and by_id[2].excluded[0].source == "estimated"


def test_budget_gpu_and_compliance_constraints():
    answers = training_answers(
        compute={"gpu_strict": True, "min_gpu_memory_gb": 80},
        budget={"monthly_cny": 300000},
        compliance={"iso27001": True, "dengbao_level": 3},
    )
    certified = provider(9, iso27001=True, dengbao_level=3)
    lapsed = provider(8, dengbao_level=2, certifications_on_record=frozenset({"iso27001", "dengbao"}))
    offers = [
        offer(1, provider=certified),  # 4 x 80000 = 320000 > 300000
        offer(2, provider=certified, price_month_cny=70000, gpu_model="H20", gpu_memory_gb=96),
        offer(3, provider=certified, price_month_cny=70000, gpu_memory_gb=40, gpus_per_node=4),
        offer(4, price_month_cny=70000),  # no ISO 27001 and no 等保 on record: to confirm, not excluded
        offer(5, provider=certified, price_month_cny=70000, gpu_model="A800"),
        offer(6, provider=lapsed, price_month_cny=70000),  # ISO 27001 expired, 等保 level 2 on record
    ]
    by_id, advice = ranked(answers, offers)
    assert codes(by_id[1]) == ["cost.budget"]
    assert codes(by_id[2]) == ["gpu.model"]
    assert codes(by_id[3]) == ["gpu.per_node", "gpu.memory"]
    assert codes(by_id[6]) == ["compliance.iso27001", "compliance.dengbao"]
    assert {by_id[4].rank, by_id[5].rank} == {1, 2} and by_id[4].confirm == ("iso27001", "dengbao")
    data = assessment_dict(by_id[4], advice.needs)
    assert data["to_confirm"] and not data["excluded"]
    assert [item["checklist_key"] for item in data["confirm"]] == ["certifications", "certifications"]
    assert "ISO 27001" in data["confirm"][0]["ask_en"] and "待确认" in data["marks"][0]["message_zh"]
    (faq,) = [item for item in advice.faq if item["key"] == "to_confirm"]
    assert faq["answer_en"].startswith("1 ranked offers lack a record")


def test_cost_is_scored_against_the_cheapest_and_explained():
    by_id, _ = ranked(
        training_answers(),
        [offer(1, price_month_cny=80000), offer(2, price_month_cny=40000, price_gpu_hour_cny=5)],
    )
    cost1 = next(c for c in by_id[1].criteria if c.key == "cost")
    cost2 = next(c for c in by_id[2].criteria if c.key == "cost")
    assert cost2.score == 1.0 and cost1.score == 0.36  # 115200 / 320000
    # offer 2: 40000 x 4 = 160000 by month; 5 x 8 x 720 x 4 = 115200 by GPU-hour, the cheaper
    assert by_id[2].cost.basis == "gpu_hour" and by_id[2].cost.value == 115200
    assert "GPU-hour" in cost2.reason.en


def test_offer_json_shows_score_reasons_figures_and_sources():
    by_id, advice = ranked(training_answers(), [offer(1), offer(2, gpus_per_node=2)])
    data = assessment_dict(by_id[1], advice.needs)
    assert data["rank"] == 1 and data["score"] > 0 and not data["excluded"]
    assert {reason["criterion"] for reason in data["reasons"]} >= {"cost", "gpu", "intranet", "storage"}
    assert all(reason["message_zh"] and reason["message_en"] for reason in data["reasons"])
    sources = {figure["key"]: figure["source"] for figure in data["figures"]}
    assert sources["rdma_gbps"] == "claimed" and sources["rtt_ms"] == "estimated"
    excluded = assessment_dict(by_id[2], advice.needs)
    assert excluded["excluded"] and excluded["score"] is None and excluded["excluded_because"]
    order = [item["offer_id"] for item in advice.to_dict()["offers"]]
    assert order == [1, 2]


def test_no_eligible_offer_shows_the_nearest_misses_with_gap_relaxation_count_and_step():
    answers = training_answers(compute={"min_gpu_memory_gb": 80}, budget={"monthly_cny": 100000})
    offers = [
        offer(1, price_month_cny=30000),  # 4 x 30000 = 120000 > 100000: over budget only
        offer(2, price_month_cny=28000),  # 112000: over budget only, the nearer of the two
        offer(3, price_month_cny=20000, gpu_memory_gb=40),  # below the GPU memory only
        offer(4, price_month_cny=30000, gpu_memory_gb=40),  # both
        offer(5, price_month_cny=20000, provider=provider(7, status="rejected")),  # no answer helps
    ]
    advice = advise(answers, offers, today=TODAY)
    data = advice.to_dict(step_url=lambda step: f"/cases/1/steps/{step}")
    assert data["summary"]["eligible"] == 0
    misses = data["nearest_misses"]
    by_id = {item["offer_id"]: item for item in misses["offers"]}
    assert [item["offer_id"] for item in misses["offers"]] == [2, 1, 3, 4]
    (budget,) = by_id[1]["misses"]
    assert budget["code"] == "cost.budget" and budget["have"] == 120000 and budget["need"] == 100000
    assert budget["gap_en"] == "budget ¥120,000/month vs ¥100,000" and "预算 ¥100,000" in budget["gap_zh"]
    # relaxing the budget to offer 1's cost brings in offers 1 and 2; to offer 2's, only offer 2
    assert budget["brings_in"] == 2 and by_id[2]["misses"][0]["brings_in"] == 1
    assert budget["step"] == "budget" and budget["step_url"] == "/cases/1/steps/budget"
    assert "120,000" in budget["relax_en"] and "2 offer(s)" in budget["relax_en"]
    (memory,) = by_id[3]["misses"]
    assert memory["gap_en"] == "GPU memory 40 GB claimed by provider vs 80 needed"
    assert memory["step"] == "compute"
    assert by_id[4]["conditions"] == 2 and {m["brings_in"] for m in by_id[4]["misses"]} == {0}
    relax = {item["code"]: item["brings_in"] for item in misses["relaxations"]}
    assert relax == {"cost.budget": 2, "gpu.memory": 1} and misses["unrelaxable"] == 1
    assert "nothing_fits" in {item["key"] for item in data["faq"]}
    assert advise(training_answers(), offers[:1], today=TODAY).to_dict()["nearest_misses"] is None


def test_unrecorded_figures_keep_offers_ranked_and_to_confirm():
    nowhere = offer(2, datacenter_city=None, datacenter_province=None, datacenter_name=None)
    by_id, advice = ranked(inference_answers(), [nowhere])
    # no datacenter city: the latency cannot be judged, which is a question for the provider, not a failure
    assert codes(by_id[2]) == [] and by_id[2].rank == 1 and by_id[2].confirm == ("datacenter_city",)
    by_id, advice = ranked(
        training_answers(model={"parameters_billion": 0.1}),
        [offer(3, intranet_gbps=None, rdma_type="none", rdma_gbps=None)],
    )
    assert by_id[3].rank == 1 and "intranet_gbps" in by_id[3].confirm
    data = assessment_dict(by_id[3], advice.needs)
    asks = {item["key"]: item["ask_en"] for item in data["confirm"]}
    assert data["to_confirm"] and "iperf3" in asks["intranet_gbps"]
