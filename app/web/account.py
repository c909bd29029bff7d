"""Login, logout and the language switch."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import abort, flash, redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from flask_login import current_user, login_required, login_user, logout_user

from app import LOCALES
from app.db import get_session
from app.services.users import authenticate
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
        return redirect(safe_next(next_url, url_for("web.providers")))
    username = ""
    if request.method == "POST":
        username = request.form.get("username", "")
        user = authenticate(get_session(), username=username, password=request.form.get("password", ""))
        if user is not None:
            lang = session.get("lang")
            session.clear()  # a fresh session on login: nothing carried over from before
            if lang:
                session["lang"] = lang
            session.permanent = True
            login_user(user)
            flash(_("欢迎，%(name)s", name=user.username), "success")
            return redirect(safe_next(next_url, url_for("web.providers")))
        flash(_("用户名或密码错误"), "danger")
        return render_template("login.html", username=username, next_url=next_url), 401
    return render_template("login.html", username=username, next_url=next_url)


@bp.post("/logout")
@login_required
def logout() -> Any:
    """End the session (a POST with a CSRF token, never a GET link)."""
    lang = session.get("lang")
    logout_user()
    session.clear()
    if lang:
        session["lang"] = lang
    flash(_("已退出登录"), "info")
    return redirect(url_for("web.login"))


@bp.get("/lang/<code>")
def set_language(code: str) -> Any:
    """Remember the chosen language (zh or en) and go back to the page it was chosen on."""
    if code not in LOCALES:
        abort(404)
    session["lang"] = code
    fallback = url_for("web.providers")
    target = request.args.get("next")
    if not target and request.referrer:
        referrer = urlsplit(request.referrer)
        if referrer.netloc == request.host:
            target = referrer.path + (f"?{referrer.query}" if referrer.query else "")
    return redirect(safe_next(target, fallback))
