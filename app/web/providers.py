"""Provider pages: list with search and filters, detail, create, edit, delete."""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from app.accounts.auth import role_required
from app.core.db import get_session
from app.core.errors import Conflict, FieldError, InvalidInput
from app.core.provinces import PROVINCES
from app.credentials.verdicts import verdict_of, verdicts_of
from app.credentials.verification import by_subject
from app.models import Provider
from app.models.enums import Role
from app.registry import provider_list
from app.registry import providers as service
from app.vetting.identifiers import identify
from app.vetting.subjects import findings_by_record, record_numbers
from app.web import bp, labels
from app.web.forms import (
    PROVIDER_FORM,
    cleaned,
    display_values,
    parse_form,
    record_values,
    render_form,
)
from app.web.list_filters import errors_by_field, kept_filters, parse_leniently
from app.web.nav import nav_item

# Query-string keys the list page understands (kept in pagination links).
LIST_KEYS = (
    *("q", "province", "gpu_model", "bandwidth_type", "storage_type", "status"),
    *("verdict", "checked", "stale_days", "sort", "per_page"),
)
SORT_LABELS = {
    "name": _l("名称 A→Z"),
    "-name": _l("名称 Z→A"),
    "-updated": _l("最近修改"),
    "updated": _l("最早修改"),
    "province": _l("省份"),
    "status": _l("状态"),
    "verdict": _l("结论 差→好"),
    "-verdict": _l("结论 好→差"),
}


# The verdict filter offers the words the verdict pill shows (labels.VERDICT), and "some credentials not
# verified" (app.registry.provider_list.VERDICT_FILTERS).
VERDICT_FILTERS = {
    "fail": labels.VERDICT["fail"],
    "needs_review": labels.VERDICT["needs_review"],
    "pass": labels.VERDICT["pass"],
    "unchecked": _l("未核验（从未核查）"),
    "unverified": _l("有资料未经官方核实"),
}
# The pill's word for a level: never checked reads "未核验" as in the verdict's own label.
VERDICT_PILLS = {**labels.VERDICT, "unchecked": labels.VERDICT["not_verified"]}
CHECKED_FILTERS = {"never": _l("从未核查"), "stale": _l("久未核查")}


def _list_query() -> tuple[provider_list.ProviderQuery, list[FieldError]]:
    """The list query from the URL; invalid parameters are dropped and reported."""
    params = {key: value for key, value in request.args.items() if key in (*LIST_KEYS, "page")}
    params.setdefault("per_page", current_app.config.get("PAGE_SIZE", 20))
    if params.get("checked") == "stale" and not params.get("stale_days"):
        from app.web.dashboard import configured_stale_days

        params["stale_days"] = configured_stale_days()
    return parse_leniently(provider_list.parse_query, params)


def _summary(provider: Provider) -> dict[str, Any]:
    """Row data from the eagerly loaded collections only (no per-row queries)."""
    gpu_models = sorted({offer.gpu_model for offer in provider.offers})
    return {
        "provider": provider,
        "licences": [
            (licence.number or licence.number_raw, licence.categories) for licence in provider.licences
        ],
        "gpu_models": gpu_models,
        "datacenters": len(provider.datacenters),
        "offers": len(provider.offers),
    }


nav_item("web.providers", _l("供应商列表"), order=10, active=("web.provider_detail",))
nav_item("web.provider_new", _l("新建供应商"), role=Role.analyst, order=20)


@bp.get("/providers")
@role_required(Role.viewer)
def providers() -> Any:
    """Provider list: search box, filters, sort and pagination."""
    query, errors = _list_query()
    session = get_session()
    page = provider_list.list_providers(session, query=query)
    filters = {key: request.args.get(key, "") for key in LIST_KEYS}
    field_errors = errors_by_field(errors)
    kept = kept_filters(request.args, LIST_KEYS, field_errors)
    html = render_template(
        "providers/list.html",
        page=page,
        rows=[_summary(provider) for provider in page.items],
        verdicts=verdicts_of(session, [provider.id for provider in page.items]),
        filters=filters,
        field_errors=field_errors,
        kept=kept,
        provinces=PROVINCES,
        sorts=SORT_LABELS,
        verdict_filters=VERDICT_FILTERS,
        verdict_pills=VERDICT_PILLS,
        checked_filters=CHECKED_FILTERS,
        active_filters=any(filters[key] for key in LIST_KEYS if key not in ("sort", "per_page")),
    )
    return html, (422 if errors else 200)


@bp.get("/providers/<int:provider_id>")
@role_required(Role.viewer)
def provider_detail(provider_id: int) -> Any:
    """Everything recorded about one provider, with identifier checks and the change history."""
    session = get_session()
    provider = service.get_provider(session, provider_id=provider_id)
    datacenter_names = {dc.id: dc.name for dc in provider.datacenters}
    checks = {
        "licences": {licence.id: identify(licence.number_raw) for licence in provider.licences},
        "filings": {filing.id: identify(filing.number_raw) for filing in provider.filings},
        "uscc": identify(provider.uscc) if provider.uscc else None,
    }
    verdict = verdict_of(session, provider_id)
    offer_items: dict[int, list[Any]] = {}
    for item in verdict.items:
        if item.kind == "offer":
            offer_items.setdefault(item.extra["offer_id"], []).append(item)
    return render_template(
        "providers/detail.html",
        provider=provider,
        datacenter_names=datacenter_names,
        checks=checks,
        verdict=verdict,
        verifications=by_subject(verdict.items),
        offer_verifications=offer_items,
        record_findings=record_findings(session, provider, verdict.check_run_id),
        history=service.history(session, provider_id=provider_id),
    )


def record_findings(session: Any, provider: Provider, check_run_id: int | None) -> dict[str, list[Any]]:
    """The latest check run's findings about each licence and filing ('licence:3': [finding dict ...])."""
    if check_run_id is None:
        return {}
    from app.credentials.checks import finding_dict, run_findings

    records = [("licence", r.id, r.number or r.number_raw) for r in provider.licences]
    records += [("filing", r.id, r.number or r.number_raw) for r in provider.filings]
    found = [finding_dict(stored) for stored in run_findings(session, check_run_id=check_run_id)]
    return findings_by_record(found, record_numbers(records))


def _render_provider_form(
    provider: Provider | None, values: dict[str, Any], errors: list[FieldError], version: Any = None
) -> str:
    if provider is None:
        title, action, cancel = _("新建供应商"), url_for("web.provider_new"), url_for("web.providers")
    else:
        title = _("编辑供应商")
        action = url_for("web.provider_edit", provider_id=provider.id)
        cancel = url_for("web.provider_detail", provider_id=provider.id)
    return render_form(
        PROVIDER_FORM,
        provider=provider,
        values=values,
        errors=errors,
        title=title,
        action=action,
        cancel=cancel,
        version=version,
    )


@bp.route("/providers/new", methods=["GET", "POST"])
@role_required(Role.analyst)
def provider_new() -> Any:
    """Create a provider (its licences, offers ... are added on the detail page)."""
    if request.method == "GET":
        return _render_provider_form(None, display_values(PROVIDER_FORM, PROVIDER_FORM.defaults()), [])
    data = parse_form(PROVIDER_FORM, request.form)
    try:
        provider = service.create_provider(get_session(), data=cleaned(data))
    except (InvalidInput, Conflict) as exc:
        return _render_provider_form(None, display_values(PROVIDER_FORM, data), exc.errors), exc.status
    flash(_("已创建供应商“%(name)s”", name=provider.legal_name), "success")
    return redirect(url_for("web.provider_detail", provider_id=provider.id))


@bp.route("/providers/<int:provider_id>/edit", methods=["GET", "POST"])
@role_required(Role.analyst)
def provider_edit(provider_id: int) -> Any:
    """Change a provider's own fields; the hidden version refuses a stale save."""
    session = get_session()
    provider = service.get_provider(session, provider_id=provider_id)
    if request.method == "GET":
        return _render_provider_form(provider, record_values(PROVIDER_FORM, provider), [], provider.version)
    data = parse_form(PROVIDER_FORM, request.form)
    version = request.form.get("version", "")
    try:
        service.update_provider(session, provider_id=provider_id, patch={**cleaned(data), "version": version})
    except (InvalidInput, Conflict) as exc:
        provider = service.get_provider(session, provider_id=provider_id)
        html = _render_provider_form(provider, display_values(PROVIDER_FORM, data), exc.errors, version)
        return html, exc.status
    flash(_("已保存"), "success")
    return redirect(url_for("web.provider_detail", provider_id=provider_id))


@bp.route("/providers/<int:provider_id>/delete", methods=["GET", "POST"])
@role_required(Role.admin)
def provider_delete(provider_id: int) -> Any:
    """Confirm, then delete a provider with all its records (admins only)."""
    session = get_session()
    provider = service.get_provider(session, provider_id=provider_id)
    if request.method == "GET":
        return render_template(
            "providers/delete.html", provider=provider, version=provider.version, errors=[]
        )
    version = request.form.get("version", "")
    name = provider.legal_name
    try:
        service.delete_provider(session, provider_id=provider_id, expected_version=version)
    except (InvalidInput, Conflict) as exc:
        provider = service.get_provider(session, provider_id=provider_id)
        html = render_template(
            "providers/delete.html",
            provider=provider,
            version=version,
            errors=[error.message for error in exc.errors],
        )
        return html, exc.status
    flash(_("已删除供应商“%(name)s”", name=name), "success")
    return redirect(url_for("web.providers"))
