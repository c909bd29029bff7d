"""Analyst pages of the disclosure questionnaire: invitations and their status, reminders, review, merge."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any

from flask import flash, make_response, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import role_required
from app.core import clock as localtime
from app.core.db import get_session
from app.core.errors import Conflict, FieldError, InvalidInput, NotFound, ServiceError
from app.core.i18n import current_language
from app.disclosure import comparison, invitations
from app.disclosure import merge as disclosure_merge
from app.disclosure import review as disclosure_review
from app.disclosure import schema as schema
from app.disclosure import uploads as disclosure_uploads
from app.models.enums import Role
from app.registry import provider_list
from app.web import bp, labels
from app.web.nav import nav_item

nav_item(
    "web.invitation_list",
    _l("问卷邀请"),
    role=Role.analyst,
    order=82,
    active=("web.invitation_review", "web.invitation_new"),
)

STATUS_COLOURS = {
    "sent": "secondary",
    "opened": "info",
    "draft": "info",
    "submitted": "warning",
    "reviewed": "success",
    "expired": "dark",
    "revoked": "danger",
}
EVENT_LABELS = {
    "created": _l("创建"),
    "viewed": _l("供应商打开"),
    "draft_saved": _l("已保存草稿"),
    "uploaded": _l("已上传文件"),
    "upload_refused": _l("拒收文件"),
    "submit_refused": _l("提交未通过校验"),
    "submitted": _l("提交"),
    "refused": _l("拒绝访问"),
    "revoked": _l("撤销"),
    "reminded": _l("提醒"),
    "reviewed": _l("审核"),
    "merged": _l("合并入登记簿"),
}
STATE_COLOURS = {
    "added": "success",
    "changed": "warning",
    "unchanged": "light",
    "answered": "success",
    "declined": "danger",
    "unanswered": "warning",
    "declared_only": "light",
}


def _actor() -> tuple[int | None, str]:
    return current_user.id, current_user.username


def _errors_text(errors: list[FieldError]) -> str:
    return "；".join(f"{error.field}: {error.message}" if error.field else error.message for error in errors)


# ---------------------------------------------------------------- values as people read them
def show_value(section: str, name: str, value: Any) -> Any:
    """A declared or registry value in words: choices by their label, yes/no, lists joined, '—' for none."""
    spec = schema.SECTION_BY_NAME.get(section)
    field_spec = next((f for f in spec.fields if f.name == name), None) if spec else None
    if field_spec is not None and field_spec.choices and value is not None:
        return field_spec.choice_label(value)
    if field_spec is not None and field_spec.widget == "upload" and value:
        return _("附件 #%(id)s", id=value)
    return labels.value_label(name, value)


def field_label(section: str, name: str) -> Any:
    """A questionnaire field's label (the registry's label for a field the form does not ask)."""
    spec = schema.SECTION_BY_NAME.get(section)
    field_spec = next((f for f in spec.fields if f.name == name), None) if spec else None
    return field_spec.label() if field_spec else labels.field_label(name)


def topic_state(state: str) -> str:
    """A red-flag-13 topic's state in the current language."""
    zh, en = disclosure_merge.TOPIC_STATES.get(state, (state, state))
    return en if current_language() == "en" else zh


@bp.record_once
def _register(state: Any) -> None:
    globals_ = state.app.jinja_env.globals
    globals_["invitation_status_label"] = disclosure_review.status_label
    globals_["invitation_status_colour"] = lambda status: STATUS_COLOURS.get(status, "secondary")
    globals_["invitation_state_label"] = disclosure_review.state_label
    globals_["invitation_state_colour"] = lambda state: STATE_COLOURS.get(state, "secondary")
    globals_["invitation_status"] = disclosure_review.effective_status
    globals_["disclosure_value"] = show_value
    globals_["disclosure_field_label"] = field_label
    globals_["disclosure_topic_state"] = topic_state
    globals_["disclosure_section_title"] = lambda section: schema.SECTION_BY_NAME[section].title()
    globals_["invitation_event_label"] = lambda kind: EVENT_LABELS.get(kind, kind)
    globals_["provider_disclosure"] = provider_disclosure


def provider_disclosure(provider_id: int) -> dict[str, Any]:
    """For the provider page's card: pending invitations, the latest merged declaration and its files."""
    session = get_session()
    return {
        "pending": disclosure_review.pending_for_provider(session, provider_id=provider_id),
        "declared": disclosure_merge.declaration_summary(session, provider_id=provider_id),
        "uploads": disclosure_review.merged_uploads(session, provider_id=provider_id),
    }


# ---------------------------------------------------------------- list, new, remind, revoke
LIST_KEYS = ("status", "q", "provider_id")
NEW_KEYS = ("provider_id", "legal_name", "email", "expires_in_days")


@bp.get("/invitations")
@role_required(Role.analyst)
def invitation_list() -> Any:
    """Every invitation with its status; filter by status, name or e-mail, provider."""
    session = get_session()
    params = {key: request.args.get(key, "") for key in (*LIST_KEYS, "page")}
    errors: list[FieldError] = []
    try:
        query = disclosure_review.parse_list_query(params)
    except InvalidInput as exc:
        errors = exc.errors
        bad = {error.field for error in errors}
        try:
            query = disclosure_review.parse_list_query({k: v for k, v in params.items() if k not in bad})
        except InvalidInput:
            query = disclosure_review.parse_list_query({})
    page = disclosure_review.list_invitations(session, query=query)
    html = render_template(
        "invitations/list.html",
        page=page,
        query=query,
        filters={key: request.args.get(key, "") for key in LIST_KEYS},
        errors=errors,
        counts=disclosure_review.status_counts(session),
        statuses=disclosure_review.STATUSES,
        names={row.id: disclosure_review.provider_name(session, row) for row in page.items},
    )
    return html, (422 if errors else 200)


def _form_worded(errors: list[FieldError], data: dict[str, str]) -> list[FieldError]:
    """The service's errors, its "provider_id or legal_name" said with the form's words instead."""
    if ("provider_id" in data) != ("legal_name" in data):
        return errors
    message = _("请选择已登记的供应商，或填写新供应商的企业名称（二者选一）")
    return [FieldError("", message) if not error.field else error for error in errors]


@bp.route("/invitations/new", methods=["GET", "POST"])
@role_required(Role.analyst)
def invitation_new() -> Any:
    """Invite an existing provider (provider_id) or a new one (legal name); the link is shown once."""
    session = get_session()
    form = {
        key: request.values.get(key, "") for key in ("provider_id", "legal_name", "email", "expires_in_days")
    }
    names = {
        "provider_id": _("已登记的供应商"),
        "legal_name": _("新供应商的企业名称"),
        "email": _("邮箱"),
        "expires_in_days": _("有效天数（默认 14）"),
    }
    page = functools.partial(
        render_template,
        "invitations/new.html",
        field_names=names,
        providers=provider_list.picker_choices(session),
    )
    if request.method == "GET":
        return page(form=form, errors=[], created=None)
    data = {key: value for key, value in form.items() if value.strip()}
    try:
        created = invitations.create(
            session, data=data, actor_id=current_user.id, actor_name=current_user.username
        )
    except ServiceError as exc:
        return page(form=form, errors=_form_worded(exc.errors, data), created=None), exc.status
    return page(form={}, errors=[], created=created)


@bp.post("/invitations/<int:invitation_id>/remind")
@role_required(Role.analyst)
def invitation_remind(invitation_id: int) -> Any:
    """Issue a fresh link, e-mail it where possible, and show it once (the old link stops working)."""
    back = _local_next(request.form.get("next"))
    try:
        reminder = disclosure_review.send_reminder(
            get_session(), invitation_id=invitation_id, actor=current_user.username
        )
    except Conflict as exc:
        flash(_errors_text(exc.errors), "warning")
        return redirect(back)
    response = make_response(render_template("invitations/reminded.html", reminder=reminder, back=back))
    response.headers["Cache-Control"] = "private, no-store"  # the page holds a working link
    return response


def _local_next(target: str | None) -> str:
    """Where to go back to: a path on this site, else the invitation list."""
    if target and target.startswith("/") and not target.startswith("//"):
        return target
    return url_for("web.invitation_list")


@bp.post("/invitations/<int:invitation_id>/revoke")
@role_required(Role.analyst)
def invitation_revoke(invitation_id: int) -> Any:
    """Withdraw the link; answers already saved stay."""
    session = get_session()
    invitation = disclosure_review.get_invitation(session, invitation_id=invitation_id)
    if disclosure_review.effective_status(invitation) == "reviewed":
        flash(_("已审核的问卷不能撤销"), "warning")
    else:
        invitations.revoke(session, invitation_id=invitation_id, actor_name=current_user.username)
        flash(_("已撤销邀请 #%(id)s：链接已失效", id=invitation_id), "success")
    return redirect(_local_next(request.form.get("next")))


# ---------------------------------------------------------------- review and merge
def _review_page(invitation_id: int, errors: list[FieldError] | None = None, status: int = 200) -> Any:
    session = get_session()
    invitation = disclosure_review.get_invitation(session, invitation_id=invitation_id)
    state = disclosure_review.effective_status(invitation)
    if state not in disclosure_review.REVIEWABLE:
        raise NotFound(
            _("邀请 #%(id)s 尚未提交问卷（状态：%(status)s）", id=invitation_id, status=state), field="id"
        )
    items = comparison.review_items(session, invitation)
    merged = (invitation.review or {}).get("merge")
    sections = []
    for section in schema.SECTIONS:
        found = [item for item in items if item.section == section.name]
        if found:
            sections.append((section, found))
    provider = None
    if invitation.provider_id is not None:
        from app.registry.providers import get_provider

        provider = get_provider(session, provider_id=invitation.provider_id)
    html = render_template(
        "invitations/review.html",
        invitation=invitation,
        status=state,
        provider=provider,
        sections=sections,
        undecided=disclosure_review.undecided(items),
        blocker_items=comparison.blockers(items),
        merged=merged,
        merged_at=datetime.fromisoformat(merged["at"]) if merged else None,
        errors=errors or [],
        field_errors={error.field: error.message for error in errors or []},
        events=invitations.events(session, invitation_id=invitation_id),
        uploads=disclosure_uploads.uploads(session, invitation.id),
    )
    return html, status


def _back_to(invitation_id: int) -> str:
    """The review page when there is one, else the list."""
    invitation = disclosure_review.get_invitation(get_session(), invitation_id=invitation_id)
    if disclosure_review.effective_status(invitation) in disclosure_review.REVIEWABLE:
        return url_for("web.invitation_review", invitation_id=invitation_id)
    return url_for("web.invitation_list")


@bp.get("/invitations/<int:invitation_id>/review")
@role_required(Role.analyst)
def invitation_review(invitation_id: int) -> Any:
    """The submission beside the registry, item by item, with accept/reject and a comment for each."""
    return _review_page(invitation_id)


@bp.post("/invitations/<int:invitation_id>/review")
@role_required(Role.analyst)
def invitation_review_save(invitation_id: int) -> Any:
    """Save the decisions (items left blank stay undecided)."""
    keys = {name.removeprefix("decision-") for name in request.form if name.startswith("decision-")}
    keys |= {name.removeprefix("comment-") for name in request.form if name.startswith("comment-")}
    decisions = {
        key: (request.form.get(f"decision-{key}", ""), request.form.get(f"comment-{key}", "")) for key in keys
    }
    try:
        invitation = disclosure_review.save_decisions(
            get_session(), invitation_id=invitation_id, decisions=decisions, actor=current_user.username
        )
    except InvalidInput as exc:
        return _review_page(invitation_id, exc.errors, exc.status)
    except Conflict as exc:
        flash(_errors_text(exc.errors), "warning")
        return redirect(_back_to(invitation_id))
    if invitation.status == "reviewed":
        flash(_("审核已完成：可以把采纳的内容合并入登记簿"), "success")
    else:
        flash(_("已保存审核意见"), "success")
    return redirect(url_for("web.invitation_review", invitation_id=invitation_id))


@bp.post("/invitations/<int:invitation_id>/merge")
@role_required(Role.analyst)
def invitation_merge(invitation_id: int) -> Any:
    """Merge the accepted items into the registry (creating the provider when invited by name)."""
    try:
        result = disclosure_merge.merge_submission(
            get_session(), invitation_id=invitation_id, actor=_actor(), version=request.form.get("version")
        )
    except (InvalidInput, Conflict) as exc:
        return _review_page(invitation_id, exc.errors, exc.status)
    flash(
        _(
            "已合并 %(count)s 项供应商申报内容入登记簿（申报内容仍待核查验证）",
            count=len(result.merged),
        ),
        "success",
    )
    return redirect(url_for("web.provider_detail", provider_id=result.provider.id))


# ---------------------------------------------------------------- audit entries in words (app/web/history.py)
def _summary(value: Any) -> Any:
    return _("已更新") if value else None


def _moment(value: Any) -> Any:
    try:
        return localtime.when(localtime.aware(datetime.fromisoformat(value)))
    except (TypeError, ValueError):
        return value


def _as_is(value: Any) -> Any:
    return value


def _declared_change(name: str, value: Any) -> Any:
    """One declared value: "机房 · 省份: 北京" (identity fields without the section)."""
    from app.web.history import Change

    section, _dot, rest = name.partition(".")
    if section not in schema.SECTION_BY_NAME or not rest:
        return Change(labels.field_label(name), None, labels.value_label(name, value))
    field = rest.rsplit(".", 1)[-1]
    label = field_label(section, field)
    if section != "identity":
        label = f"{schema.SECTION_BY_NAME[section].title()} · {label}"
    return Change(label, None, show_value(section, field, value), verbatim=isinstance(value, str))


def invitation_changes(action: str, changes: dict[str, Any]) -> list[Any]:
    """An invitation's audit entry as labelled changes; whole answers and decisions only as "updated"."""
    from app.web.history import Change

    if action == "declare":  # the merge's record of declared values (app/disclosure/merge.py)
        return [_declared_change(name, pair[1]) for name, pair in changes.items() if len(pair) == 2]
    columns: dict[str, tuple[Any, Any]] = {
        "legal_name": (_("企业名称"), _as_is),
        "email": (_("邮箱"), _as_is),
        "status": (_("状态"), disclosure_review.status_label),
        "expires_at": (_("有效期至"), _moment),
        "submitted_at": (_("提交时间"), _moment),
        "reviewed_at": (_("审核时间"), _moment),
        "revoked_at": (_("撤销时间"), _moment),
        "last_reminder_at": (_("最近提醒"), _moment),
        "reminders": (_("提醒次数"), _as_is),
        "answers": (_("问卷回答"), _summary),
        "review": (_("审核结果"), _summary),
    }
    shown = []
    if "review" in changes and len(changes["review"]) == 2:
        before, after = changes["review"]
        if (after or {}).get("merge") and not (before or {}).get("merge"):
            changes = {**changes, "review": [None, None]}
            shown.append(Change(_("审核结果"), None, _("已合并入登记簿")))
    for name, pair in changes.items():
        if name in columns and len(pair) == 2:
            label, show = columns[name]
            before, after = (None if value in (None, {}, "") else show(value) for value in pair)
            shown.append(Change(label, before, after))
    return shown
