"""Decision pages: the proposal form (errors at their inputs, never a 500), the decision page (the proposer
and a viewer told in words why they cannot approve, an approver approves), roles, the signed PDF's link."""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlmodel import select

from app.models.decisions import Decision, DecisionState
from app.models.reports import ExportRecord
from tests.cases.test_decisions import (  # noqa: F401 - world: a fixture (arranged)
    NAMES,
    body,
    check_run,
    quote,
    world,
)
from tests.conftest import PASSWORD
from tests.web.conftest import field_error

FOUR_EYES = "四眼原则：你是本决定的提议人"


@pytest.fixture
def arranged(request) -> dict[str, Any]:
    """tests.cases.test_decisions' world: a case, three providers with one offer each, people of each role."""
    return request.getfixturevalue("world")


def signed_in(app, username: str):
    client = app.test_client()
    response = client.post("/login", data={"username": username, "password": PASSWORD})
    assert response.status_code in (302, 303)
    return client


def form(arranged: dict[str, Any], *indexes: int, **changes: Any) -> dict[str, Any]:
    """The proposal form's fields for the offers of providers `indexes` (default: the first)."""
    data = {
        "offer_ids": [str(arranged["offers"][index].id) for index in indexes or (0,)],
        "scope": "离线批处理：图片标注数据",
        "term_months": "12",
        "justification": "每有效卡时价格最低",
        "condition_text_0": "交付后 30 天内复测内网带宽",
        "condition_due_on_0": "2027-03-01",
        "condition_rows": "3",
    }
    return {**data, **changes}


def test_the_case_page_links_the_proposal_form_for_analysts_only(app, session, arranged):
    case_id = arranged["case"].id
    html = signed_in(app, "analyst-user").get(f"/cases/{case_id}").get_data(as_text=True)
    assert f'href="/cases/{case_id}/decisions/new"' in html and 'id="no-decisions"' in html
    viewer = signed_in(app, "viewer-user")
    assert 'id="propose-decision"' not in viewer.get(f"/cases/{case_id}").get_data(as_text=True)
    assert viewer.get(f"/cases/{case_id}/decisions/new").status_code == 403


def test_the_form_lists_the_quoted_offers_and_asks_for_a_single_source_reason(app, session, arranged):
    quote(session, arranged, 0)
    quote(session, arranged, 1)
    html = (
        signed_in(app, "analyst-user")
        .get(f"/cases/{arranged['case'].id}/decisions/new")
        .get_data(as_text=True)
    )
    for offer in arranged["offers"][:2]:
        assert f'name="offer_ids" value="{offer.id}"' in html
    assert "有效报价的供应商只有 2 家" in html  # fewer than three: the reason is required, and says why
    assert 'for="f-single_source_reason">单一来源理由 <span class="text-danger required-mark"' in html


def test_errors_are_shown_at_their_inputs(app, session, arranged):
    for index in range(3):
        quote(session, arranged, index)
    url = f"/cases/{arranged['case'].id}/decisions/new"
    analyst = signed_in(app, "analyst-user")
    bad = form(arranged, scope="", term_months="61", justification="  ", condition_due_on_0="2027-02-30")
    del bad["offer_ids"]
    response = analyst.post(url, data=bad)
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert field_error(html, "offer_ids") and "至少 1 个字符" in field_error(html, "scope")  # text, not items
    assert "不能大于 60" in field_error(html, "term_months")
    assert "至少 1 个字符" in field_error(html, "justification")
    assert "YYYY-MM-DD" in field_error(html, "condition_due_on_0")
    assert 'value="交付后 30 天内复测内网带宽"' in html  # what was typed is kept
    assert session.exec(select(Decision)).first() is None


def test_two_quotes_without_a_reason_are_refused_at_the_reason(app, session, arranged):
    quote(session, arranged, 0)
    quote(session, arranged, 1)
    response = signed_in(app, "analyst-user").post(
        f"/cases/{arranged['case'].id}/decisions/new", data=form(arranged, 0)
    )
    assert response.status_code == 422
    assert field_error(response.get_data(as_text=True), "single_source_reason")


def test_an_open_finding_needs_its_acceptance_row(app, session, arranged):
    for index in range(3):
        quote(session, arranged, index)
    (finding,) = check_run(session, arranged["providers"][0].id, ("missing_icp", "warning", None))
    url = f"/cases/{arranged['case'].id}/decisions/new"
    analyst = signed_in(app, "analyst-user")
    html = analyst.get(url).get_data(as_text=True)
    assert f'id="finding-{finding.id}"' in html and "missing_icp 的中文说明" in html
    refused = analyst.post(url, data=form(arranged, 0))
    assert refused.status_code == 422 and field_error(refused.get_data(as_text=True), "risk_acceptances")
    half = analyst.post(url, data=form(arranged, 0, **{f"accept_reason_{finding.id}": "补交材料"}))
    assert half.status_code == 422 and field_error(half.get_data(as_text=True), f"accept_until_{finding.id}")
    accepted = form(
        arranged,
        0,
        **{f"accept_reason_{finding.id}": "签约前补交 ICP 备案", f"accept_until_{finding.id}": "2099-01-31"},
    )
    done = analyst.post(url, data=accepted)
    assert done.status_code in (302, 303)
    page = analyst.get(done.headers["Location"]).get_data(as_text=True)
    assert "签约前补交 ICP 备案" in page and "2099-01-31" in page


def test_the_proposer_is_told_why_and_the_approver_approves(app, session, arranged):
    for index in range(3):
        quote(session, arranged, index)
    analyst = signed_in(app, "analyst-user")
    done = analyst.post(f"/cases/{arranged['case'].id}/decisions/new", data=form(arranged, 0))
    assert done.status_code in (302, 303)
    decision = session.exec(select(Decision)).one()
    url = f"/decisions/{decision.id}"
    assert done.headers["Location"].endswith(url)

    own = analyst.get(url).get_data(as_text=True)
    why = own.split('id="why-not"', 1)[1].split("</ul>", 1)[0]
    assert FOUR_EYES in why and "你的角色不能审批" in why  # in words, not a disabled button alone
    assert 'id="approve"' not in own  # an analyst gets no decide form at all
    assert analyst.post(f"{url}/decide", data={"action": "approve"}).status_code == 403

    approver = signed_in(app, "approver-user")
    page = approver.get(url).get_data(as_text=True)
    assert 'id="why-not"' not in page and 'id="approve"' in page and NAMES[0] in page
    assert "交付后 30 天内复测内网带宽" in page and "2027-03-01" in page
    approved = approver.post(f"{url}/decide", data={"action": "approve", "comment": "同意"})
    assert approved.status_code in (302, 303)
    session.refresh(decision)
    assert decision.state == DecisionState.approved and decision.decided_by_name == "approver-user"
    page = approver.get(url).get_data(as_text=True)
    assert decision.snapshot_sha256 in page and "已批准" in page and 'id="decide-form"' not in page
    twice = approver.post(f"{url}/decide", data={"action": "approve"})
    assert twice.status_code == 409 and "只有待审批的决定可以审批" in twice.get_data(as_text=True)


def test_an_admin_who_proposed_sees_the_four_eyes_refusal(app, session, arranged):
    for index in range(3):
        quote(session, arranged, index)
    admin = signed_in(app, "admin-user")
    admin.post(f"/cases/{arranged['case'].id}/decisions/new", data=form(arranged, 1))
    decision = session.exec(select(Decision)).one()
    page = admin.get(f"/decisions/{decision.id}").get_data(as_text=True)
    assert FOUR_EYES in page and re.search(r'id="approve"[^>]*disabled', page)
    refused = admin.post(f"/decisions/{decision.id}/decide", data={"action": "approve"})
    assert refused.status_code == 403 and "提议人不能审批" in refused.get_data(as_text=True)


def test_return_needs_a_comment_and_a_viewer_may_only_read(app, session, arranged):
    for index in range(3):
        quote(session, arranged, index)
    signed_in(app, "analyst-user").post(f"/cases/{arranged['case'].id}/decisions/new", data=form(arranged, 2))
    decision = session.exec(select(Decision)).one()
    url = f"/decisions/{decision.id}"
    viewer = signed_in(app, "viewer-user")
    page = viewer.get(url).get_data(as_text=True)
    assert 'id="decide-form"' not in page and "你的角色不能审批" in page
    assert viewer.post(f"{url}/decide", data={"action": "approve"}).status_code == 403
    approver = signed_in(app, "approver-user")
    empty = approver.post(f"{url}/decide", data={"action": "return", "comment": " "})
    assert empty.status_code == 422 and "退回或否决时必填" in empty.get_data(as_text=True)
    assert approver.post(f"{url}/decide", data={"action": "dance"}).status_code == 400
    assert approver.post(f"{url}/decide", data={"action": "return", "comment": "补充报价"}).status_code == 302
    session.refresh(decision)
    assert decision.state == DecisionState.returned
    returned = signed_in(app, "analyst-user").get(url).get_data(as_text=True)
    assert (
        "补充报价" in returned
        and f'href="/cases/{arranged["case"].id}/decisions/new?from={decision.id}"' in returned
    )


def test_the_pdf_link_hands_out_the_signed_export(app, session, arranged):
    for index in range(3):
        quote(session, arranged, index)
    signed_in(app, "analyst-user").post(f"/cases/{arranged['case'].id}/decisions/new", data=form(arranged, 0))
    decision = session.exec(select(Decision)).one()
    viewer = signed_in(app, "viewer-user")
    response = viewer.get(f"/decisions/{decision.id}/pdf?lang=en")
    record = session.exec(select(ExportRecord)).one()
    assert response.status_code == 302 and response.headers["Location"].endswith(f"/reports/{record.id}.pdf")
    assert record.kind == "decision" and record.language == "en"
    assert viewer.get(response.headers["Location"]).data[:5] == b"%PDF-"
    html = viewer.get(f"/reports/{record.id}").get_data(
        as_text=True
    )  # the export as HTML: back to the decision
    assert f'href="/decisions/{decision.id}"' in html and record.number in html
    assert viewer.get(f"/decisions/{decision.id}/pdf?lang=fr").status_code == 422
    assert viewer.get("/decisions/999999").status_code == 404
    assert viewer.get("/decisions/999999/pdf").status_code == 404


def test_changed_evidence_and_a_licence_flag_are_named_with_a_link_to_propose_again(app, session, arranged):
    for index in range(3):
        quote(session, arranged, index)
    analyst = signed_in(app, "analyst-user")
    analyst.post(f"/cases/{arranged['case'].id}/decisions/new", data=form(arranged, 0, term_months="7"))
    decision = session.exec(select(Decision)).one()
    check_run(session, arranged["providers"][0].id, ("licence_scope", "blocker", 2))  # after the proposal
    page = signed_in(app, "approver-user").get(f"/decisions/{decision.id}").get_data(as_text=True)
    changed = page.split('id="evidence-changed"', 1)[1].split("</ul>", 1)[0]
    assert f"供应商 {NAMES[0]} 新增未解决的发现 licence_scope:licence:1" in changed  # what changed, in words
    why = page.split('id="why-not"', 1)[1].split("</ul>", 1)[0]
    assert "许可证红旗 2" in why and "licence_scope 的中文说明" in why and "证据已变化" in why
    assert re.search(r'id="approve"[^>]*disabled', page)
    again = analyst.get(f"/decisions/{decision.id}").get_data(as_text=True)
    link = re.search(r'id="propose-again" href="([^"]+)"', again).group(1).replace("&amp;", "&")
    assert link == f"/cases/{arranged['case'].id}/decisions/new?from={decision.id}"
    prefilled = analyst.get(link).get_data(as_text=True)
    assert 'id="f-term_months" value="7"' in prefilled and "交付后 30 天内复测内网带宽" in prefilled
    assert re.search(
        rf'value="{arranged["offers"][0].id}" id="f-offer-{arranged["offers"][0].id}" checked', prefilled
    )


def test_an_approved_decision_past_its_term_says_it_needs_approving_again(app, session, arranged):
    from datetime import date

    from tests.cases.test_decisions import at

    for index in range(3):
        quote(session, arranged, index, days=400)
    signed_in(app, "analyst-user").post(
        f"/cases/{arranged['case'].id}/decisions/new", data=form(arranged, 0, term_months="1")
    )
    decision = session.exec(select(Decision)).one()
    signed_in(app, "approver-user").post(f"/decisions/{decision.id}/decide", data={"action": "approve"})
    session.refresh(decision)
    later = decision.valid_until.toordinal() + 1
    with at(date.fromordinal(later)):
        page = signed_in(app, "viewer-user").get(f"/decisions/{decision.id}").get_data(as_text=True)
        case_page = signed_in(app, "analyst-user").get(f"/cases/{arranged['case'].id}").get_data(as_text=True)
    assert 'id="needs-reapproval"' in page and "须重新审批" in page
    assert "须重新审批" in case_page.split('id="decisions"', 1)[1]


@pytest.mark.parametrize("odd", ["9" * 5000, "²", "-1", "0", "abc", "99999999999999999999"])
def test_odd_row_counts_and_earlier_decisions_never_give_500(app, session, arranged, odd):
    for index in range(3):
        quote(session, arranged, index)
    url = f"/cases/{arranged['case'].id}/decisions/new"
    analyst = signed_in(app, "analyst-user")
    assert analyst.get(f"{url}?from={odd}").status_code == 200
    refused = analyst.post(url, data=form(arranged, 0, condition_rows=odd, scope=""))
    assert refused.status_code == 422 and field_error(refused.get_data(as_text=True), "scope")
    assert 'value="交付后 30 天内复测内网带宽"' in refused.get_data(as_text=True)  # row 0 still read
