"""Account administration for admins: list, create, change role, activate, reset password, revoke tokens."""

from __future__ import annotations

from typing import Any

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts import users
from app.accounts.auth import role_required
from app.core.db import get_session
from app.core.errors import ServiceError
from app.models.enums import Role
from app.web import bp, labels
from app.web.nav import nav_item

nav_item("web.user_list", _l("用户管理"), role=Role.admin, order=90)


def _label_error(error: dict[str, str]) -> str:
    return f"{labels.field_label(error['field'])}: {error['message']}" if error["field"] else error["message"]


def _page(errors: list | None = None, form: dict | None = None, status: int = 200) -> Any:
    return (
        render_template(
            "users/list.html",
            users=users.list_users(get_session()),
            tokens=users.list_tokens(get_session()),
            token_state=users.token_state,
            roles=[role.value for role in Role],
            general_errors=[_label_error(error) for error in errors or []],
            form=form or {},
        ),
        status,
    )


@bp.get("/admin/users")
@role_required(Role.admin)
def user_list() -> Any:
    """All accounts with their roles."""
    return _page()


@bp.post("/admin/users")
@role_required(Role.admin)
def user_create() -> Any:
    """Create an account."""
    form = {key: request.form.get(key, "") for key in ("username", "role")}
    try:
        users.create_user(
            get_session(),
            username=form["username"],
            password=request.form.get("password", ""),
            role=form["role"],
        )
    except ServiceError as exc:
        return _page([e.as_dict() for e in exc.errors], form, exc.status)
    flash(_("已创建用户 %(name)s", name=form["username"].strip()), "success")
    return redirect(url_for("web.user_list"))


@bp.post("/admin/users/<int:user_id>")
@role_required(Role.admin)
def user_update(user_id: int) -> Any:
    """Change role and active flag, or set a new password (which ends the user's sessions and tokens)."""
    session = get_session()
    try:
        if request.form.get("password"):
            user = users.set_password(session, user_id=user_id, password=request.form["password"])
            done = _("已为 %(name)s 重设密码：其会话已退出，API 令牌已全部吊销", name=user.username)
        else:
            users.update_user(
                session,
                user_id=user_id,
                role=request.form.get("role") or None,
                active=request.form.get("active") == "true",
                acting_id=current_user.id,
            )
            done = _("已保存")
    except ServiceError as exc:
        session.rollback()
        return _page([e.as_dict() for e in exc.errors], status=exc.status)
    flash(done, "success")
    return redirect(url_for("web.user_list"))


@bp.post("/admin/tokens/<int:token_id>/revoke")
@role_required(Role.admin)
def token_revoke(token_id: int) -> Any:
    """Revoke an API token of any user."""
    session = get_session()
    try:
        users.revoke_token(session, token_id=token_id)
    except ServiceError as exc:
        session.rollback()
        return _page([e.as_dict() for e in exc.errors], status=exc.status)
    flash(_("已吊销令牌 %(id)s", id=token_id), "success")
    return redirect(url_for("web.user_list"))
