"""Issue 27 items 1-3 in the pure advice: "not sure" answers, data residency, the checklist's commands.

Hand arithmetic used below (training_answers: 4 nodes x 8 GPUs, 7B parameters in bf16, sync share 0.3):
gradient S = 7e9 x 2 bytes = 14 GB; ring all-reduce per node = 2(4-1)/4 x 14 GB = 21 GB = 168 Gbit.
A claimed Ethernet line rate counts at 94% (TCP goodput):
  25 Gbps -> 23.5 Gbps effective; one sync 168 / 23.5 = 7.149 s; shortest step 7.149 / 0.3 = 23.83 s ("23.8")
   1 Gbps -> 0.94 Gbps effective; one sync 168 / 0.94 = 178.7 s; shortest step 178.7 / 0.3 = 595.7 s ("596")
"""

from __future__ import annotations

import math

import pytest

from app.advice import checklist, sizing
from app.advice.answers import Residency, validate_answers
from app.advice.engine import advise
from app.advice.ranking.run import assessment_dict
from app.core.errors import InvalidInput
from tests.advice.factories import TODAY, licence, offer, provider, training_answers

UNSURE = {"step_unknown": True, "target_step_seconds": None}


def _tcp_offers():
    return [
        offer(1, intranet_gbps=25, rdma_type="none", rdma_gbps=None),
        offer(2, intranet_gbps=1, rdma_type="none", rdma_gbps=None),
    ]


def test_shortest_step_is_one_sync_divided_by_the_sync_share():
    # 168 Gbit over 25 Gbps at 94%: 7.149 s a sync; at most 30% of a step -> 23.83 s
    assert sizing.shortest_step_seconds(21e9, 25, 0.94, 0.3) == pytest.approx(23.8298, rel=1e-4)
    assert sizing.shortest_step_seconds(21e9, 1, 0.94, 0.3) == pytest.approx(595.745, rel=1e-4)
    assert sizing.shortest_step_seconds(21e9, 25, 0.94, 0) == math.inf


def test_not_sure_of_the_step_excludes_no_offer_and_says_the_shortest_step_each_supports():
    advice = advise(training_answers(model=UNSURE), _tcp_offers(), today=TODAY)
    assert advice.needs.step_unknown and advice.needs.needed_effective_gbps is None
    assert [a.offer.id for a in advice.excluded] == []
    marks = {}
    for a in advice.eligible:
        shown = assessment_dict(a, advice.needs)
        assert shown["to_confirm"] and "step_time" in [c["key"] for c in shown["confirm"]]
        marks[a.offer.id] = next(m for m in shown["marks"] if m["code"] == "intranet.step_unknown")
    assert "步长 23.8 s 及以上够用" in marks[1]["message_zh"]
    assert "fine for steps of 23.8 s or longer" in marks[1]["message_en"]
    assert "shorter than 23.8 s would exclude this offer" in marks[1]["message_en"]  # the answer that decides
    assert "步长 596 s 及以上够用" in marks[2]["message_zh"] and marks[2]["source"] == "claimed"
    table = advice.to_dict()["step_time"]
    assert table["sync_share"] == 0.3
    assert [(row["offer_id"], row["gbps"], row["source"]) for row in table["offers"]] == [
        (1, 25, "claimed"),
        (2, 1, "claimed"),
    ]
    assert [round(row["shortest_step_s"], 2) for row in table["offers"]] == [23.83, 595.74]
    target = next(q for q in advice.needs.quantities if q.key == "target_step")
    assert target.display("zh") == "不确定" and target.display("en") == "not sure"
    assert not any(q.key in ("intranet_gbps_needed", "rdma") for q in advice.needs.quantities)


@pytest.mark.parametrize(
    ("step", "excluded"),
    [(30, [2]), (20, [1, 2])],  # 30 s: 9 s for the sync, 18.7 Gbps needed; 20 s: 6 s, 28 Gbps
)
def test_a_step_time_on_either_side_of_the_shortest_one_settles_what_not_sure_left_open(step, excluded):
    advice = advise(training_answers(model={"target_step_seconds": step}), _tcp_offers(), today=TODAY)
    assert sorted(a.offer.id for a in advice.excluded) == excluded
    assert "step_time" not in advice.to_dict() and not advice.needs.step_unknown


def test_an_offer_without_an_intranet_figure_is_asked_for_it_and_gets_no_step():
    advice = advise(
        training_answers(model=UNSURE),
        [offer(3, intranet_gbps=None, rdma_type="none", rdma_gbps=None)],
        today=TODAY,
    )
    shown = assessment_dict(advice.eligible[0], advice.needs)
    assert [c["key"] for c in shown["confirm"]] == ["intranet_gbps"]
    assert advice.to_dict()["step_time"]["offers"][0]["shortest_step_s"] is None


def test_the_checklist_says_why_the_step_time_is_to_confirm_and_what_to_do():
    advice = advise(training_answers(model=UNSURE), _tcp_offers(), today=TODAY)
    entry = next(e for e in advice.checklist if e.item.key == "intranet_iperf3").to_dict()
    note = next(e for e in entry["evidence"] if e.get("fact") == "step_time")
    assert note["count"] == 2 and "不确定" in note["message_zh"] and "training log" in note["message_en"]


def test_the_step_time_is_required_unless_the_buyer_says_not_sure_and_not_sure_wins_over_a_typed_one():
    with pytest.raises(InvalidInput) as caught:
        training_answers(model={"target_step_seconds": None})
    assert [e.field for e in caught.value.errors] == ["model.target_step_seconds"]
    assert "不确定" in caught.value.errors[0].message
    answers = training_answers(model={"step_unknown": True, "target_step_seconds": 5})
    assert answers.model.step_unknown and answers.model.target_step_seconds is None


def test_not_sure_of_the_uplink_shows_the_upload_over_typical_uplinks_and_keeps_the_upload_check():
    # 1000 GB x 8 = 8e12 bit: 50 Mbps 160,000 s = 44.4 h (under 72 h: in hours); 100 Mbps 80,000 s = 22.2 h;
    # 1000 Mbps 8,000 s = 2.22 h
    with pytest.raises(InvalidInput) as caught:
        training_answers(data={"source": "office_upload"})
    assert [e.field for e in caught.value.errors] == ["site.uplink_mbps"]
    answers = training_answers(data={"source": "office_upload"}, site={"uplink_unknown": True})
    advice = advise(answers, _tcp_offers(), today=TODAY)
    upload = next(q for q in advice.needs.quantities if q.key == "upload_hours")
    assert upload.value == "not_sure" and advice.needs.upload_s is None
    assert "50 Mbps 约 44.4 小时；100 Mbps 约 22.2 小时；1000 Mbps 约 2.22 小时" in upload.arithmetic_zh
    assert "100 Mbps: about 22.2 h" in upload.arithmetic_en
    assert "upload_trial" in [e.item.key for e in advice.checklist]


# ---------------------------------------------------------------- data residency
def _placed_offers():
    # one provider whose cross-regional licence covers both provinces: only residency can exclude
    national = provider(licences=(licence("B1-20230008", coverage=["四川", "广东"]),))
    return [
        offer(1, provider=national, datacenter_province="四川", datacenter_city="成都"),
        offer(2, provider=national, datacenter_province="广东", datacenter_city="广州"),
        offer(3, provider=national, datacenter_province=None, datacenter_city=None, datacenter_name=None),
    ]


def test_data_that_must_stay_in_a_province_excludes_offers_elsewhere_with_the_reason():
    answers = training_answers(compliance={"residency": "province", "residency_province": "川"})
    assert answers.compliance.residency_province == "四川"
    advice = advise(answers, _placed_offers(), today=TODAY)
    assert [a.offer.id for a in advice.excluded] == [2]
    reason = advice.excluded[0].excluded[0]
    assert reason.code == "residency.province"
    assert reason.zh == "机房在广东，而你要求数据留在四川"
    assert reason.en == "the datacenter is in 广东; your data must stay in 四川"
    unplaced = assessment_dict(next(a for a in advice.eligible if a.offer.id == 3), advice.needs)
    assert "datacenter_province" in [c["key"] for c in unplaced["confirm"]]
    residency = next(q for q in advice.needs.quantities if q.key == "residency")
    assert residency.display("zh") == "四川"


def test_data_that_must_stay_in_mainland_china_excludes_no_registered_datacenter():
    answers = training_answers(compliance={"residency": "mainland", "residency_province": "广东"})
    assert answers.compliance.residency_province is None  # only kept when one province is asked for
    advice = advise(answers, _placed_offers(), today=TODAY)
    assert not advice.excluded
    assert advice.ranked.confirm_counts()["datacenter_province"] == 1
    residency = next(q for q in advice.needs.quantities if q.key == "residency")
    assert residency.display("en") == "mainland China"


def test_a_province_is_required_when_the_data_must_stay_in_one_and_must_be_a_province():
    with pytest.raises(InvalidInput) as caught:
        training_answers(compliance={"residency": "province"})
    assert [e.field for e in caught.value.errors] == ["compliance.residency_province"]
    with pytest.raises(InvalidInput) as caught:
        training_answers(compliance={"residency": "province", "residency_province": "香港"})
    assert [e.field for e in caught.value.errors] == ["compliance.residency_province"]


def test_answers_stored_before_these_questions_still_load_with_no_limit_and_a_known_step():
    stored = {
        "workload": {"kind": "distributed_training"},
        "compute": {"nodes": 2, "gpus_per_node": 8},
        "model": {"parameters_billion": 7, "target_step_seconds": 10},
        "data": {"dataset_gb": 10, "source": "at_provider"},
        "site": {"office_city": "北京", "uplink_mbps": 100},
        "checkpoint": {"size_gb": 14, "acceptable_stall_seconds": 60},
        "compliance": {"iso27001": False, "dengbao_level": 0},
    }
    answers = validate_answers(stored)
    assert answers.compliance.residency == Residency.none and answers.compliance.residency_province is None
    assert not answers.model.step_unknown and not answers.site.uplink_unknown


# ---------------------------------------------------------------- the checklist's commands
def test_gpuvet_commands_are_told_apart_from_tool_commands_and_notes_quote_no_command():
    items = {item.key: item for item in checklist.items()}
    assert items["company_identity"].gpuvet_command
    assert not items["intranet_iperf3"].gpuvet_command and items["intranet_iperf3"].command.startswith(
        "iperf3"
    )
    offers = [offer(1, storage_type="cloud_disk", nominal_iops=50000)]
    advice = advise(training_answers(), offers, today=TODAY)
    entries = [entry.to_dict() for entry in advice.checklist]
    notes = [ev for e in entries for ev in e["evidence"] if ev["kind"] == "measure_first"]
    assert notes and not any("flask" in ev["message_zh"] + ev["message_en"] for ev in notes)
    identity = next(e for e in entries if e["key"] == "company_identity")
    assert identity["gpuvet_command"] and identity["command"].startswith("flask --app wsgi vet identify")
