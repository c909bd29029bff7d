"""Procurement decisions: the proposal's rules, four-eyes approval, the frozen evidence snapshot, the
provider status lock. Both databases (the `session` fixture)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from sqlmodel import select

from app.accounts import users
from app.cases import cases
from app.cases import decisions as service
from app.cases.decision_evidence import licence_blocks, open_findings
from app.cases.decision_rules import Forbidden, add_months
from app.core import clock
from app.core.audit import set_actor
from app.core.errors import Conflict, InvalidInput, NotFound
from app.models import AuditEntry, Offer, Provider
from app.models.checks import CheckRun, StoredFinding
from app.models.decisions import DecisionState
from app.models.quotes import Quote
from app.registry import providers as provider_service
from tests.api.conftest import provider_payload
from tests.cases.conftest import example

NAMES = ("甲算力有限公司", "乙算力有限公司", "丙算力有限公司")


def at(day: date):
    """Freeze the clock at noon of `day` in China (04:00 UTC), the business day `day`."""
    return clock.frozen(datetime(day.year, day.month, day.day, 4, tzinfo=UTC))


@pytest.fixture
def world(session) -> dict[str, Any]:
    """A case, three providers (one offer chosen of each), an analyst, an approver and an admin."""
    set_actor(session, user_id=None, name="arranger")
    providers = [
        provider_service.create_provider(session, data=provider_payload(legal_name=name, uscc=None))
        for name in NAMES
    ]
    offers = [
        session.exec(select(Offer).where(Offer.provider_id == p.id).order_by(Offer.id)).first()
        for p in providers
    ]
    people = {
        role: users.create_user(session, username=f"{role}-user", password="correct horse battery", role=role)
        for role in ("analyst", "approver", "admin", "viewer")
    }
    analyst = cases.Actor(people["analyst"].id, "analyst-user")
    case = cases.create_case(session, answers=example("offline_batch"), owner=analyst)
    return {"providers": providers, "offers": offers, "people": people, "analyst": analyst, "case": case}


def actor(world: dict[str, Any], role: str) -> cases.Actor:
    user = world["people"][role]
    return cases.Actor(user.id, user.username)


def add_quote(session, case_id: int, offer: Offer, *, days: int = 30, price: float = 10.0) -> Quote:
    """A quote for the offer, valid for `days` more days (negative: expired)."""
    row = Quote(case_id=case_id, provider_id=offer.provider_id, offer_id=offer.id, received_via="email")
    row.price_gpu_hour_cny, row.valid_until = price, clock.business_today() + timedelta(days=days)
    session.add(row)
    session.commit()
    return row


def quote(session, world, index: int, *, days: int = 30, price: float = 10.0) -> Quote:
    """A quote of provider `index` for its first offer."""
    return add_quote(session, world["case"].id, world["offers"][index], days=days, price=price)


def check_run(session, provider_id: int, *findings: tuple[str, str, int | None]) -> list[StoredFinding]:
    """Store a check run of the provider with findings (rule, severity, red flag); it becomes the latest."""
    severities = [severity for _rule, severity, _flag in findings]
    verdict = "fail" if "blocker" in severities else "needs_review" if "warning" in severities else "pass"
    run = CheckRun(
        provider_id=provider_id,
        verdict=verdict,
        blockers=severities.count("blocker"),
        warnings=severities.count("warning"),
        checked_on=clock.business_today(),
        rules_version="test",
    )
    session.add(run)
    session.flush()
    rows = [
        StoredFinding(
            check_run_id=run.id,
            provider_id=provider_id,
            position=position,
            rule_id=rule,
            severity=severity,
            red_flag=flag,
            subject="licence:1" if flag else "",
            message_zh=f"{rule} 的中文说明",
            message_en=f"{rule} explained",
        )
        for position, (rule, severity, flag) in enumerate(findings)
    ]
    session.add_all(rows)
    session.commit()
    return rows


def body(world: dict[str, Any], *indexes: int, **changes: Any) -> dict[str, Any]:
    data = {
        "offer_ids": [world["offers"][index].id for index in indexes or (0,)],
        "scope": "离线批处理：图片标注数据",
        "term_months": 12,
        "justification": "每有效卡时价格最低，内网实测达标",
        "conditions": [{"text": "交付后 30 天内复测内网带宽", "due_on": "2027-03-01"}],
    }
    return {**data, **changes}


def fields(excinfo: pytest.ExceptionInfo) -> list[str]:
    return [error.field for error in excinfo.value.errors]


def text(excinfo: pytest.ExceptionInfo) -> str:
    return " ".join(error.message for error in excinfo.value.errors)


def propose(session, world, *indexes: int, **changes: Any):
    return service.propose(
        session, case_id=world["case"].id, data=body(world, *indexes, **changes), actor=world["analyst"]
    )


def audited(session, entity: str, entity_id: int) -> list[tuple[str, str]]:
    rows = session.exec(
        select(AuditEntry)
        .where(AuditEntry.entity == entity, AuditEntry.entity_id == entity_id)
        .order_by(AuditEntry.id)
    )
    return [(row.action, row.actor_name) for row in rows]


# --- proposing ---------------------------------------------------------------------------------------


def test_three_valid_quotes_need_no_single_source_reason(session, world):
    quotes = [quote(session, world, index) for index in range(3)]
    decision = propose(session, world, 0)
    assert decision.state == DecisionState.proposed
    assert decision.offer_ids == [world["offers"][0].id]
    assert decision.provider_ids == [world["providers"][0].id]
    assert decision.quote_ids == [quotes[0].id]  # only the chosen provider's quote backs it
    assert decision.proposed_by_name == "analyst-user" and decision.single_source_reason == ""
    assert (
        decision.evidence_sha256
        == hashlib.sha256(
            json.dumps(
                decision.snapshot["evidence"], ensure_ascii=False, sort_keys=True, separators=(",", ":")
            ).encode()
        ).hexdigest()
    )
    shown = service.decision_dict(session, decision, "en")
    assert shown["state"] == "proposed" and shown["state_label"] == "Awaiting approval"
    assert shown["conditions"][0]["text"] == "交付后 30 天内复测内网带宽"
    assert shown["conditions"][0]["due_on"] == "2027-03-01"
    assert shown["snapshot_sha256"] is None and shown["approved_by"] is None
    assert audited(session, "decision", decision.id) == [("create", "analyst-user")]
    condition_id = shown["conditions"][0]["id"]
    assert audited(session, "decision_condition", condition_id) == [("create", "analyst-user")]


def test_two_valid_quotes_need_a_single_source_reason(session, world):
    quote(session, world, 0)
    quote(session, world, 1)
    with pytest.raises(InvalidInput) as excinfo:
        propose(session, world, 0)
    assert fields(excinfo) == ["single_source_reason"]
    assert "2" in text(excinfo) and "3" in text(excinfo)
    decision = propose(session, world, 0, single_source_reason="唯一在贵州有机房的供应商")
    assert decision.single_source_reason == "唯一在贵州有机房的供应商"


def test_an_expired_quote_is_not_counted_and_cannot_back_a_decision(session, world):
    quote(session, world, 0)
    quote(session, world, 1)
    expired = quote(session, world, 2, days=-1)
    with pytest.raises(InvalidInput) as excinfo:
        propose(session, world, 0)
    assert fields(excinfo) == ["single_source_reason"]  # the third provider's quote has expired
    with pytest.raises(InvalidInput) as excinfo:
        propose(session, world, 2, single_source_reason="只有丙家能按期交付")
    assert fields(excinfo) == ["offer_ids[0]"]
    assert expired.valid_until.isoformat() in text(excinfo)


def test_a_quote_valid_today_still_counts(session, world):
    for index in range(3):
        quote(session, world, index, days=0)
    assert propose(session, world, 1).quote_ids


def test_an_offer_neither_quoted_nor_a_candidate_is_refused(session, world):
    quote(session, world, 0)
    other = provider_service.create_provider(
        session, data=provider_payload(legal_name="丁算力有限公司", uscc=None, offers=[])
    )
    assert not session.exec(select(Offer).where(Offer.provider_id == other.id)).first()
    with pytest.raises(InvalidInput) as excinfo:
        propose(session, world, 0, offer_ids=[world["offers"][0].id, 999_999], single_source_reason="唯一")
    assert fields(excinfo) == ["offer_ids[1]"]


def test_bad_input_names_each_field(session, world):
    quote(session, world, 0)
    data = body(
        world,
        0,
        term_months=61,
        scope="  ",
        conditions=[{"text": "复测", "due_on": "明天"}],
        risk_acceptances=[{"finding_id": 1, "reason": "", "until": "2027-01-01", "who": "x"}],
        colour="red",
    )
    with pytest.raises(InvalidInput) as excinfo:
        service.propose(session, case_id=world["case"].id, data=data, actor=world["analyst"])
    assert set(fields(excinfo)) == {
        "term_months",
        "scope",
        "conditions[0].due_on",
        "risk_acceptances[0].reason",
        "risk_acceptances[0].who",
        "colour",
    }
    with pytest.raises(InvalidInput) as excinfo:
        service.propose(
            session, case_id=world["case"].id, data=body(world, offer_ids=[]), actor=world["analyst"]
        )
    assert fields(excinfo) == ["offer_ids"]
    with pytest.raises(NotFound):
        service.propose(session, case_id=999_999, data=body(world), actor=world["analyst"])


def test_an_uncovered_open_finding_is_refused_and_listed(session, world):
    for index in range(3):
        quote(session, world, index)
    provider_id = world["providers"][0].id
    warning, _note = check_run(
        session, provider_id, ("bandwidth_shared", "warning", None), ("tip", "info", None)
    )
    assert [f.id for f in open_findings(session, provider_id)] == [warning.id]  # a note is not open
    with pytest.raises(InvalidInput) as excinfo:
        propose(session, world, 0)
    assert fields(excinfo) == ["risk_acceptances"]
    assert "bandwidth_shared" in text(excinfo) and str(warning.id) in text(excinfo)
    assert "tip" not in text(excinfo)


def test_a_covered_open_finding_is_accepted_and_recorded(session, world):
    for index in range(3):
        quote(session, world, index)
    [warning] = check_run(session, world["providers"][0].id, ("bandwidth_shared", "warning", None))
    until = clock.business_today() + timedelta(days=90)
    accepted = [
        {"finding_id": warning.id, "reason": "合同约定独享带宽，交付后复测", "until": until.isoformat()}
    ]
    decision = propose(session, world, 0, risk_acceptances=accepted)
    [row] = service.acceptances_of(session, decision.id)
    assert (row.rule_id, row.severity, row.until, row.accepted_by_name) == (
        "bandwidth_shared",
        "warning",
        until,
        "analyst-user",
    )
    assert row.message_zh == "bandwidth_shared 的中文说明" and row.finding_id == warning.id
    assert audited(session, "risk_acceptance", row.id) == [("create", "analyst-user")]


def test_an_acceptance_must_last_past_today_and_name_an_open_finding(session, world):
    for index in range(3):
        quote(session, world, index)
    [warning] = check_run(session, world["providers"][0].id, ("bandwidth_shared", "warning", None))
    today = clock.business_today().isoformat()
    accepted = [
        {"finding_id": warning.id, "reason": "复测", "until": today},
        {"finding_id": 999_999, "reason": "不相干", "until": "2099-01-01"},
    ]
    with pytest.raises(InvalidInput) as excinfo:
        propose(session, world, 0, risk_acceptances=accepted)
    assert fields(excinfo) == ["risk_acceptances[0].until", "risk_acceptances[1].finding_id"]


def test_a_blocker_on_licence_flag_2_rules_the_provider_out(session, world):
    for index in range(3):
        quote(session, world, index)
    provider_id = world["providers"][1].id
    [blocker] = check_run(session, provider_id, ("b11_scope_excludes_cloud", "blocker", 2))
    assert [f.id for f in licence_blocks(session, provider_id)] == [blocker.id]
    accepted = [{"finding_id": blocker.id, "reason": "想接受也不行", "until": "2099-01-01"}]
    with pytest.raises(InvalidInput) as excinfo:
        propose(session, world, 1, risk_acceptances=accepted)
    assert fields(excinfo) == ["offer_ids[0]"]
    message = text(excinfo)
    assert "第 2 条" in message and "乙算力有限公司" in message
    assert "b11_scope_excludes_cloud 的中文说明" in message


def test_a_blocker_on_another_flag_can_be_accepted(session, world):
    for index in range(3):
        quote(session, world, index)
    [blocker] = check_run(session, world["providers"][1].id, ("name_mismatch", "blocker", 5))
    assert licence_blocks(session, world["providers"][1].id) == []
    accepted = [{"finding_id": blocker.id, "reason": "名称变更已核实", "until": "2099-01-01"}]
    assert propose(session, world, 1, risk_acceptances=accepted).state == DecisionState.proposed


# --- four eyes ---------------------------------------------------------------------------------------


@pytest.fixture
def proposed(session, world):
    for index in range(3):
        quote(session, world, index)
    return propose(session, world, 0)


def test_the_proposer_cannot_approve_even_as_admin(session, world, proposed):
    with pytest.raises(Forbidden) as excinfo:
        service.approve(session, decision_id=proposed.id, actor=world["analyst"])
    assert "提议人不能审批" in text(excinfo) or "只有审批人" in text(excinfo)
    admin = actor(world, "admin")
    world["case"]  # the admin proposes, then tries to approve
    own = service.propose(session, case_id=world["case"].id, data=body(world, 1), actor=admin)
    with pytest.raises(Forbidden) as excinfo:
        service.approve(session, decision_id=own.id, actor=admin)
    assert "提议人不能审批" in text(excinfo)
    assert session.get(type(own), own.id).state == DecisionState.proposed


def test_only_approvers_and_admins_decide(session, world, proposed):
    for role in ("viewer",):
        with pytest.raises(Forbidden) as excinfo:
            service.approve(session, decision_id=proposed.id, actor=actor(world, role))
        assert "审批人" in text(excinfo)
    with pytest.raises(Forbidden):
        service.reject(session, decision_id=proposed.id, actor=cases.Actor(None, "cli"), comment="不行")
    approver = world["people"]["approver"]
    approver.active = False  # a deactivated approver decides nothing
    session.commit()
    with pytest.raises(Forbidden):
        service.approve(session, decision_id=proposed.id, actor=actor(world, "approver"))
    assert service.get_decision(session, decision_id=proposed.id).state == DecisionState.proposed


def test_the_approver_approves_and_the_snapshot_is_frozen(session, world):
    today = date(2026, 12, 6)
    with at(today):
        for index in range(3):
            quote(session, world, index)
        proposed = propose(session, world, 0)
        decision = service.approve(
            session, decision_id=proposed.id, actor=actor(world, "approver"), comment="同意"
        )
    assert decision.state == DecisionState.approved
    assert (decision.decided_by_name, decision.decision_comment) == ("approver-user", "同意")
    assert (decision.valid_from, decision.valid_until) == (today, date(2027, 12, 6))
    stored = json.dumps(decision.snapshot, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert decision.snapshot_sha256 == hashlib.sha256(stored.encode()).hexdigest()
    assert decision.snapshot["decision"]["scope"] == "离线批处理：图片标注数据"
    assert decision.snapshot["decision"]["approved_by"] == "approver-user"
    assert decision.snapshot["decision"]["valid_until"] == "2027-12-06"
    assert [q["id"] for q in decision.snapshot["evidence"]["quotes"]] == decision.quote_ids
    assert decision.snapshot["evidence"]["quotes"][0]["valid_until"] == "2027-01-05"
    assert decision.snapshot["evidence"]["compared_providers"] == sorted(p.id for p in world["providers"])
    provider = session.get(Provider, world["providers"][0].id)
    assert provider.status == "approved"
    assert session.get(Provider, world["providers"][1].id).status == "candidate"
    assert audited(session, "decision", decision.id) == [
        ("create", "analyst-user"),
        ("update", "approver-user"),
    ]
    status_changes = session.exec(
        select(AuditEntry).where(AuditEntry.entity == "provider", AuditEntry.entity_id == provider.id)
    ).all()
    assert any(
        entry.actor_name == "approver-user" and "approved" in json.dumps(entry.changes, ensure_ascii=False)
        for entry in status_changes
    )
    with at(today):
        assert service.decision_dict(session, decision)["snapshot_sha256"] == decision.snapshot_sha256
        assert service.effective_state(decision) == "approved"
    assert service.effective_state(decision, date(2027, 12, 6)) == "approved"
    assert service.effective_state(decision, date(2027, 12, 7)) == "needs_reapproval"


def test_an_approved_providers_status_is_not_edited_by_hand(session, world, proposed):
    service.approve(session, decision_id=proposed.id, actor=actor(world, "approver"))
    provider = session.get(Provider, world["providers"][0].id)
    with pytest.raises(InvalidInput) as excinfo:
        provider_service.update_provider(
            session, provider_id=provider.id, patch={"version": provider.version, "status": "candidate"}
        )
    assert fields(excinfo) == ["status"]
    assert f"#{proposed.id}" in text(excinfo) or str(proposed.id) in text(excinfo)
    # other fields stay editable, the status unchanged
    changed = provider_service.update_provider(
        session,
        provider_id=provider.id,
        patch={"version": provider.version, "short_name": "甲", "status": "approved"},
    )
    assert changed.short_name == "甲" and changed.status == "approved"
    # a provider without an approved decision keeps its status editable
    other = session.get(Provider, world["providers"][1].id)
    assert (
        provider_service.update_provider(
            session, provider_id=other.id, patch={"version": other.version, "status": "suspended"}
        ).status
        == "suspended"
    )


def test_changed_evidence_stops_the_approval_and_names_the_change(session, world, proposed):
    check_run(session, world["providers"][0].id, ("storage_virtual", "warning", None))
    with pytest.raises(Conflict) as excinfo:
        service.approve(session, decision_id=proposed.id, actor=actor(world, "approver"))
    assert fields(excinfo) == ["evidence"]
    assert "storage_virtual" in text(excinfo) and "甲算力有限公司" in text(excinfo)
    assert session.get(type(proposed), proposed.id).state == DecisionState.proposed
    assert session.get(Provider, world["providers"][0].id).status == "candidate"
    named = service.changes(session, proposed)
    assert any("storage_virtual" in line for line in named)


def test_an_expiring_third_quote_is_a_change_too(session, world, proposed):
    with at(clock.business_today() + timedelta(days=31)):
        named = service.changes(session, proposed)
    assert len(named) >= 2  # the chosen quote expired, and fewer providers hold a valid quote
    assert any(str(proposed.quote_ids[0]) in line for line in named)


def test_approving_twice_is_refused(session, world, proposed):
    service.approve(session, decision_id=proposed.id, actor=actor(world, "approver"))
    with pytest.raises(Conflict) as excinfo:
        service.approve(session, decision_id=proposed.id, actor=actor(world, "admin"))
    assert fields(excinfo) == ["state"]


def test_return_and_reject_need_a_comment(session, world, proposed):
    approver = actor(world, "approver")
    for decide in (service.return_decision, service.reject):
        with pytest.raises(InvalidInput) as excinfo:
            decide(session, decision_id=proposed.id, actor=approver, comment="  ")
        assert fields(excinfo) == ["comment"]
    returned = service.return_decision(
        session, decision_id=proposed.id, actor=approver, comment="请补充第三家报价"
    )
    assert returned.state == DecisionState.returned and returned.decision_comment == "请补充第三家报价"
    assert service.effective_state(returned) == "returned"
    with pytest.raises(Conflict):
        service.reject(session, decision_id=proposed.id, actor=approver, comment="晚了")
    fresh = propose(session, world, 0)
    rejected = service.reject(session, decision_id=fresh.id, actor=approver, comment="预算不足")
    assert rejected.state == DecisionState.rejected
    assert audited(session, "decision", fresh.id)[-1] == ("update", "approver-user")
    assert [d.id for d in service.list_decisions(session, case_id=world["case"].id)] == [
        fresh.id,
        proposed.id,
    ]
    assert session.get(Provider, world["providers"][0].id).status == "candidate"


def test_a_lapsed_acceptance_stops_the_approval_and_needs_reapproval_later(session, world):
    for index in range(3):
        quote(session, world, index, days=400)
    [warning] = check_run(session, world["providers"][0].id, ("bandwidth_shared", "warning", None))
    today = clock.business_today()
    until = today + timedelta(days=10)
    accepted = [{"finding_id": warning.id, "reason": "短期接受", "until": until.isoformat()}]
    decision = propose(session, world, 0, risk_acceptances=accepted)
    with at(until + timedelta(days=1)), pytest.raises(Conflict) as excinfo:
        service.approve(session, decision_id=decision.id, actor=actor(world, "approver"))
    assert fields(excinfo) == ["risk_acceptances"]
    approved = service.approve(session, decision_id=decision.id, actor=actor(world, "approver"))
    assert service.effective_state(approved, until) == "approved"
    assert service.effective_state(approved, until + timedelta(days=1)) == "needs_reapproval"


def test_add_months_keeps_the_day_or_takes_the_months_last():
    assert add_months(date(2026, 12, 6), 12) == date(2027, 12, 6)
    assert add_months(date(2026, 1, 31), 1) == date(2026, 2, 28)
    assert add_months(date(2026, 11, 30), 3) == date(2027, 2, 28)
    assert add_months(date(2028, 1, 31), 1) == date(2028, 2, 29)


def test_the_edit_form_shows_the_decided_status_read_only(session, world, proposed, login):
    provider_id = world["providers"][0].id
    client = login("analyst", "form-editor")
    before = client.get(f"/providers/{provider_id}/edit").get_data(as_text=True)
    assert 'value="suspended"' in before  # every status offered before the approval
    service.approve(session, decision_id=proposed.id, actor=actor(world, "approver"))
    page = client.get(f"/providers/{provider_id}/edit").get_data(as_text=True)
    assert 'value="suspended"' not in page and 'value="candidate"' not in page
    assert f"由采购决定 #{proposed.id} 批准，不能手动修改" in page
    provider = session.get(Provider, provider_id)
    refused = client.post(
        f"/providers/{provider_id}/edit",
        data={"legal_name": provider.legal_name, "status": "candidate", "version": provider.version},
    )
    assert refused.status_code == 422
    assert f"#{proposed.id}" in refused.get_data(as_text=True)


def test_a_decision_decided_meanwhile_is_read_afresh(session, world, proposed):
    from sqlmodel import Session

    stale = service.get_decision(session, decision_id=proposed.id)
    session.commit()  # this session keeps the object as it read it (expire_on_commit is off)
    with Session(session.get_bind(), expire_on_commit=False) as other:
        service.approve(other, decision_id=proposed.id, actor=actor(world, "approver"))
    assert stale.state == DecisionState.proposed  # the stale copy still says proposed
    with pytest.raises(Conflict) as excinfo:
        service.approve(session, decision_id=proposed.id, actor=actor(world, "admin"))
    assert fields(excinfo) == ["state"]
    assert stale.state == DecisionState.approved and stale.decided_by_name == "approver-user"


def test_the_approval_reads_in_words_in_the_history(app, session, world, proposed):
    from flask_babel import force_locale

    from app.web import history

    service.approve(session, decision_id=proposed.id, actor=actor(world, "approver"), comment="同意")
    entry = session.exec(
        select(AuditEntry).where(
            AuditEntry.entity == "decision",
            AuditEntry.entity_id == proposed.id,
            AuditEntry.action == "update",
        )
    ).one()
    with app.test_request_context("/"), force_locale("en"):
        shown = {str(change.label): (change.before, change.after) for change in history.describe(entry)}
    assert shown["State"] == ("Awaiting approval", "Approved")
    assert shown["Decided by"][1] == "approver-user" and shown["Approver's comment"][1] == "同意"
    assert "snapshot" not in entry.changes  # the frozen snapshot stays in its row, its hash is audited
    assert entry.changes["snapshot_sha256"][1] == session.get(type(proposed), proposed.id).snapshot_sha256


def test_an_eligible_candidate_may_be_chosen_without_a_quote(demo_loaded):
    session = demo_loaded
    analyst = users.create_user(
        session, username="candidate-analyst", password="correct horse battery", role="analyst"
    )
    owner = cases.Actor(analyst.id, analyst.username)
    case = cases.create_case(session, answers=example("offline_batch"), owner=owner)
    ranked = cases.advise_case(session, case_id=case.id).ranked
    eligible = [ranked.table.offers[int(row)] for row in ranked.eligible_rows]
    clean = [offer for offer in eligible if not open_findings(session, offer.provider.id)]
    assert clean, "the demo data has an eligible offer of a provider without open findings"
    eligible_ids = {offer.id for offer in eligible}
    other = session.exec(select(Offer).where(Offer.id.not_in(eligible_ids)).order_by(Offer.id)).first()
    data = body({"offers": [clean[0], other]}, 0, single_source_reason="只有这一家符合要求")
    decision = service.propose(session, case_id=case.id, data=data, actor=owner)
    assert decision.offer_ids == [clean[0].id] and decision.quote_ids == []
    with pytest.raises(InvalidInput) as excinfo:
        service.propose(session, case_id=case.id, data=body({"offers": [clean[0], other]}, 1), actor=owner)
    assert fields(excinfo) == ["offer_ids[0]"]
