"""Selection questionnaire pages: one step per page (no JavaScript), results, checklist with hand ticks."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from flask import Response, abort, current_app, flash, jsonify, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import has_role, role_required
from app.advice import questionnaire
from app.advice.answers import validate_step
from app.cases import cases as service
from app.cases.quote_comparison import comparison
from app.core.db import get_session
from app.core.errors import Conflict, FieldError, InvalidInput
from app.core.i18n import current_language
from app.core.limits import parse_id
from app.models.enums import Role
from app.web import bp
from app.web.case_steps import (
    FORMS,
    STEP_FIELDS,
    STEP_TITLES,
    effects_for,
    kind_choices,
    step_values,
    stored_step_values,
)
from app.web.forms import bind, display_values, parse_form, split_errors
from app.web.nav import nav_item

nav_item(
    "web.cases",
    _l("选型问卷"),
    order=40,
    active=("web.case_new", "web.case_step", "web.case_detail", "web.case_checklist", "web.case_quote_new"),
)


# Offers listed per group (eligible / excluded) on the result page; the CLI and API can list all.
PAGE_OFFERS = 100


def _actor() -> service.Actor:
    return service.Actor(current_user.id, current_user.username)


def _posted(values: dict[str, Any]) -> dict[str, Any]:
    """The page's values as answers to preview (blank inputs left out)."""
    return {name: value for name, value in values.items() if value not in ("", None, [])}


def _questions(
    raw: dict[str, Any], step: str, values: dict[str, Any], by_field: dict[str, list[str]]
) -> tuple[list[Any], dict[str, Any]]:
    """The bound inputs (required ones marked) and, per input, its derived default and effect lines."""
    spec = FORMS[step]
    shown = _posted(values)
    required = questionnaire.required_fields(raw, step, shown) if raw else set()
    fields = [
        replace(field, required=True) if field.name in required else field
        for field in bind(spec, values, by_field)
    ]
    defaults = questionnaire.derived_defaults(raw, step, shown) if raw else {}
    effects = effects_for({**raw, step: shown}, step) if raw else {}
    extras = {
        field.name: {"default": defaults.get(field.name), "effects": effects.get(field.name)}
        for field in fields
        if field.name in defaults or field.name in effects
    }
    return fields, extras


def _step_links(case: Any, raw: dict[str, Any]) -> list[dict[str, Any]]:
    keys = questionnaire.steps_for(raw)
    return [
        {
            "key": key,
            "title": STEP_TITLES[key],
            "answered": key in raw,
            "url": url_for("web.case_step", case_id=case.id, step=key) if case is not None else None,
        }
        for key in keys
    ]


def _render_step(
    case: Any, step: str, values: dict[str, Any], errors: list[FieldError], version: Any, status: int = 200
) -> Any:
    spec = FORMS[step]
    prefix = f"{step}."
    local = [
        FieldError(e.field.removeprefix(prefix), e.message) if e.field.startswith(prefix) else e
        for e in errors
    ]
    by_field, general = split_errors(spec, local)
    raw = case.answers if case is not None else {}
    keys = questionnaire.steps_for(raw) if case is not None else ["workload"]
    position = keys.index(step) + 1 if step in keys else 1
    fields, extras = _questions(raw, step, values, by_field)
    html = render_template(
        "cases/step.html",
        case=case,
        step=step,
        step_title=STEP_TITLES[step],
        steps=_step_links(case, raw) if case is not None else [],
        position=position,
        total=len(keys) if case is not None else None,
        fields=fields,
        extras=extras,
        general_errors=general,
        conflict=any(error.field == "version" for error in errors),
        version=version,
        is_first=position == 1,
        is_last=case is not None and step == keys[-1],
        action=url_for("web.case_step", case_id=case.id, step=step)
        if case is not None
        else url_for("web.case_new"),
        preview_url=url_for("web.case_step_preview", case_id=case.id, step=step)
        if case is not None and extras
        else None,
    )
    return html, status


def _step_errors_general(errors: list[FieldError], current: str) -> list[FieldError]:
    """Every error: the current step's stay under their inputs, other steps' name the step and question."""
    out = []
    for error in errors:
        section, _dot, rest = error.field.partition(".")
        title = STEP_TITLES.get(section)
        if title is None or (section == current and rest):
            out.append(error)
        elif not rest:
            out.append(FieldError("", _("%(step)s：本步尚未填写", step=title)))
        else:
            name = rest.split("[", 1)[0].split(".", 1)[0]
            label = next((f.text for f in STEP_FIELDS[section] if f.name == name), name)
            out.append(FieldError("", f"{title} · {label}: {error.message}"))
    return out


@bp.get("/cases")
@role_required(Role.viewer)
def cases() -> Any:
    """Procurement cases, newest first."""
    rows = service.list_cases(get_session())
    kinds = dict(kind_choices(None))
    return render_template("cases/list.html", cases=rows, kinds=kinds)


@bp.route("/cases/new", methods=["GET", "POST"])
@role_required(Role.analyst)
def case_new() -> Any:
    """First step: the workload kind; posting it creates the draft case."""
    if request.method == "GET":
        return _render_step(None, "workload", step_values("workload", {}), [], None)
    data = parse_form(FORMS["workload"], request.form)
    try:
        case = service.start_case(get_session(), workload=data, owner=_actor())
    except InvalidInput as exc:
        return _render_step(
            None, "workload", display_values(FORMS["workload"], data), exc.errors, None, exc.status
        )
    return redirect(url_for("web.case_step", case_id=case.id, step=case.step))


@bp.route("/cases/<int:case_id>/steps/<step>", methods=["GET", "POST"])
@role_required(Role.analyst)
def case_step(case_id: int, step: str) -> Any:
    """One questionnaire step: back / next / finish buttons, answers kept in the case on the server."""
    session = get_session()
    case = service.get_case(session, case_id=case_id)
    if step not in FORMS:
        abort(404)
    if request.method == "GET":
        return _render_step(case, step, stored_step_values(case.answers, step), [], case.version)
    data = parse_form(FORMS[step], request.form)
    version = request.form.get("version", "")
    nav = request.form.get("nav", "next")
    if nav == "check":
        return _checked(case, step, data, version)
    try:
        case = service.save_step(session, case_id=case_id, step=step, data=data, version=version)
    except (InvalidInput, Conflict) as exc:
        if nav == "back" and not isinstance(exc, Conflict):
            previous = questionnaire.neighbour(case.answers, step, -1)
            if previous:
                flash(_("本页有误，未保存；已返回上一步"), "warning")
                return redirect(url_for("web.case_step", case_id=case_id, step=previous))
        session.expire_all()
        case = service.get_case(session, case_id=case_id)
        filled, _derived = questionnaire.with_defaults(case.answers, step, data)
        return _render_step(case, step, display_values(FORMS[step], filled), exc.errors, version, exc.status)
    if nav == "back":
        target = questionnaire.neighbour(case.answers, step, -1) or step
        return redirect(url_for("web.case_step", case_id=case_id, step=target))
    if nav == "save":
        flash(_("已保存"), "success")
        return redirect(url_for("web.case_step", case_id=case_id, step=step))
    following = questionnaire.neighbour(case.answers, step, 1)
    if nav == "next" and following:
        return redirect(url_for("web.case_step", case_id=case_id, step=following))
    try:
        service.finish_case(session, case_id=case_id, version=case.version)
    except InvalidInput as exc:
        session.expire_all()
        case = service.get_case(session, case_id=case_id)
        errors = _step_errors_general(exc.errors, step)
        return _render_step(
            case, step, step_values(step, case.answers.get(step, {})), errors, case.version, 422
        )
    flash(_("问卷已完成"), "success")
    return redirect(url_for("web.case_detail", case_id=case_id))


def _checked(case: Any, step: str, data: dict[str, Any], version: str) -> Any:
    """The "check" button: the page again with derived defaults, errors and effects; nothing is saved."""
    filled, _derived = questionnaire.with_defaults(case.answers, step, data)
    errors: list[FieldError] = []
    try:
        validate_step(step, filled, case.answers)
    except InvalidInput as exc:
        errors = exc.errors
    shown = display_values(FORMS[step], filled)
    return _render_step(case, step, shown, errors, version, 422 if errors else 200)


@bp.get("/cases/<int:case_id>/steps/<step>/preview")
@role_required(Role.analyst)
def case_step_preview(case_id: int, step: str) -> Any:
    """JSON for the live hints: each question's derived default and effect lines, from the inputs as typed."""
    case = service.get_case(get_session(), case_id=case_id)
    if step not in FORMS:
        abort(404)
    shown = _posted(display_values(FORMS[step], parse_form(FORMS[step], request.args)))
    _fields, extras = _questions(case.answers, step, shown, {})
    body = {
        name: {
            "default": None
            if extra["default"] is None
            else {
                "value": display_values(FORMS[step], {name: extra["default"].value})[name],
                "basis": extra["default"].basis,
            },
            "effects": extra["effects"] or [],
        }
        for name, extra in extras.items()
    }
    return jsonify({"fields": body})


def _check_link(provider_id: int) -> str | None:
    """The provider's credential-check page, when that page exists."""
    if "web.provider_credentials" in current_app.view_functions:
        return url_for("web.provider_credentials", provider_id=provider_id)
    return url_for("web.provider_detail", provider_id=provider_id)


def step_link(case_id: int) -> Any:
    """A function giving the address of one questionnaire step of the case (nearest misses link it)."""
    return lambda step: url_for("web.case_step", case_id=case_id, step=step) if step in FORMS else None


def _unfinished(case: Any) -> Any:
    """Send an analyst back to the first unfinished step; tell a viewer the case is not finished."""
    if not has_role(current_user, Role.analyst):
        return render_template("cases/unfinished.html", case=case), 409
    step = questionnaire.first_invalid(case.answers) or case.step
    if step not in FORMS:
        step = questionnaire.steps_for(case.answers)[-1]
    flash(_("问卷尚未完成，请继续填写"), "info")
    return redirect(url_for("web.case_step", case_id=case.id, step=step))


@bp.get("/cases/<int:case_id>")
@role_required(Role.viewer)
def case_detail(case_id: int) -> Any:
    """Requirements with their arithmetic, ranked and excluded offers, latency table, FAQ."""
    session = get_session()
    case = service.get_case(session, case_id=case_id)
    if not case.complete:
        return _unfinished(case)
    advice = service.advise_case(session, case_id=case_id, check_link=_check_link)
    shown = advice.to_dict(limit=PAGE_OFFERS, step_url=step_link(case_id))
    return render_template(
        "cases/result.html",
        case=case,
        advice=shown,
        page_offers=PAGE_OFFERS,
        lang=current_language(),
        steps=_step_links(case, case.answers),
        history=service.case_history(session, case_id=case_id),
        changed=service.evidence_since(session, case=case),
        quotes=comparison(session, case_id=case_id, advice=advice, shown=shown["offers"]),
    )


@bp.post("/cases/<int:case_id>/resave")
@role_required(Role.analyst)
def case_resave(case_id: int) -> Any:
    """Save the case again on the evidence there is now (clears the "evidence changed" notice)."""
    try:
        service.resave_case(get_session(), case_id=case_id, version=request.form.get("version", ""))
    except (Conflict, InvalidInput) as exc:
        for error in exc.errors:
            flash(error.message, "danger")
    else:
        flash(_("已按最新证据重新保存"), "success")
    return redirect(url_for("web.case_detail", case_id=case_id))


@bp.get("/cases/<int:case_id>/answers.json")
@role_required(Role.viewer)
def case_answers(case_id: int) -> Any:
    """The case's answers as JSON (the input of `flask advise`)."""
    case = service.get_case(get_session(), case_id=case_id)
    body = json.dumps(case.answers, ensure_ascii=False, indent=2)
    return Response(
        body,
        mimetype="application/json",
        headers={"Content-Disposition": f'attachment; filename="case-{case.id}-answers.json"'},
    )


def _provider_param() -> int | None:
    raw = request.args.get("provider_id", "").strip()
    if not raw:
        return None
    provider_id = parse_id(raw)
    if provider_id is None:
        raise InvalidInput(
            "供应商编号须为正整数 (provider_id must be a positive integer)", field="provider_id"
        )
    return provider_id


@bp.get("/cases/<int:case_id>/checklist")
@role_required(Role.viewer)
def case_checklist(case_id: int) -> Any:
    """The case's checklist, or the checklist for one provider auto-ticked from its evidence."""
    session = get_session()
    case = service.get_case(session, case_id=case_id)
    if not case.complete:
        return _unfinished(case)
    advice = service.advise_case(session, case_id=case_id, check_link=_check_link)
    provider_id = _provider_param()
    ticks = service.ticks_of(session, case_id=case_id)
    providers = {provider.id: provider.name for provider in advice.ranked.table.providers}
    entries = (
        service.provider_checklist(advice, provider_id=provider_id, ticks=ticks)
        if provider_id is not None
        else list(advice.checklist)
    )
    eligible = advice.ranked.eligible_provider_ids()
    return render_template(
        "cases/checklist.html",
        case=case,
        entries=[entry.to_dict() for entry in entries],
        providers=sorted(providers.items(), key=lambda item: (item[0] not in eligible, item[1])),
        eligible=eligible,
        provider_id=provider_id,
        provider_name=providers.get(provider_id) if provider_id else None,
        lang=current_language(),
        errors={},
    )


@bp.post("/cases/<int:case_id>/checklist/tick")
@role_required(Role.analyst)
def case_tick(case_id: int) -> Any:
    """Tick or untick one item by hand with a comment and an optional evidence link (audited)."""
    session = get_session()
    form = request.form
    provider_raw = form.get("provider_id", "").strip()
    provider_id = parse_id(provider_raw)
    if provider_raw and provider_id is None:
        raise InvalidInput(
            "供应商编号须为正整数 (provider_id must be a positive integer)", field="provider_id"
        )
    item_key = form.get("item_key", "")
    try:
        service.tick_item(
            session,
            case_id=case_id,
            item_key=item_key,
            provider_id=provider_id,
            done=form.get("done", "1") == "1",
            comment=form.get("comment", ""),
            evidence_url=form.get("evidence_url", ""),
            actor=_actor(),
        )
    except InvalidInput as exc:
        for error in exc.errors:
            flash(f"{item_key}: {error.message}", "danger")
    else:
        flash(_("已记录"), "success")
    target = (
        url_for("web.case_checklist", case_id=case_id, provider_id=provider_id)
        if provider_id
        else url_for("web.case_checklist", case_id=case_id)
    )
    return redirect(f"{target}#item-{item_key}")
