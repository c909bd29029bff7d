"""Ranking the demo registry: licence, coverage and shared-bandwidth problems exclude or mark offers."""

from __future__ import annotations

from sqlmodel import select

from app.advice.answers import validate_answers
from app.cases import cases
from app.credentials import checks
from app.models import Provider
from tests.cases.conftest import codes, example, offers_named


def advice_for(session, kind):
    return cases.advise_answers(session, answers=validate_answers(example(kind))).to_dict()


def test_b2_only_outside_province_and_shared_bandwidth_on_the_demo_data(demo_loaded):
    advice = advice_for(demo_loaded, "distributed_training")
    offers = advice["offers"]

    (b2_only,) = offers_named(offers, "虚构极光云科技有限公司")
    assert b2_only["excluded"] and codes(b2_only) == ["licence.no_b11"]
    assert "B21、B25" in b2_only["excluded_because"][0]["message_zh"]
    assert "without B11" in b2_only["excluded_because"][0]["message_en"]

    guian = next(
        o for o in offers_named(offers, "虚构跨省数据科技有限公司") if o["datacenter"]["city"] == "贵安新区"
    )
    assert "licence.outside_coverage" in codes(guian)
    assert "机房在贵州" in guian["excluded_because"][0]["message_zh"]
    assert "仅在浙江有效" in guian["excluded_because"][0]["message_zh"]

    wulanchabu = next(
        o for o in offers_named(offers, "虚构全网算力有限公司") if o["datacenter"]["city"] == "乌兰察布"
    )
    assert "licence.outside_coverage" in codes(wulanchabu)
    beijing = next(
        o for o in offers_named(offers, "虚构全网算力有限公司") if o["datacenter"]["city"] == "北京"
    )
    assert "licence.outside_coverage" not in codes(beijing)

    # shared bandwidth does not matter much to multi-node training: marked; its cloud disk's write rate is
    # only typical for the type, so the offer stays ranked, marked "measure before signing"
    for shared in offers_named(offers, "虚构共享带宽有限公司"):
        assert "bandwidth.shared" in [mark["code"] for mark in shared["marks"]]
        assert "storage.checkpoint" not in codes(shared)
        assert {"key": "write_mb_s", "checklist_key": "fio_checkpoint_write"} in shared["verify"]
        assert shared["measure_before_signing"] is not shared["excluded"]

    ranked = [o for o in offers if not o["excluded"]]
    assert ranked and [o["rank"] for o in ranked] == list(range(1, len(ranked) + 1))
    assert ranked[0]["provider_name"] == "示例星河算力科技有限公司"
    assert all(o["score"] is not None and o["reasons"] for o in ranked)
    assert all(o["score"] is None and o["excluded_because"] for o in offers if o["excluded"])


def test_shared_bandwidth_is_excluded_where_the_case_needs_dedicated(demo_loaded):
    advice = advice_for(demo_loaded, "offline_batch")
    for shared in offers_named(advice["offers"], "虚构共享带宽有限公司"):
        assert "bandwidth.shared" in codes(shared)
        reason = next(r for r in shared["excluded_because"] if r["code"] == "bandwidth.shared")
        assert "共享" in reason["message_zh"] and "dedicated" in reason["message_en"]


def test_each_example_gets_requirements_offers_checklist_and_faq(demo_loaded):
    for kind in ("distributed_training", "single_node_training", "interactive_inference", "offline_batch"):
        advice = advice_for(demo_loaded, kind)
        assert advice["workload"]["kind"] == kind
        assert advice["requirements"] and all(q["arithmetic_zh"] for q in advice["requirements"])
        assert advice["summary"]["eligible"] >= 1, kind
        assert advice["checklist"] and advice["faq"]


def test_credential_findings_feed_the_ranking_and_the_checklist(demo_loaded):
    session = demo_loaded
    names = ("示例星河算力科技有限公司", "虚构乱码数据有限公司", "虚构个人备案科技有限公司")
    for provider in session.exec(select(Provider).where(Provider.legal_name.in_(names))).all():
        checks.run_check(session, provider_id=provider.id)
    advice = cases.advise_answers(session, answers=validate_answers(example("single_node_training")))
    offers = advice.to_dict()["offers"]

    (garbled,) = offers_named(offers, "虚构乱码数据有限公司")
    assert any(code.startswith("finding.identifier") for code in codes(garbled))

    (personal,) = offers_named(offers, "虚构个人备案科技有限公司")
    credentials = next(r for r in personal["reasons"] if r["criterion"] == "credentials")
    assert credentials["score"] == 0.5 and "2 warning" in credentials["message_en"]

    xinghe = offers_named(offers, "示例星河算力科技有限公司")
    # no credential problems: the H800 node is over budget, but not for a finding
    assert all(not any(c.startswith("finding.") for c in codes(o)) for o in xinghe)

    provider_id = xinghe[0]["provider_id"]
    entries = {e.item.key: e for e in cases.provider_checklist(advice, provider_id=provider_id, ticks=[])}
    assert entries["licence_b11_coverage"].status == "passed"
    assert entries["licence_b11_coverage"].evidence[0]["kind"] == "check"
    personal_entries = {
        e.item.key: e for e in cases.provider_checklist(advice, provider_id=personal["provider_id"], ticks=[])
    }
    assert personal_entries["company_identity"].status == "failed"
    notes = advice.to_dict()["summary"]["unverified"]
    assert notes[0]["code"] == "credentials.unchecked" and notes[0]["message_en"].startswith(
        "15 of 18 providers"
    )
