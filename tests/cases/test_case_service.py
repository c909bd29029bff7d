"""Case service: step-by-step answers with version checks, completion, hand ticks that are audited."""

from __future__ import annotations

import pytest
from sqlmodel import select

from app.cases import cases
from app.core.audit import set_actor
from app.core.errors import Conflict, InvalidInput, NotFound
from app.models import AuditEntry
from app.models.cases import ChecklistTick, ProcurementCase
from tests.cases.conftest import example

ALICE = cases.Actor(None, "alice")


def test_a_case_is_built_step_by_step_and_completed(session):
    set_actor(session, user_id=None, name="alice")
    case = cases.start_case(session, workload={"kind": "interactive_inference", "title": ""}, owner=ALICE)
    assert case.title.startswith("交互式推理 ") and case.step == "compute" and case.version == 1
    answers = example("interactive_inference")
    for step in ("compute", "site", "users", "budget", "compliance"):
        case = cases.save_step(session, case_id=case.id, step=step, data=answers[step], version=case.version)
    assert case.version == 6 and not case.complete
    case = cases.finish_case(session, case_id=case.id, version=case.version)
    assert case.complete and case.step == "done"
    assert case.answers["users"]["user_cities"] == ["上海", "杭州", "南京"]
    history = cases.case_history(session, case_id=case.id)
    assert {entry.actor_name for entry in history} == {"alice"}
    assert len(history) == 7


def test_a_stale_version_is_refused_naming_who_changed_it(session):
    set_actor(session, user_id=None, name="bob")
    case = cases.start_case(
        session, workload={"kind": "offline_batch", "batch_kind": "rendering"}, owner=ALICE
    )
    cases.save_step(session, case_id=case.id, step="compute", data={"gpus_per_node": 4}, version=1)
    with pytest.raises(Conflict) as caught:
        cases.save_step(session, case_id=case.id, step="compute", data={"gpus_per_node": 8}, version=1)
    assert "bob" in caught.value.errors[0].message and caught.value.errors[0].field == "version"
    with pytest.raises(InvalidInput):
        cases.save_step(session, case_id=case.id, step="compute", data={"gpus_per_node": 8}, version="")


def test_step_errors_name_their_fields_and_nothing_is_saved(session):
    case = cases.start_case(session, workload={"kind": "distributed_training"}, owner=ALICE)
    with pytest.raises(InvalidInput) as caught:
        cases.save_step(
            session, case_id=case.id, step="compute", data={"nodes": 1, "gpus_per_node": 8}, version=1
        )
    assert [error.field for error in caught.value.errors] == ["compute.nodes"]
    with pytest.raises(InvalidInput) as caught:
        cases.save_step(session, case_id=case.id, step="site", data={"office_city": "火星"}, version=1)
    assert caught.value.errors[0].field == "site.office_city"
    assert session.get(ProcurementCase, case.id).answers == {"workload": {"kind": "distributed_training"}}
    with pytest.raises(NotFound):
        cases.save_step(session, case_id=case.id, step="nope", data={}, version=1)
    with pytest.raises(InvalidInput) as caught:
        cases.start_case(session, workload={"kind": "offline_batch"}, owner=ALICE)
    assert caught.value.errors[0].field == "workload.batch_kind"


def test_finishing_reports_what_is_still_missing(session):
    case = cases.start_case(session, workload={"kind": "single_node_training"}, owner=ALICE)
    case = cases.save_step(session, case_id=case.id, step="compute", data={"gpus_per_node": 8}, version=1)
    with pytest.raises(InvalidInput) as caught:
        cases.finish_case(session, case_id=case.id, version=case.version)
    fields = {error.field for error in caught.value.errors}
    assert "site" in fields
    with pytest.raises(InvalidInput):
        cases.advise_case(session, case_id=case.id)


def test_changing_the_kind_drops_the_sections_it_no_longer_asks(session):
    case = cases.create_case(session, answers=example("interactive_inference"), owner=ALICE)
    assert "users" in case.answers and "data" not in case.answers
    answers = example("offline_batch")
    answers["users"] = {"user_cities": ["上海"]}
    case = cases.create_case(session, answers=answers, owner=ALICE)
    assert "users" not in case.answers


def test_hand_ticks_are_recorded_with_who_when_and_why_and_audited(session, demo_loaded):
    set_actor(session, user_id=None, name="carol")
    case = cases.create_case(session, answers=example("distributed_training"), owner=ALICE)
    tick = cases.tick_item(
        session,
        case_id=case.id,
        item_key="sla_contract",
        provider_id=None,
        done=True,
        comment="合同第 7 条写明独享带宽",
        evidence_url="https://docs.example/contract.pdf",
        actor=cases.Actor(None, "carol"),
    )
    assert (tick.ticked_by, tick.done) == ("carol", True) and tick.ticked_at is not None
    again = cases.tick_item(
        session,
        case_id=case.id,
        item_key="sla_contract",
        provider_id=None,
        done=False,
        comment="",
        evidence_url="",
        actor=cases.Actor(None, "carol"),
    )
    assert again.id == tick.id and not again.done
    rows = session.exec(select(ChecklistTick).where(ChecklistTick.case_id == case.id)).all()
    assert len(rows) == 1
    audit = session.exec(
        select(AuditEntry).where(AuditEntry.entity == "checklist_tick").order_by(AuditEntry.id)
    ).all()
    assert [entry.action for entry in audit] == ["create", "update"]
    assert audit[0].actor_name == "carol" and audit[0].changes["comment"][1] == "合同第 7 条写明独享带宽"
    advice = cases.advise_case(session, case_id=case.id)
    entry = next(e for e in advice.checklist if e.item.key == "sla_contract")
    assert entry.tick is not None and entry.tick.by == "carol"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"item_key": "nope"}, "item_key"),
        ({"comment": ""}, "comment"),
        ({"evidence_url": "javascript:alert(1)"}, "evidence_url"),
        ({"provider_id": 999999}, "provider_id"),
    ],
)
def test_bad_ticks_name_the_field(session, kwargs, field):
    case = cases.create_case(session, answers=example("offline_batch"), owner=ALICE)
    values = {
        "item_key": "sla_contract",
        "provider_id": None,
        "done": True,
        "comment": "ok",
        "evidence_url": None,
    }
    values.update(kwargs)
    with pytest.raises(InvalidInput) as caught:
        cases.tick_item(session, case_id=case.id, actor=ALICE, **values)
    assert field in {error.field for error in caught.value.errors}
