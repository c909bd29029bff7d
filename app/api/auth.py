"""Bearer-token authentication and role checks for the API (session cookies are ignored on purpose)."""

from __future__ import annotations

from flask import g, request
from flask_babel import gettext as _

from app.accounts.auth import act_as, has_role
from app.accounts.users import user_for_token
from app.api.errors import ApiError
from app.core.db import get_session
from app.core.errors import FieldError
from app.models import User
from app.models.enums import Role


def _unauthorized(message: str, *, invalid: bool) -> ApiError:
    challenge = 'Bearer realm="gpuvet"'
    if invalid:
        challenge += ', error="invalid_token"'
    return ApiError(401, [FieldError("Authorization", message)], {"WWW-Authenticate": challenge})


def bearer_user() -> User:
    """The active user named by the Authorization: Bearer header, or a 401."""
    header = request.headers.get("Authorization", "")
    scheme, _space, token = header.strip().partition(" ")
    token = token.strip()
    if not header:
        raise _unauthorized(
            _("需要 API 令牌：请发送 Authorization: Bearer <令牌>"),
            invalid=False,
        )
    if scheme.lower() != "bearer" or not token:
        raise _unauthorized(_("Authorization 头格式应为 Bearer <令牌>"), invalid=True)
    user = user_for_token(get_session(), token=token)
    if user is None:
        raise _unauthorized(
            _("API 令牌无效、已过期、已吊销或账户已停用，请用 `flask users token` 重新生成"),
            invalid=True,
        )
    return user


def authenticate(role: Role | None) -> None:
    """Require a bearer token whose user has at least `role`; `None` means no authentication."""
    if role is None:
        return
    user = bearer_user()
    act_as(user)
    g.api_user = user
    if not has_role(user, role):
        raise ApiError(
            403,
            [
                FieldError(
                    "",
                    _(
                        "此操作需要 %(needed)s 或更高角色，你的角色是 %(yours)s",
                        needed=role.value,
                        yours=Role(user.role).value,
                    ),
                )
            ],
        )
