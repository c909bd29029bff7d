"""An approved decision keeps watching: due conditions and acceptances, lapsed terms, providers' changes."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from sqlmodel import select

from app.accounts import users
from app.cases import cases, decision_watch
from app.core import clock, events
from app.credentials.watch import EventDraft, store_events
from app.models.decisions import Decision, DecisionCondition, DecisionState, RiskAcceptance
from app.models.watch import ChangeEvent
from app.registry import providers as provider_service
from tests.api.conftest import provider_payload
from tests.cases.conftest import example

TODAY = date(2027, 3, 1)


@pytest.fixture
def approved(session) -> dict[str, Any]:
    """An approved decision for one provider: term to 1 June, two conditions and one acceptance."""
    provider = provider_service.create_provider(session, data=provider_payload())
    other_data = provider_payload(uscc=None, legal_name="另一家算力有限公司")
    other = provider_service.create_provider(session, data=other_data)
    analyst = users.create_user(
        session, username="proposer", password="correct horse battery", role="analyst"
    )
    case = cases.create_case(session, answers=example("offline_batch"), owner=cases.Actor(analyst.id, "p"))
    decision = Decision(
        case_id=case.id,
        state=DecisionState.approved,
        provider_ids=[provider.id],
        scope="训练集群",
        term_months=3,
        justification="三家比价后最低",
        evidence_sha256="0" * 64,
        proposed_by_name="proposer",
        decided_by_name="approver",
        valid_from=date(2027, 3, 1),
        valid_until=date(2027, 6, 1),
    )
    session.add(decision)
    session.commit()
    session.add_all(
        [
            DecisionCondition(
                decision_id=decision.id, position=0, text="交付后复测内网带宽", due_on=date(2027, 3, 6)
            ),
            DecisionCondition(decision_id=decision.id, position=1, text="签订 SLA", due_on=date(2027, 3, 21)),
            DecisionCondition(decision_id=decision.id, position=2, text="年度复核", due_on=date(2027, 12, 1)),
            RiskAcceptance(
                decision_id=decision.id,
                provider_id=provider.id,
                rule_id="licence_scope",
                severity="warning",
                message_zh="许可证业务范围待核实",
                reason="试用期内补交",
                accepted_by_name="approver",
                until=date(2027, 2, 28),
            ),
        ]
    )
    session.commit()
    return {"provider": provider, "other": other, "decision": decision}


def _events(session, kind: str) -> list[ChangeEvent]:
    return list(
        session.exec(select(ChangeEvent).where(ChangeEvent.kind == kind).order_by(ChangeEvent.id)).all()
    )


def test_due_items_list_what_falls_due_within_the_horizon(session, approved):
    items = decision_watch.due_items(session, today=TODAY, horizon_days=30)
    # 6 March (5 days), 21 March (20 days), the acceptance lapsed yesterday; 1 June and 1 December: too far.
    assert [(i.kind, i.due_on, i.days_left) for i in items] == [
        ("acceptance", date(2027, 2, 28), -1),
        ("condition", date(2027, 3, 6), 5),
        ("condition", date(2027, 3, 21), 20),
    ]
    assert [i.lapsed for i in items] == [True, False, False]
    longer = decision_watch.due_items(session, today=TODAY, horizon_days=100)
    assert ("term", date(2027, 6, 1), 92) in [(i.kind, i.due_on, i.days_left) for i in longer]


def test_the_daily_watch_records_each_stage_once(session, approved):
    number = approved["decision"].id
    assert 3 in events.publish(session, events.DayStarted(TODAY))  # the watch's count: 3 new events
    due, lapsed = _events(session, "decision_due"), _events(session, "decision_lapsed")
    assert sorted((e.severity, e.details["days_left"]) for e in due) == [("info", 20), ("warning", 5)]
    assert [e.severity for e in lapsed] == ["blocker"]
    assert lapsed[0].message_zh.startswith(f"采购决定 #{number} 的风险接受已于 2027-02-28 到期")
    assert "re-approval needed" in lapsed[0].message_en
    assert all(e.provider_id == approved["provider"].id for e in due + lapsed)
    assert decision_watch.watch_due(session, today=TODAY) == 0  # the same day again: nothing new
    # Two days on, the 6 March condition is still in its 7-day stage; nothing new either.
    assert decision_watch.watch_due(session, today=TODAY + timedelta(days=2)) == 0
    # On 7 March it is overdue: a warning that it is not met (the decision still holds; no re-approval).
    assert decision_watch.watch_due(session, today=date(2027, 3, 7)) == 1
    overdue = _events(session, "decision_lapsed")[-1]
    assert (overdue.severity, overdue.message_zh) == (
        "warning",
        f"采购决定 #{number} 的条件已于 2027-03-06 到期，尚未完成：交付后复测内网带宽",
    )


def test_a_lapsed_acceptance_or_term_needs_reapproval(session, approved):
    decision = approved["decision"]
    assert decision_watch.needs_reapproval(session, decision, today=TODAY)  # the acceptance lapsed 28 Feb
    acceptance = session.exec(select(RiskAcceptance)).one()
    acceptance.until = date(2027, 5, 1)
    session.add(acceptance)
    session.commit()
    assert not decision_watch.needs_reapproval(session, decision, today=TODAY)
    assert decision_watch.needs_reapproval(session, decision, today=date(2027, 6, 2))  # past the term
    decision.state = DecisionState.proposed
    assert not decision_watch.needs_reapproval(session, decision, today=date(2027, 6, 2))


def _change(provider_id: int, key: str, severity: str, kind: str = "finding_added") -> tuple:
    draft = EventDraft(kind, "rule:x", key, severity, f"新发现：{key}", f"new finding: {key}", {})
    return (provider_id, draft, f"test:{key}")


def test_a_bad_change_of_an_approved_provider_names_the_decision(session, approved):
    provider, other, number = approved["provider"].id, approved["other"].id, approved["decision"].id
    store_events(
        session,
        [
            _change(provider, "下行带宽低于声明", "blocker"),
            _change(provider, "备注", "info"),  # not bad: not repeated
            _change(other, "别家的问题", "blocker"),  # no approved decision: not repeated
        ],
        occurred_on=date(2027, 3, 2),
    )
    repeated = _events(session, decision_watch.WATCHED_KIND)
    assert [(e.provider_id, e.severity) for e in repeated] == [(provider, "blocker")]
    assert repeated[0].message_zh == f"已批准的供应商现在：新发现：下行带宽低于声明（采购决定 #{number}）"
    assert (
        repeated[0].message_en == f"Approved provider now: new finding: 下行带宽低于声明 (decision #{number})"
    )
    assert repeated[0].details["decision_id"] == number


def test_no_repeat_once_the_decision_is_past_its_term(session, approved):
    decision = approved["decision"]
    decision.valid_until = date(2020, 1, 1)
    session.add(decision)
    session.commit()
    store_events(
        session, [_change(approved["provider"].id, "许可证将到期", "warning", "expiring")], occurred_on=TODAY
    )
    assert _events(session, decision_watch.WATCHED_KIND) == []


def test_the_dashboard_and_the_due_list_show_what_falls_due(session, approved, login):
    number = approved["decision"].id
    with clock.frozen(datetime(2027, 3, 1, 4, 0, tzinfo=UTC)):  # noon in Shanghai, 1 March
        client = login("viewer")
        board = client.get("/").get_data(as_text=True)
        due = client.get("/decisions/due").get_data(as_text=True)
        client.get("/lang/en")
        english = client.get("/decisions/due").get_data(as_text=True)
    assert 'id="card-decisions-due"' in board and f"采购决定 #{number}" in board
    assert board.count('class="d-flex flex-wrap gap-2 py-1 border-bottom due-item"') == 3
    assert f'href="/decisions/{number}"' in due
    assert due.count('class="due-row"') == 3  # the acceptance, 6 and 21 March; not June nor December
    assert "已过期 1 天，须重新审批" in due and "还剩 5 天" in due and "还剩 20 天" in due
    assert "Lapsed 1 days ago: re-approval needed" in english and "Decision duties due" in english


def test_the_dashboard_has_no_due_card_without_approved_decisions(login):
    assert 'id="card-decisions-due"' not in login("viewer").get("/").get_data(as_text=True)
