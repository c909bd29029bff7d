"""Procurement decision pages (采购决定): the proposal form of a case, the decision page with its four-eyes
approval, and the signed decision PDF."""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from app.accounts.auth import has_role, role_required
from app.cases import cases as case_service
from app.cases import decision_document as document
from app.cases import decision_evidence as evidence
from app.cases import decisions as service
from app.cases.quote_comparison import comparison
from app.core import clock
from app.core.db import get_session
from app.core.errors import FieldError, ServiceError
from app.core.i18n import current_language
from app.core.limits import parse_id
from app.core.vocabulary import label
from app.credentials.report_exports import Author
from app.models.decisions import Decision, DecisionState
from app.models.enums import Role
from app.reports.pdf import renderer_for_settings
from app.web import bp
from app.web.missing import or_404

CONDITION_ROWS = 3  # blank condition rows the form offers (more after a post that filled them all)
MAX_CONDITION_ROWS = 50  # as many as a decision may carry (app.cases.decisions.DecisionIn)
CANDIDATES = 5  # leading eligible offers offered besides the quoted ones
ACTIONS = {
    "approve": service.approve,
    "return": service.return_decision,
    "reject": service.reject,
}


CASE_DECISIONS = 20  # decisions listed on the case page, the latest first


def _actor() -> case_service.Actor:
    return case_service.Actor(current_user.id, current_user.username)


@bp.app_template_global()
def case_decisions(case_id: int) -> list[dict[str, Any]]:
    """The case's latest decisions with their effective state (the case page lists them)."""
    today = clock.business_today()
    return [
        {
            "id": decision.id,
            "scope": decision.scope,
            "proposed_by_name": decision.proposed_by_name,
            "proposed_at": decision.proposed_at,
            "effective_state": service.effective_state(decision, today),
        }
        for decision in service.list_decisions(get_session(), case_id=case_id, limit=CASE_DECISIONS)
    ]


# ---------------------------------------------------------------- the proposal form


def _offer_choices(session: Any, case_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The quote comparison and the offers to choose from: the quoted ones, then leading eligible ones."""
    advice = case_service.advise_case(session, case_id=case_id)
    quotes = comparison(session, case_id=case_id, advice=advice)
    choices: dict[int, dict[str, Any]] = {}
    for column in quotes["columns"]:
        quote, offer = column["quote"], column["offer"]
        if quote["offer_id"] not in choices:
            name = (
                (offer or {}).get("offer_name") or (offer or {}).get("gpu_model") or f"#{quote['offer_id']}"
            )
            choices[quote["offer_id"]] = {
                "offer_id": quote["offer_id"],
                "provider_id": quote["provider_id"],
                "name": f"{quote['provider_name']} · {name}",
                "quoted": True,
                "expired": quote["expired"],
            }
    for a in advice.eligible[: CANDIDATES + len(choices)]:
        if a.offer.id not in choices and len(choices) < len(quotes["columns"]) + CANDIDATES:
            choices[a.offer.id] = {
                "offer_id": a.offer.id,
                "provider_id": a.offer.provider.id,
                "name": f"{a.offer.provider.name} · {a.offer.name or a.offer.gpu_model}",
                "quoted": False,
                "expired": False,
            }
    return quotes, list(choices.values())


def _findings(session: Any, offers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The open findings of every provider offered, each with whether it rules the provider out."""
    names = {offer["provider_id"]: offer["name"].split(" · ")[0] for offer in offers}
    rows = []
    for provider_id, found in evidence.open_findings_of(session, names).items():
        for finding in found:
            rows.append(
                {
                    "id": finding.id,
                    "provider_id": provider_id,
                    "provider_name": names[provider_id],
                    "severity": finding.severity,
                    "red_flag": finding.red_flag,
                    "blocks": evidence.is_licence_block(finding),
                    "message": finding.message(current_language()),
                    "key": evidence.finding_key(finding.rule_id, finding.subject),
                }
            )
    return rows


def _rows(form: Any, prefix: str, names: tuple[str, ...], count: int) -> list[dict[str, str]]:
    return [
        {name: form.get(f"{prefix}{name}_{index}", "").strip() for name in names} for index in range(count)
    ]


def _posted(form: Any, findings: list[dict[str, Any]]) -> tuple[dict[str, Any], list[int]]:
    """The service's input from the form: blank condition rows left out, an acceptance for each finding row
    with a reason or a date; and the finding of each acceptance (to put its errors on its row)."""
    count = parse_id(form.get("condition_rows"), MAX_CONDITION_ROWS) or CONDITION_ROWS
    conditions = [
        {"text": row["text"], "due_on": row["due_on"] or None}
        for row in _rows(form, "condition_", ("text", "due_on"), count)
        if row["text"] or row["due_on"]
    ]
    accepted, finding_ids = [], []
    for finding in findings:
        reason = form.get(f"accept_reason_{finding['id']}", "").strip()
        until = form.get(f"accept_until_{finding['id']}", "").strip()
        if reason or until:
            accepted.append({"finding_id": finding["id"], "reason": reason, "until": until or None})
            finding_ids.append(finding["id"])
    data = {
        "offer_ids": form.getlist("offer_ids"),
        "scope": form.get("scope", ""),
        "term_months": form.get("term_months", "").strip() or None,
        "justification": form.get("justification", ""),
        "single_source_reason": form.get("single_source_reason", ""),
        "conditions": conditions,
        "risk_acceptances": accepted,
    }
    return data, finding_ids


def _error_map(errors: list[FieldError], finding_ids: list[int]) -> dict[str, list[str]]:
    """Errors by the form's own input names: conditions[1].text -> condition_text_1, risk_acceptances[0].until
    -> accept_until_<its finding>; offer_ids[0] -> offer_ids; anything else under its service name."""
    by_field: dict[str, list[str]] = {}
    for error in errors:
        field = error.field or ""
        name = field.split("[", 1)[0].split(".", 1)[0]
        if name in ("conditions", "risk_acceptances") and "[" in field:
            index_text, _sep, rest = field.split("[", 1)[1].partition("]")
            part = rest.lstrip(".") or "text"
            index = int(index_text) if index_text.isdigit() else -1
            if name == "conditions":
                name = f"condition_{part}_{index}"
            elif 0 <= index < len(finding_ids):
                name = f"accept_{part if part in ('reason', 'until') else 'reason'}_{finding_ids[index]}"
        by_field.setdefault(name, []).append(error.message)
    return by_field


def _form_values(source: Any | None) -> dict[str, Any]:
    """The form's values to show: a returned or earlier decision's (propose again), else blank."""
    if source is None:
        return {
            "offer_ids": [],
            "scope": "",
            "term_months": "",
            "justification": "",
            "single_source_reason": "",
        }
    return {
        "offer_ids": [str(offer_id) for offer_id in source.offer_ids],
        "scope": source.scope,
        "term_months": str(source.term_months),
        "justification": source.justification,
        "single_source_reason": source.single_source_reason,
    }


def _render_form(
    case: Any,
    values: dict[str, Any],
    conditions: list[dict[str, Any]],
    accepted: dict[int, dict[str, str]],
    errors: dict[str, list[str]],
    status: int,
) -> Any:
    session = get_session()
    quotes, offers = _offer_choices(session, case.id)
    known = {"offer_ids", "scope", "term_months", "justification", "single_source_reason", "risk_acceptances"}
    general = [
        message
        for name, messages in errors.items()
        if name not in known and not name.startswith(("condition_", "accept_"))
        for message in messages
    ]
    rows = [
        *conditions,
        *({"text": "", "due_on": ""} for _i in range(max(CONDITION_ROWS - len(conditions), 1))),
    ]
    html = render_template(
        "decisions/form.html",
        case=case,
        quotes=quotes,
        offers=offers,
        findings=_findings(session, offers),
        values=values,
        conditions=rows,
        accepted=accepted,
        errors=errors,
        general_errors=general,
        lang=current_language(),
    )
    return html, status


@bp.route("/cases/<int:case_id>/decisions/new", methods=["GET", "POST"])
@role_required(Role.analyst)
def decision_new(case_id: int) -> Any:
    """Propose a decision: chosen offers, scope, term, conditions, justification, risk acceptances."""
    session = get_session()
    case = or_404(case_service.get_case, case_id=case_id)
    if request.method == "GET":
        earlier = parse_id(request.args.get("from"))
        source = session.get(Decision, earlier) if earlier is not None else None
        source = source if source is not None and source.case_id == case_id else None
        conditions = (
            [
                {"text": c.text, "due_on": c.due_on.isoformat() if c.due_on else ""}
                for c in service.conditions_of(session, source.id)
            ]
            if source is not None
            else []
        )
        return _render_form(case, _form_values(source), conditions, {}, {}, 200)
    _quotes, offers = _offer_choices(session, case_id)
    findings = _findings(session, offers)
    data, finding_ids = _posted(request.form, findings)
    try:
        decision = service.propose(session, case_id=case_id, data=data, actor=_actor())
    except ServiceError as exc:
        session.rollback()
        values = {**data, "term_months": data["term_months"] or ""}
        accepted = {
            item["finding_id"]: {"reason": item["reason"], "until": item["until"] or ""}
            for item in data["risk_acceptances"]
        }
        conditions = [{"text": c["text"], "due_on": c["due_on"] or ""} for c in data["conditions"]]
        return _render_form(
            case, values, conditions, accepted, _error_map(exc.errors, finding_ids), exc.status
        )
    flash(_("采购决定已提出，等待审批"), "success")
    return redirect(url_for("web.decision_detail", decision_id=decision.id))


# ---------------------------------------------------------------- the decision page


def _why_not(decision: Any, blocks: list[dict[str, Any]], changed: list[str]) -> list[str]:
    """Why the reader cannot approve this proposed decision now, in words (empty: they can)."""
    reasons = []
    if not has_role(current_user, Role.approver):
        reasons.append(_("只有审批人或管理员可以审批采购决定；你的角色不能审批。"))
    if decision.proposed_by_id is not None and decision.proposed_by_id == current_user.id:
        reasons.append(_("四眼原则：你是本决定的提议人，不能审批自己的提议；请另一位审批人处理。"))
    reasons.extend(
        _(
            "%(provider)s 有许可证红旗 %(flag)s：%(message)s。该供应商不能被批准。",
            provider=b["provider_name"],
            flag=b["red_flag"],
            message=b["message"],
        )
        for b in blocks
    )
    if changed:
        reasons.append(_("提议后证据已变化，不能按原提议批准，请重新提议。"))
    return reasons


def _decision_page(decision_id: int, *, errors: list[str] | None = None, status: int = 200) -> Any:
    session = get_session()
    decision = or_404(service.get_decision, decision_id=decision_id)
    case = case_service.get_case(session, case_id=decision.case_id)
    advice = case_service.advise_case(session, case_id=case.id)
    quotes = comparison(session, case_id=case.id, advice=advice)
    verdicts = {c["quote"]["offer_id"]: (c["offer"] or {}).get("verdict") for c in quotes["columns"]}
    offers = document.chosen_offers(session, decision, verdicts)
    blocks = [
        {
            "provider_name": offer["provider_name"],
            "red_flag": finding.red_flag,
            "message": finding.message(current_language()),
        }
        for provider_id, offer in {o.get("provider_id"): o for o in offers}.items()
        if provider_id is not None
        for finding in evidence.licence_blocks(session, provider_id)
    ]
    pending = decision.state == DecisionState.proposed
    changed = evidence.changes(session, decision) if pending else []
    html = render_template(
        "decisions/detail.html",
        case=case,
        decision=decision,
        shown=service.decision_dict(session, decision, current_language()),
        quotes=quotes,
        offers=offers,
        changed=changed,
        why_not=_why_not(decision, blocks, changed) if pending else [],
        may_decide=pending and has_role(current_user, Role.approver),
        errors=errors or [],
        lang=current_language(),
    )
    return html, status


@bp.get("/decisions/<int:decision_id>")
@role_required(Role.viewer)
def decision_detail(decision_id: int) -> Any:
    """The decision: its state, the comparison, chosen offers, conditions, acceptances, approval."""
    return _decision_page(decision_id)


@bp.post("/decisions/<int:decision_id>/decide")
@role_required(Role.approver)
def decision_decide(decision_id: int) -> Any:
    """Approve, return or reject (with a comment); a refusal is shown on the decision page in words."""
    session = get_session()
    or_404(service.get_decision, decision_id=decision_id)
    action = ACTIONS.get(request.form.get("action", ""))
    if action is None:
        return _decision_page(decision_id, errors=[_("请选择批准、退回或否决")], status=400)
    try:
        decision = action(
            session, decision_id=decision_id, actor=_actor(), comment=request.form.get("comment", "")
        )
    except ServiceError as exc:
        session.rollback()
        return _decision_page(decision_id, errors=[error.message for error in exc.errors], status=exc.status)
    flash(_("采购决定已处理：%(state)s", state=label(decision.state, kind="decision_state")), "success")
    return redirect(url_for("web.decision_detail", decision_id=decision_id))


@bp.get("/decisions/<int:decision_id>/pdf")
@role_required(Role.viewer)
def decision_pdf(decision_id: int) -> Any:
    """The signed decision document (the same numbered file again while the decision is unchanged)."""
    session = get_session()
    or_404(service.get_decision, decision_id=decision_id)
    try:
        record = document.decision_pdf(
            session,
            decision_id=decision_id,
            language=request.args.get("lang") or current_language(),
            author=Author(id=current_user.id, name=current_user.username),
            renderer=renderer_for_settings(current_app.config["GPUVET_SETTINGS"]),
        )
    except ServiceError as exc:
        session.rollback()
        return _decision_page(decision_id, errors=[error.message for error in exc.errors], status=exc.status)
    return redirect(url_for("web.report_download", export_id=record.id))
