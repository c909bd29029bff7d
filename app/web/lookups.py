"""Official lookup pages: start an ICP or licence lookup, answer its captcha, see the result; or record it.

The captcha picture comes from stored evidence (web.evidence_image, served as an image type only).
For the ICP slider captcha the picture is an <input type="image">: clicking the gap submits the click's
x coordinate as the answer, without any script; it can also be typed. When the official system cannot
be reached, the analyst records what the official site showed, with a screenshot (services/manual_lookups).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user
from sqlmodel import Session

from app.accounts.auth import role_required
from app.core.db import get_session
from app.core.errors import Conflict, InvalidInput
from app.credentials import lookups as service
from app.credentials import manual_lookups
from app.models import Provider
from app.models.enums import Role
from app.models.evidence import Lookup, LookupKind, LookupState
from app.models.jobs import Job
from app.registry import providers as provider_service
from app.web import bp, labels
from app.web.actions import act_and_return
from app.web.credentials import credentials_panel
from app.web.jobs import job_link, job_view
from app.web.manual_records import record_by_hand, render_manual_page
from app.web.missing import or_404

STATE_LABELS = labels.LOOKUP_STATE
STATE_COLOURS = {
    LookupState.pending: "secondary",
    LookupState.awaiting_answer: "info",
    LookupState.checking: "primary",
    LookupState.completed: "success",
    LookupState.failed: "danger",
    LookupState.manual: "warning",
}
KIND_LABELS = {
    LookupKind.icp: _l("ICP 备案查询"),
    LookupKind.licence: _l("增值电信许可证查询"),
    LookupKind.psb: _l("公安备案查询"),
    LookupKind.certification: _l("认证证书查询"),
}
ICP_COLUMNS = ("unitName", "natureName", "mainLicence", "serviceLicence", "domain", "updateRecordTime")
ICP_MANUAL_COLUMNS = ("unitName", "natureName", "mainLicence", "siteName", "domain")
LICENCE_COLUMNS = (
    "companyName",
    "licenceNo",
    "status",
    "businessItems",
    "coverage",
    "issueDate",
    "expiryDate",
)
PSB_COLUMNS = ("unitName", "recordNo", "siteName", "domain")
CERTIFICATE_COLUMNS = ("holder", "number", "kind", "status", "scope", "expiryDate")
# Column headings of the records the official systems return (their API field names).
COLUMN_LABELS = {
    "unitName": _l("主办单位"),
    "natureName": _l("单位性质"),
    "mainLicence": _l("备案号"),
    "serviceLicence": _l("网站备案号"),
    "siteName": _l("网站名称"),
    "domain": _l("网站域名"),
    "updateRecordTime": _l("审核通过日期"),
    "companyName": _l("公司名称"),
    "licenceNo": _l("许可证号"),
    "status": _l("状态"),
    "businessItems": _l("业务种类"),
    "coverage": _l("覆盖范围"),
    "issueDate": _l("发证日期"),
    "expiryDate": _l("有效期至"),
    "recordNo": _l("公安备案号"),
    "holder": _l("获证组织名称"),
    "number": _l("证书编号"),
    "kind": _l("认证类型"),
    "scope": _l("认证范围"),
}


def _max_failures() -> int:
    return current_app.config["GPUVET_SETTINGS"].lookup_max_failures


def _lookup_link(job: Job) -> str | None:
    lookup_id = (job.params or {}).get("lookup_id")
    return url_for("web.lookup_detail", lookup_id=lookup_id) if isinstance(lookup_id, int) else None


for _kind in service.JOB_KINDS.values():
    job_link(_kind, _lookup_link)


def _view_globals() -> dict[str, Any]:
    return {
        "state_labels": STATE_LABELS,
        "state_colours": STATE_COLOURS,
        "kind_labels": KIND_LABELS,
        "icp_columns": ICP_COLUMNS,
        "licence_columns": LICENCE_COLUMNS,
        "icp_manual_columns": ICP_MANUAL_COLUMNS,
        "psb_columns": PSB_COLUMNS,
        "certificate_columns": CERTIFICATE_COLUMNS,
        "column_labels": COLUMN_LABELS,
        "lookup_message": service.message_text,
        "manual_info": manual_lookups.manual_info,
    }


def _lookups_panel(session: Session, provider: Provider) -> dict[str, Any]:
    return {"lookups": service.list_lookups(session, provider_id=provider.id, limit=5), **_view_globals()}


credentials_panel("lookups", "lookups/_panel.html", context=_lookups_panel, order=40)


def _render_list(provider_id: int, *, errors: dict[str, str] | None = None, status: int = 200) -> Any:
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=provider_id)
    html = render_template(
        "lookups/list.html",
        provider=provider,
        lookups=service.list_lookups(session, provider_id=provider_id, limit=50),
        errors=errors or {},
        form=request.form if request.method == "POST" else {},
        **_view_globals(),
    )
    return html, status


@bp.get("/providers/<int:provider_id>/lookups")
@role_required(Role.viewer)
def provider_lookups(provider_id: int) -> Any:
    """The provider's official lookups and the forms to start new ones."""
    return _render_list(provider_id)


@bp.post("/providers/<int:provider_id>/lookups")
@role_required(Role.analyst)
def provider_lookup_start(provider_id: int) -> Any:
    """Start a lookup: a job fetches the first captcha, then the lookup page asks for the answer."""
    try:
        lookup = service.start_lookup(
            get_session(),
            provider_id=provider_id,
            kind=request.form.get("kind", ""),
            query=request.form.get("query"),
            user=current_user,
            max_failures=_max_failures(),
        )
    except (InvalidInput, Conflict) as exc:
        errors = {error.field: error.message for error in exc.errors}
        return _render_list(provider_id, errors=errors, status=exc.status)
    return redirect(url_for("web.lookup_detail", lookup_id=lookup.id))


def _render_detail(lookup: Lookup, *, error: str | None = None, status: int = 200) -> Any:
    session = get_session()
    provider = session.get(Provider, lookup.provider_id)
    job = session.get(Job, lookup.job_id) if lookup.job_id else None
    html = render_template(
        "lookups/detail.html",
        lookup=lookup,
        provider=provider,
        job=job_view(job)
        if job is not None and lookup.state in (LookupState.pending, LookupState.checking)
        else None,
        images=(lookup.captcha_extra or {}).get("images", []),
        error=error,
        can_retry=service.can_retry(session, lookup, max_failures=_max_failures()),
        **_view_globals(),
    )
    return html, status


@bp.get("/lookups/<int:lookup_id>")
@role_required(Role.viewer)
def lookup_detail(lookup_id: int) -> Any:
    """A lookup's state: the captcha to answer, the progress, or the result."""
    return _render_detail(or_404(service.get_lookup, lookup_id=lookup_id))


@bp.post("/lookups/<int:lookup_id>/answer")
@role_required(Role.analyst)
def lookup_answer(lookup_id: int) -> Any:
    """Take the captcha answer (typed, or the x of a click on the picture) and run the lookup."""
    lookup = or_404(service.get_lookup, lookup_id=lookup_id)
    answer = request.form.get("answer", "").strip() or request.form.get("pt.x", "")
    try:
        service.submit_answer(get_session(), lookup_id=lookup_id, answer=answer, user=current_user)
    except (InvalidInput, Conflict) as exc:
        return _render_detail(
            service.get_lookup(get_session(), lookup_id=lookup.id),
            error=exc.errors[0].message,
            status=exc.status,
        )
    return redirect(url_for("web.lookup_detail", lookup_id=lookup_id))


@bp.post("/lookups/<int:lookup_id>/retry")
@role_required(Role.analyst)
def lookup_retry(lookup_id: int) -> Any:
    """Fetch a new captcha for a failed lookup."""
    or_404(service.get_lookup, lookup_id=lookup_id)
    return act_and_return(
        partial(
            service.retry_lookup,
            get_session(),
            lookup_id=lookup_id,
            user=current_user,
            max_failures=_max_failures(),
        ),
        _("已重新获取验证码"),
        url_for("web.lookup_detail", lookup_id=lookup_id),
    )


# ------------------------------------------------------------------------------------------------ by hand
def _manual_form(kind: str, lookup: Lookup | None, provider: Provider) -> dict[str, Any]:
    """The manual form's starting values: the failed lookup's name, or the provider's legal name; now."""
    return {
        "kind": kind,
        "query": lookup.query if lookup is not None else provider.legal_name,
        "found": "",
        "looked_at": manual_lookups.local_now_text(),
        "replaces": lookup.id if lookup is not None else "",
    }


def _render_manual(
    provider: Provider, kind: str, form: Any, *, errors: dict[str, str] | None = None, status: int = 200
) -> Any:
    return render_manual_page(
        "lookups/manual.html",
        provider,
        form,
        errors=errors,
        status=status,
        kind=kind,
        statuses=manual_lookups.LICENCE_STATUSES,
        certificate_statuses=manual_lookups.CERTIFICATE_STATUSES,
        certificate_kinds=manual_lookups.CERTIFICATE_KINDS,
        **_view_globals(),
    )


def _replaced(session: Session, value: Any, provider_id: int) -> Lookup | None:
    """The lookup a manual record stands in for (?replaces= or a form field), if it is this provider's."""
    text = str(value or "").strip()
    if not text.isdigit():
        return None
    lookup = session.get(Lookup, int(text))
    return lookup if lookup is not None and lookup.provider_id == provider_id else None


@bp.get("/providers/<int:provider_id>/lookups/manual")
@role_required(Role.analyst)
def lookup_manual_form(provider_id: int) -> Any:
    """The form to record by hand what an official site showed (?kind=icp|licence|psb|certification,
    ?replaces=<failed id>)."""
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=provider_id)
    kind = request.args.get("kind", "")
    if kind not in set(LookupKind):
        kind = LookupKind.icp.value
    lookup = _replaced(session, request.args.get("replaces"), provider_id)
    return _render_manual(provider, kind, _manual_form(kind, lookup, provider))


@bp.post("/providers/<int:provider_id>/lookups/manual")
@role_required(Role.analyst)
def lookup_manual_record(provider_id: int) -> Any:
    """Store the analyst's result and screenshot as evidence; the lookup page then shows it, marked manual."""
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=provider_id)
    replaced = _replaced(session, request.form.get("replaces"), provider_id)
    lookup, errors, status = record_by_hand(
        lambda screenshot, filename: manual_lookups.record_manual(
            session,
            provider_id=provider_id,
            kind=request.form.get("kind", ""),
            values=request.form,
            screenshot=screenshot,
            filename=filename,
            user=current_user,
            replaces=replaced.id if replaced is not None else None,
        )
    )
    if errors:
        kind = request.form.get("kind", "")
        return _render_manual(provider, kind, request.form, errors=errors, status=status)
    flash(_("已记录人工查询结果，截图已存为证据"), "success")
    return redirect(url_for("web.lookup_detail", lookup_id=lookup.id))
