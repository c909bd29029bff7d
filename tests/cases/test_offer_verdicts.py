"""The provider's verdict in the advice and the case report (issue 24 item 3), on real check runs.

The analyst's case: a provider whose check fails because its measured intranet is 46% of the claim was ranked
on its claimed RDMA figure with no verdict in sight; a provider whose ICP filing belongs to a private person
was shown as #2 marked only "to confirm"; a licence red flag must exclude with the flag named.
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from app.cases import cases
from app.cases.report_inputs import case_inputs
from app.credentials import checks
from app.credentials.verdicts import verdicts_of
from app.models import Offer, Provider
from app.models.registry_version import ProviderVersion
from app.registry.providers import create_provider
from app.reports.render import render_html
from tests.cases.test_measured_offers import (
    OFFER,
    TODAY,
    at,
    beijing_licence,
    quick_steps,
    small_model_answers,
    store_run,
)
from tests.cases.test_offer_snapshot import kept, reads  # noqa: F401 - the kept-table fixtures
from tests.reports.conftest import make_meta

MEASURED = "示例实测不达标算力有限公司"
RED_FLAG = "示例许可证红旗算力有限公司"
PRIVATE = "示例个人备案算力有限公司"
# claims RoCE 200 Gbps and a 100 Gbps intranet; the trial measures 46 Gbps of intranet (46% of the claim)
RDMA_OFFER = {**OFFER, "name": "RDMA 套餐", "intranet_gbps": 100, "rdma_type": "roce", "rdma_gbps": 200}


def _provider(session: Session, name: str, *, licence: str, **records: Any) -> int:
    """A provider with one Beijing datacenter and one RDMA_OFFER; returns the provider id."""
    created = create_provider(
        session,
        data={
            "legal_name": name,
            "licences": [{**beijing_licence("京B1.B2-20249901"), "number_raw": licence}],
            "datacenters": [{"name": "示例测量机房", "province": "北京", "city": "北京"}],
            "offers": [RDMA_OFFER],
            **records,
        },
    )
    return created.id  # type: ignore[return-value]


def _measured_provider(session: Session) -> int:
    """MEASURED with a trial run measuring 46 Gbps of the claimed 100 Gbps intranet."""
    provider_id = _provider(session, MEASURED, licence="京B1.B2-20249901")
    (offer,) = session.exec(select(Offer).where(Offer.provider_id == provider_id)).all()
    store_run(session, offer, quick_steps(46_000), at(3))
    return provider_id


def _advised(session: Session, parameters_billion: float = 0.01) -> dict[str, dict[str, Any]]:
    """The advice's offers by provider name (every offer listed); 0.01 B needs 0.08 Gbps of intranet."""
    session.rollback()
    answers = small_model_answers(parameters_billion)
    advice = cases.advise_answers(session, answers=answers, today=TODAY)
    return {offer["provider_name"]: offer for offer in advice.to_dict()["offers"]}


def _codes(reasons: list[dict[str, Any]]) -> list[str]:
    return [reason["code"] for reason in reasons]


def test_each_offer_shows_its_providers_verdict_and_what_is_unverified(session):
    ids = {
        MEASURED: _measured_provider(session),
        RED_FLAG: _provider(session, RED_FLAG, licence="京ICP备10046444号"),
        PRIVATE: _provider(
            session,
            PRIVATE,
            licence="京B1.B2-20249903",
            filings=[
                {"number_raw": "京ICP备2021099901号-1", "entity_name": "某个人", "entity_nature": "个人"}
            ],
        ),
    }
    for provider_id in ids.values():
        checks.run_check(session, provider_id=provider_id, today=TODAY)
    fresh = verdicts_of(session, ids.values())
    offers = _advised(session)
    for name, provider_id in ids.items():
        verdict = offers[name]["verdict"]
        expected = fresh[provider_id]
        assert (verdict["level"], verdict["label_zh"], verdict["label_en"]) == (
            expected.level,
            expected.label_zh,
            expected.label_en,
        )
        assert verdict["unverified"] == list(expected.unverified)
        assert verdict["check_run_id"] == expected.check_run_id
    assert [offers[name]["verdict"]["level"] for name in (MEASURED, RED_FLAG, PRIVATE)] == [
        "fail",
        "fail",
        "needs_review",
    ]
    # the private person's filing: ranked, and the verdict names the finding (red flag 7), not only 待确认
    private = offers[PRIVATE]
    assert not private["excluded"]
    (nature,) = [f for f in private["verdict"]["findings"] if f["rule_id"] == "filing.nature"]
    assert nature["red_flag"] == 7 and "个人" in nature["message_zh"]
    assert "需复核" in private["verdict"]["label_zh"] and "needs review" in private["verdict"]["label_en"]


def test_a_licence_red_flag_excludes_with_the_flag_named(session):
    provider_id = _provider(session, RED_FLAG, licence="京ICP备10046444号")  # an ICP filing shown as licence
    checks.run_check(session, provider_id=provider_id, today=TODAY)
    offer = _advised(session)[RED_FLAG]
    assert offer["excluded"] and offer["verdict"]["level"] == "fail"
    (flag_11,) = [r for r in offer["excluded_because"] if r["code"] == "finding.licence.is_icp_filing"]
    assert "许可证红旗 11" in flag_11["message_zh"] and "licence red flag 11" in flag_11["message_en"]
    (flag_1,) = [r for r in offer["excluded_because"] if r["code"] == "finding.licence.missing_item"]
    assert "许可证红旗 1" in flag_1["message_zh"]


def test_a_failure_on_evidence_ranks_on_the_measurement_and_the_claimed_rdma_never_scores(session):
    _measured_provider(session)
    _provider(session, "示例未测算力有限公司", licence="京B1.B2-20249904")  # the same claims, never measured
    checks.run_check(session, provider_id=_ids(session)[MEASURED], today=TODAY)
    offers = _advised(session, 6)  # 32 Gbps needed: 46 measured fits, with less headroom than 200 claimed
    measured, claimed = offers[MEASURED], offers["示例未测算力有限公司"]
    assert not measured["excluded"] and measured["verdict"]["level"] == "fail"
    assert measured["verdict"]["ranked_on_measurements"] is True
    assert "verdict.fails_on_evidence" in _codes(measured["marks"])
    (mark,) = [m for m in measured["marks"] if m["code"] == "evidence.rdma_contradicted"]
    assert "claimed, contradicted elsewhere: measure RDMA before signing" in mark["message_en"]
    assert "服务商声称，已被其他实测否定" in mark["message_zh"] and "签约前请实测 RDMA" in mark["message_zh"]
    assert "46%" in mark["message_en"]
    assert {"key": "rdma_gbps", "checklist_key": "rdma_nccl"} in measured["verify"]
    assert measured["measure_before_signing"] is True
    # the intranet criterion rests on the measured 46 Gbps, not on 200 Gbps of claimed RoCE
    intranet = {r["criterion"]: r for r in measured["reasons"]}["intranet"]
    assert "46" in intranet["message_en"] and "measured" in intranet["message_en"]
    assert "200" not in intranet["message_en"]
    assert intranet["score"] < {r["criterion"]: r for r in claimed["reasons"]}["intranet"]["score"]
    assert claimed["verdict"]["level"] == "unchecked" and not claimed["verdict"]["ranked_on_measurements"]


def _ids(session: Session) -> dict[str, int]:
    """Provider ids by legal name."""
    return {row.legal_name: row.id for row in session.exec(select(Provider)).all()}  # type: ignore[misc]


def _stamps(session: Session) -> dict[int, int]:
    """Each provider's stamp: the counter's value at its last committed change."""
    session.rollback()
    stamps = {row.provider_id: row.n for row in session.exec(select(ProviderVersion)).all()}
    session.rollback()
    return stamps


def test_a_new_check_run_stamps_the_provider_and_refreshes_the_verdict_of_kept_advice(
    session,
    kept,  # noqa: F811
    reads,  # noqa: F811
):
    provider_id = _measured_provider(session)
    other = _provider(session, "示例未测算力有限公司", licence="京B1.B2-20249904")
    before = _advised(session)[MEASURED]
    assert before["verdict"]["level"] == "unchecked"
    assert "verdict.fails_on_evidence" not in _codes(before["marks"])
    stamps = _stamps(session)

    checks.run_check(session, provider_id=provider_id, today=TODAY)
    after_check = _stamps(session)
    assert after_check[provider_id] > stamps[provider_id] and after_check[other] == stamps[other]
    reads.clear()
    after = _advised(session)[MEASURED]
    assert reads == [{provider_id}]  # only the checked provider was read again
    assert after["verdict"]["level"] == "fail" and after["verdict"]["ranked_on_measurements"] is True
    assert "verdict.fails_on_evidence" in _codes(after["marks"])
    assert after["verdict"]["check_run_id"] is not None


def test_the_case_report_shows_each_verdict_in_both_languages(session):
    _measured_provider(session)
    red_flag = _provider(session, RED_FLAG, licence="京ICP备10046444号")
    for provider_id in _ids(session).values():
        checks.run_check(session, provider_id=provider_id, today=TODAY)
    answers = small_model_answers(0.01).model_dump(mode="json", exclude_none=True)
    case = cases.create_case(session, answers=answers, owner=cases.Actor(None, "test"))
    inputs = case_inputs(session, case_id=case.id, today=TODAY)  # type: ignore[arg-type]
    listed = {offer["provider_name"]: offer for offer in inputs["advice"]["offers"]}
    assert listed[RED_FLAG]["verdict"]["level"] == "fail" and listed[RED_FLAG]["excluded"]
    assert listed[MEASURED]["verdict"]["ranked_on_measurements"] is True
    zh = render_html("case", inputs, make_meta(), "zh", screen=False)
    en = render_html("case", inputs, make_meta(language="en"), "en", screen=False)
    assert zh.count("核查结论") >= 2 and en.count(">Verdict<") == 2  # both tables have the column
    assert "不通过" in zh and "按实测数据排名" in zh and "许可证红旗 11" in zh and "红旗 12" in zh
    assert "fails" in en and "ranked on the measured figures" in en and "licence red flag 11" in en
    assert "claimed, contradicted elsewhere: measure RDMA before signing" in en
    assert red_flag in _ids(session).values()
