"""Login (throttled), logout, one's own password, notices about one's own account, the language switch."""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlsplit

from flask import abort, flash, redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from flask_login import current_user, login_required, login_user, logout_user

from app.accounts import login_throttle, users
from app.accounts.auth import remember_session_version
from app.core.db import get_session
from app.core.errors import ServiceError
from app.core.i18n import LANGUAGES
from app.web import bp


def safe_next(target: str | None, fallback: str) -> str:
    """`target` when it is a path on this site, else `fallback` (no open redirects)."""
    if not target:
        return fallback
    target = target.strip()
    parts = urlsplit(target)
    if (
        parts.scheme
        or parts.netloc
        or not target.startswith("/")
        or target.startswith("//")
        or "\\" in target
        or any(ord(char) < 32 for char in target)
    ):
        return fallback
    return target


@bp.route("/login", methods=["GET", "POST"])
def login() -> Any:
    """Show the login form; on a good password start a session and go to `next`."""
    next_url = request.values.get("next", "")
    if current_user.is_authenticated and request.method == "GET":
        return redirect(safe_next(next_url, url_for("web.dashboard")))
    if request.method == "POST":
        return _login_post(request.form.get("username", ""), next_url)
    return render_template("login.html", username="", next_url=next_url)


# Seconds a client is asked to wait when the database cannot record a login attempt.
UNAVAILABLE_RETRY_S = 60


def _throttle_message(retry_after: int) -> str:
    minutes = max(1, math.ceil(retry_after / 60))
    return _("登录失败次数过多，请 %(minutes)s 分钟后再试", minutes=minutes)


def _unavailable_message() -> str:
    return _("暂时无法登录：服务器写不进数据库（可能磁盘已满），请稍后再试或告知管理员")


def _login_page(username: str, next_url: str, message: str, status: int, headers: dict | None = None) -> Any:
    flash(message, "danger")
    return render_template("login.html", username=username, next_url=next_url), status, headers or {}


def _login_post(username: str, next_url: str) -> Any:
    db = get_session()
    try:
        attempt = login_throttle.admit(db, username=username, address=request.remote_addr or "-")
    except login_throttle.Throttled as exc:
        wait = {"Retry-After": str(exc.retry_after)}
        return _login_page(username, next_url, _throttle_message(exc.retry_after), 429, wait)
    except login_throttle.Unavailable:
        wait = {"Retry-After": str(UNAVAILABLE_RETRY_S)}
        return _login_page(username, next_url, _unavailable_message(), 503, wait)
    user = users.authenticate(db, username=username, password=request.form.get("password", ""))
    if user is None:
        login_throttle.failed(db, attempt)
        return _login_page(username, next_url, _("用户名或密码错误"), 401)
    login_throttle.succeeded(db, attempt)
    lang = session.get("lang")
    session.clear()  # a fresh session on login: nothing carried over from before
    if lang:
        session["lang"] = lang
    session.permanent = True
    login_user(user)
    remember_session_version(user)
    flash(_("欢迎，%(name)s", name=user.username), "success")
    return redirect(safe_next(next_url, url_for("web.dashboard")))


def _account_page(errors: list[str], status: int = 200, headers: dict | None = None) -> Any:
    return render_template("account.html", general_errors=errors), status, headers or {}


def _current_password_ok(password: str) -> Any:
    """None when the current password is right, else the page to answer (wrong, or throttled like logins)."""
    db = get_session()
    try:
        attempt = login_throttle.admit(db, username=current_user.username, address=request.remote_addr or "-")
    except login_throttle.Throttled as exc:
        return _account_page([_throttle_message(exc.retry_after)], 429, {"Retry-After": str(exc.retry_after)})
    except login_throttle.Unavailable:
        return _account_page([_unavailable_message()], 503, {"Retry-After": str(UNAVAILABLE_RETRY_S)})
    if users.authenticate(db, username=current_user.username, password=password) is None:
        login_throttle.failed(db, attempt)
        return _account_page([_("当前密码不对")], 422)
    login_throttle.succeeded(db, attempt)
    return None


@bp.route("/account", methods=["GET", "POST"])
@login_required
def account() -> Any:
    """Change one's own password (the current one first, throttled like logins); other sessions end."""
    if request.method == "GET":
        return _account_page([])
    form = request.form
    if form.get("new_password", "") != form.get("confirm_password", ""):
        return _account_page([_("两次输入的新密码不一致")], 422)
    refused = _current_password_ok(form.get("current_password", ""))
    if refused is not None:
        return refused
    db = get_session()
    try:
        user = users.set_password(db, user_id=current_user.id, password=form.get("new_password", ""))
    except ServiceError as exc:
        db.rollback()
        return _account_page([e.message for e in exc.errors], exc.status)
    remember_session_version(user)  # this session goes on; the others end
    flash(_("密码已修改：其他会话已退出，API 令牌已全部吊销"), "success")
    return redirect(url_for("web.account"))


@bp.post("/account/notices/read")
@login_required
def account_notices_read() -> Any:
    """Mark the notices about one's own account read (they sit at the top of the inbox)."""
    users.mark_notices_read(get_session(), current_user.id)
    return redirect(url_for("web.inbox"))


@bp.post("/logout")
@login_required
def logout() -> Any:
    """End the session (a POST with a CSRF token, never a GET link) and every other session of this user."""
    lang = session.get("lang")
    users.logout(get_session(), user_id=current_user.id)
    logout_user()
    session.clear()
    if lang:
        session["lang"] = lang
    flash(_("已退出登录"), "info")
    return redirect(url_for("web.login"))


@bp.get("/lang/<code>")
def set_language(code: str) -> Any:
    """Remember the chosen language (zh or en) and go back to the page it was chosen on."""
    if code not in LANGUAGES:
        abort(404)
    session["lang"] = code
    fallback = url_for("web.providers")
    target = request.args.get("next")
    if not target and request.referrer:
        referrer = urlsplit(request.referrer)
        if referrer.netloc == request.host:
            target = referrer.path + (f"?{referrer.query}" if referrer.query else "")
    return redirect(safe_next(target, fallback))
