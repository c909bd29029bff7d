"""Login sessions, API bearer tokens and role checks."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from flask import Flask, abort, g, session
from flask_babel import lazy_gettext as _l
from flask_login import LoginManager, current_user

from app.core.audit import set_actor
from app.core.db import get_session
from app.models import User
from app.models.enums import ROLE_RANK, Role

login_manager = LoginManager()
login_manager.login_view = "web.login"
login_manager.login_message = _l("请先登录")
login_manager.localize_callback = str  # the lazy message in the language of the request that flashes it
login_manager.login_message_category = "warning"


def act_as(user: User) -> None:
    """Make `user` the actor recorded in the audit trail for this request."""
    g.actor = (user.id, user.username)
    set_actor(get_session(), user_id=user.id, name=user.username)


SESSION_VERSION_KEY = "_sv"


def remember_session_version(user: User) -> None:
    """Store the user's session version in the login session; raising it on the server ends this session."""
    session[SESSION_VERSION_KEY] = user.session_version


@login_manager.user_loader
def _load_user(user_id: str) -> User | None:
    user = get_session().get(User, int(user_id)) if user_id.isdigit() else None
    if user is None or not user.active or session.get(SESSION_VERSION_KEY) != user.session_version:
        return None
    act_as(user)
    return user


def has_role(user: Any, role: Role) -> bool:
    """True when the user's role is at least `role`."""
    return bool(getattr(user, "is_authenticated", False)) and ROLE_RANK[Role(user.role)] >= ROLE_RANK[role]


def role_required(role: Role) -> Callable:
    """Page decorator: log in first, then require at least `role` (403 otherwise)."""

    def decorator(view: Callable) -> Callable:
        @functools.wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if not current_user.is_authenticated:
                return login_manager.unauthorized()
            if not has_role(current_user, role):
                abort(403)
            return view(*args, **kwargs)

        return wrapped

    return decorator


def init_app(app: Flask) -> None:
    """Attach Flask-Login and expose `has_role` to templates."""
    login_manager.init_app(app)
    app.jinja_env.globals["has_role"] = has_role
    app.jinja_env.globals["Role"] = Role
