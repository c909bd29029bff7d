"""No exclusion without evidence: typical values and estimates mark offers; every reason has a source."""

from __future__ import annotations

from datetime import UTC, datetime

from app.advice.engine import advise
from app.advice.facts import SOURCE_LABELS, Measurement
from app.advice.ranking.run import assessment_dict
from tests.advice.factories import TODAY, offer, training_answers


def test_needs_met_only_by_unmeasured_offers_still_rank_them_marked_with_the_settling_checklist_item():
    # 100 GB checkpoints in 120 s need 833 MB/s; cloud disks typically write 150 MB/s, NFS 300 MB/s
    offers = [
        offer(1, storage_type="cloud_disk", nominal_iops=50000),
        offer(2, storage_type="nfs", nominal_iops=50000),
    ]
    advice = advise(training_answers(), offers, today=TODAY)
    assert [a.offer.id for a in advice.eligible] == [2, 1] and not advice.excluded
    for a in advice.eligible:
        data = assessment_dict(a, advice.needs)
        assert data["measure_before_signing"] and data["verify"] == [
            {"key": "write_mb_s", "checklist_key": "fio_checkpoint_write"}
        ]
    entry = next(e for e in advice.checklist if e.item.key == "fio_checkpoint_write").to_dict()
    assert entry["suite"] == "standard" and entry["params"]["write_size_mib"] == 10240
    assert entry["bench_command"].startswith("flask --app wsgi bench run SERVER_ID --suite standard --param ")
    assert entry["target_en"] == "at least 833 MB/s (100 GB within 120 s)"
    note = next(e for e in entry["evidence"] if e["kind"] == "measure_first")
    assert (
        note["count"] == 2
        and "measure before signing" in note["message_en"]
        and "先实测再签约" in note["message_zh"]
    )


def test_a_measured_figure_excludes_where_the_typical_value_only_marks():
    measured = Measurement(150, "MB/s", at=datetime(2026, 5, 20, tzinfo=UTC), run_id=4, link="/bench-runs/4")
    offers = [
        offer(1, storage_type="cloud_disk"),
        offer(2, storage_type="cloud_disk", measurements={"write_mb_s": measured}),
    ]
    advice = advise(training_answers(), offers, today=TODAY)
    by_id = {a.offer.id: a for a in advice.ranked}
    assert not by_id[1].excluded and by_id[1].verify == ("write_mb_s",)
    assert [(r.code, r.source) for r in by_id[2].excluded] == [("storage.checkpoint", "measured")]


def test_every_exclusion_names_the_source_of_the_figure_it_rests_on():
    offers = [
        offer(1, gpus_per_node=4),
        offer(2, intranet_gbps=1, rdma_type="none", rdma_gbps=None),
        offer(3, rdma_gbps=50, rdma_type="infiniband"),
        offer(4, price_month_cny=10**7),
        offer(6, measurements={"gpu_count": Measurement(0, "GPUs", run_id=9)}),
    ]
    answers = training_answers(budget={"monthly_cny": 10**6})
    advice = advise(answers, offers, today=TODAY)
    reasons = [(a.offer.id, r) for a in advice.excluded for r in a.excluded]
    assert {offer_id for offer_id, _ in reasons} == {1, 2, 3, 4, 6}
    assert all(reason.source in SOURCE_LABELS for _, reason in reasons)
    by_id = {a.offer.id: a for a in advice.ranked}
    assert [r.source for r in by_id[6].excluded] == ["measured"] and "0 GPUs" in by_id[6].excluded[0].en
    assert all(
        entry["source"]
        for a in advice.excluded
        for entry in assessment_dict(a, advice.needs)["excluded_because"]
    )
