"""/api/v1/cases/<id>/decisions and /api/v1/decisions/<id>: propose, read, list, approve, return, reject;
roles, four eyes and the one error shape."""

from __future__ import annotations

from typing import Any

import pytest
from sqlmodel import select

from app.cases import cases
from app.core import clock
from app.core.audit import set_actor
from app.models import AuditEntry, Offer, Provider
from app.registry import providers as provider_service
from tests.api.conftest import assert_error_shape, provider_payload
from tests.cases.conftest import example
from tests.cases.test_decisions import add_quote, check_run


@pytest.fixture
def quoted(session) -> dict[str, Any]:
    """A case with a valid quote from each of three providers; the first provider's offer."""
    set_actor(session, user_id=None, name="arranger")
    case = cases.create_case(session, answers=example("offline_batch"), owner=cases.Actor(None, "arranger"))
    offers = []
    for name in ("甲算力有限公司", "乙算力有限公司", "丙算力有限公司"):
        provider = provider_service.create_provider(
            session, data=provider_payload(legal_name=name, uscc=None)
        )
        offer = session.exec(select(Offer).where(Offer.provider_id == provider.id).order_by(Offer.id)).first()
        add_quote(session, case.id, offer, days=20, price=9.5)
        offers.append(offer)
    return {"case_id": case.id, "offers": offers}


@pytest.fixture
def people(tokens, token_for) -> dict[str, dict[str, str]]:
    """Bearer headers: viewer, analyst (api-analyst), admin, approver, and a second approver."""
    return {
        **tokens,
        "approver": token_for("approver"),
        "approver2": token_for("approver", "second-approver"),
    }


def proposal(quoted: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {
        "offer_ids": [quoted["offers"][0].id],
        "scope": "推理服务",
        "term_months": 6,
        "justification": "价格与实测均最佳",
        "conditions": [{"text": "交付后复测存储写入速率", "due_on": "2027-02-01"}],
        **changes,
    }


def _propose(api, quoted, headers, **changes):
    return api.post(
        f"/api/v1/cases/{quoted['case_id']}/decisions", json=proposal(quoted, **changes), headers=headers
    )


def test_propose_read_list_and_approve(api, people, quoted, session):
    response = _propose(api, quoted, people["analyst"])
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    assert response.headers["Location"].endswith(f"/api/v1/decisions/{body['id']}")
    assert body["state"] == "proposed" and body["effective_state"] == "proposed"
    assert body["proposed_by"] == "api-analyst" and body["approved_by"] is None
    assert body["offer_ids"] == [quoted["offers"][0].id] and len(body["quote_ids"]) == 1
    assert body["conditions"][0]["text"] == "交付后复测存储写入速率" and body["risk_acceptances"] == []
    assert len(body["evidence_sha256"]) == 64 and body["snapshot_sha256"] is None

    read = api.get(response.headers["Location"], headers=people["viewer"])
    assert read.status_code == 200 and read.get_json() == body
    listed = api.get(f"/api/v1/cases/{quoted['case_id']}/decisions", headers=people["viewer"])
    assert listed.status_code == 200 and listed.get_json() == {"items": [body]}

    approved = api.post(
        f"/api/v1/decisions/{body['id']}/approve", json={"comment": "同意"}, headers=people["approver"]
    )
    assert approved.status_code == 200, approved.get_json()
    shown = approved.get_json()
    assert shown["state"] == "approved" and shown["approved_by"] == "api-approver"
    assert shown["decision_comment"] == "同意" and len(shown["snapshot_sha256"]) == 64
    assert shown["valid_from"] == clock.business_today().isoformat()
    session.expire_all()  # the API wrote through its own session
    assert session.get(Provider, quoted["offers"][0].provider_id).status == "approved"
    actors = session.exec(
        select(AuditEntry.action, AuditEntry.actor_name)
        .where(AuditEntry.entity == "decision", AuditEntry.entity_id == body["id"])
        .order_by(AuditEntry.id)
    ).all()
    assert [tuple(row) for row in actors] == [("create", "api-analyst"), ("update", "api-approver")]

    again = api.post(f"/api/v1/decisions/{body['id']}/approve", headers=people["approver2"])
    assert [e["field"] for e in assert_error_shape(again, 409)] == ["state"]


def test_approve_without_a_body(api, people, quoted):
    decision_id = _propose(api, quoted, people["analyst"]).get_json()["id"]
    response = api.post(f"/api/v1/decisions/{decision_id}/approve", headers=people["admin"])
    assert response.status_code == 200 and response.get_json()["decision_comment"] == ""


def test_roles_and_four_eyes(api, people, quoted):
    denied = _propose(api, quoted, people["viewer"])
    assert_error_shape(denied, 403)
    assert_error_shape(_propose(api, quoted, {}), 401)
    decision_id = _propose(api, quoted, people["approver"]).get_json()["id"]
    for role in ("viewer", "analyst"):
        response = api.post(f"/api/v1/decisions/{decision_id}/approve", json={}, headers=people[role])
        assert_error_shape(response, 403)
    own = api.post(f"/api/v1/decisions/{decision_id}/approve", json={}, headers=people["approver"])
    [error] = assert_error_shape(own, 403)
    assert "提议人不能审批" in error["message"]
    english = api.post(
        f"/api/v1/decisions/{decision_id}/reject",
        json={"comment": "自己否决"},
        headers={**people["approver"], "Accept-Language": "en"},
    )
    [error] = assert_error_shape(english, 403)
    assert "proposed" in error["message"] and "never" in error["message"]
    assert (
        api.get(f"/api/v1/decisions/{decision_id}", headers=people["viewer"]).get_json()["state"]
        == "proposed"
    )


def test_return_and_reject_need_a_comment(api, people, quoted):
    decision_id = _propose(api, quoted, people["analyst"]).get_json()["id"]
    for action in ("return", "reject"):
        response = api.post(f"/api/v1/decisions/{decision_id}/{action}", json={}, headers=people["approver"])
        assert [e["field"] for e in assert_error_shape(response, 422)] == ["comment"]
    unknown = api.post(
        f"/api/v1/decisions/{decision_id}/return", json={"comment": "x", "why": 1}, headers=people["approver"]
    )
    assert [e["field"] for e in assert_error_shape(unknown, 422)] == ["why"]
    returned = api.post(
        f"/api/v1/decisions/{decision_id}/return", json={"comment": "补充条件"}, headers=people["approver"]
    )
    assert returned.status_code == 200 and returned.get_json()["state"] == "returned"
    assert returned.get_json()["decided_by"] == "api-approver" and returned.get_json()["approved_by"] is None


def test_proposal_errors_name_the_field(api, people, quoted, session):
    response = _propose(
        api, quoted, people["analyst"], term_months=0, conditions=[{"text": "", "due_on": "x"}]
    )
    assert {e["field"] for e in assert_error_shape(response, 422)} == {
        "term_months",
        "conditions[0].text",
        "conditions[0].due_on",
    }
    [warning] = check_run(session, quoted["offers"][0].provider_id, ("bandwidth_shared", "warning", None))
    uncovered = _propose(api, quoted, people["analyst"])
    [error] = assert_error_shape(uncovered, 422)
    assert error["field"] == "risk_acceptances" and "bandwidth_shared" in error["message"]
    covered = _propose(
        api,
        quoted,
        people["analyst"],
        risk_acceptances=[{"finding_id": warning.id, "reason": "带宽合同已签独享", "until": "2099-01-01"}],
    )
    assert covered.status_code == 201
    assert covered.get_json()["risk_acceptances"][0]["rule_id"] == "bandwidth_shared"
    missing = api.post("/api/v1/cases/999999/decisions", json=proposal(quoted), headers=people["analyst"])
    assert_error_shape(missing, 404)
    assert_error_shape(api.get("/api/v1/decisions/999999", headers=people["viewer"]), 404)
    assert_error_shape(api.post("/api/v1/decisions/999999/approve", json={}, headers=people["admin"]), 404)
    not_json = api.post(
        f"/api/v1/cases/{quoted['case_id']}/decisions", data="offer_ids=1", headers=people["analyst"]
    )
    assert_error_shape(not_json, 400)


def test_changed_evidence_is_a_409_naming_the_change(api, people, quoted, session):
    decision_id = _propose(api, quoted, people["analyst"]).get_json()["id"]
    check_run(session, quoted["offers"][0].provider_id, ("storage_virtual", "warning", None))
    response = api.post(f"/api/v1/decisions/{decision_id}/approve", json={}, headers=people["approver"])
    [error] = assert_error_shape(response, 409)
    assert error["field"] == "evidence" and "storage_virtual" in error["message"]


def test_the_routes_are_documented(api):
    paths = api.get("/api/v1/openapi.json").get_json()["paths"]
    assert set(paths["/cases/{case_id}/decisions"]) == {"get", "post"}
    assert set(paths["/decisions/{decision_id}"]) >= {"get"}
    approve = paths["/decisions/{decision_id}/approve"]["post"]
    assert {"403", "409"} <= set(approve["responses"])
    assert "proposed the decision" in approve["description"]
    for action in ("return", "reject"):
        assert "proposer (403)" in paths[f"/decisions/{{decision_id}}/{action}"]["post"]["description"]
