"""The home page: what needs attention at a glance, every figure a link to the filtered list behind it."""

from __future__ import annotations

from typing import Any

from flask import current_app, redirect, render_template, request, url_for
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import has_role, role_required
from app.core.db import get_session
from app.core.errors import InvalidInput
from app.core.runtime_settings import effective
from app.models.enums import Role
from app.registry import dashboard as service
from app.registry.dashboard_lists import MAX_DAYS, whole_number
from app.web import bp
from app.web.credentials import CHECK_LABELS, VERDICT_LABELS
from app.web.decision_due import DUE_KIND_LABELS, DUE_SHOWN, due_rows
from app.web.nav import nav_item

VERDICT_CARDS = {
    "fail": (VERDICT_LABELS["fail"], "danger"),
    "needs_review": (VERDICT_LABELS["needs_review"], "warning"),
    "pass": (VERDICT_LABELS["pass"], "success"),
    "unchecked": (_l("未核查"), "secondary"),
}
EXPIRY_LABELS = {
    "expired": _l("已过期"),
    "7": _l("7 天内到期"),
    "30": _l("8-30 天内到期"),
    "90": _l("31-90 天内到期"),
}
EXPIRY_COLOURS = {"expired": "danger", "7": "danger", "30": "warning", "90": "info"}
INVITATION_STATES = {
    "sent": _l("已发送"),
    "opened": _l("已打开"),
    "draft": _l("填写中"),
    "submitted": _l("待审核"),
}
INVITATIONS_ENDPOINT = "web.invitation_list"  # the invitation list (issue 14), linked when it is installed

nav_item("web.dashboard", _l("工作台"), order=5)


def configured_stale_days() -> int:
    """Days after which a provider's latest check counts as old (GPUVET_DASHBOARD_STALE_DAYS)."""
    settings = effective(current_app.config.get("GPUVET_SETTINGS"))  # as edited on the settings page
    return int(getattr(settings, "dashboard_stale_days", service.DEFAULT_STALE_DAYS))


def stale_days_from(args: Any) -> tuple[int, list[str]]:
    """The `stale_days` parameter (1-3650), else the configured default; errors as messages."""
    try:
        days = whole_number(args, "stale_days", high=MAX_DAYS)
    except InvalidInput as exc:
        return configured_stale_days(), [f"stale_days: {error.message}" for error in exc.errors]
    return days or configured_stale_days(), []


def invitations_url(**params: Any) -> str | None:
    """The invitation list's URL when that page exists and the user may open it (analysts)."""
    if INVITATIONS_ENDPOINT not in current_app.view_functions or not has_role(current_user, Role.analyst):
        return None
    return url_for(INVITATIONS_ENDPOINT, **params)


@bp.get("/")
@role_required(Role.viewer)
def dashboard() -> Any:
    """The dashboard; an old provider-list link ("/?q=...") is sent on to /providers with its query."""
    if set(request.args) - {"stale_days"}:
        return redirect(url_for("web.providers", **request.args.to_dict(flat=False)), code=301)
    stale_days, errors = stale_days_from(request.args)
    session = get_session()
    board = service.dashboard(session, stale_days=stale_days)
    html = render_template(
        "dashboard/index.html",
        board=board,
        errors=errors,
        verdict_cards=VERDICT_CARDS,
        expiry_labels=EXPIRY_LABELS,
        expiry_colours=EXPIRY_COLOURS,
        **CHECK_LABELS,
        failure_days=service.RECENT_FAILURE_DAYS,
        invitations_url=invitations_url,
        invitation_states=INVITATION_STATES,
        decisions_due=due_rows(session)[:DUE_SHOWN],
        due_kinds=DUE_KIND_LABELS,
    )
    return html, (422 if errors else 200)
