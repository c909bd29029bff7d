"""Accounts: create users, check passwords, issue and resolve API tokens."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime

from sqlmodel import Session, select
from werkzeug.security import check_password_hash, generate_password_hash

from app.models import ApiToken, User
from app.models.enums import Role
from app.services.errors import Conflict, InvalidInput, NotFound

MIN_PASSWORD_LENGTH = 8


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_user(session: Session, *, username: str, password: str, role: str) -> User:
    """Create an account with a hashed password."""
    username = (username or "").strip()
    if not 2 <= len(username) <= 60:
        raise InvalidInput("用户名须为 2-60 个字符 (username must be 2-60 characters)", field="username")
    if role not in {r.value for r in Role}:
        raise InvalidInput(
            "角色须为 admin、analyst 或 viewer (role must be admin, analyst or viewer)", field="role"
        )
    if len(password or "") < MIN_PASSWORD_LENGTH:
        raise InvalidInput(
            f"密码至少 {MIN_PASSWORD_LENGTH} 位 (password needs {MIN_PASSWORD_LENGTH}+ characters)",
            field="password",
        )
    if session.exec(select(User).where(User.username == username)).first():
        raise Conflict(f"用户 {username} 已存在 (user already exists)", field="username")
    user = User(username=username, password_hash=generate_password_hash(password), role=Role(role))
    session.add(user)
    session.commit()
    return user


def get_user(session: Session, *, username: str) -> User:
    """Find an account by name, or raise NotFound."""
    user = session.exec(select(User).where(User.username == username)).first()
    if user is None:
        raise NotFound(f"用户 {username} 不存在 (no such user)", field="username")
    return user


def authenticate(session: Session, *, username: str, password: str) -> User | None:
    """Return the active user whose password matches, else None."""
    user = session.exec(select(User).where(User.username == (username or "").strip())).first()
    if user is None or not user.active or not check_password_hash(user.password_hash, password or ""):
        return None
    return user


def issue_token(session: Session, *, username: str) -> str:
    """Create a new API token for a user; only its hash is stored."""
    user = get_user(session, username=username)
    token = "gv_" + secrets.token_urlsafe(32)
    session.add(ApiToken(user_id=user.id, token_hash=_token_hash(token)))
    session.commit()
    return token


def user_for_token(session: Session, *, token: str) -> User | None:
    """Resolve a bearer token to its active user and note when it was used."""
    api_token = session.exec(select(ApiToken).where(ApiToken.token_hash == _token_hash(token))).first()
    if api_token is None:
        return None
    user = session.get(User, api_token.user_id)
    if user is None or not user.active:
        return None
    api_token.last_used_at = datetime.now(UTC)
    session.commit()
    return user


def list_users(session: Session) -> list[User]:
    """Every account, by name."""
    return list(session.exec(select(User).order_by(User.username)).all())


def _active_admins(session: Session) -> int:
    return len(session.exec(select(User).where(User.role == Role.admin, User.active)).all())


def update_user(
    session: Session, *, user_id: int, role: str | None = None, active: bool | None = None, acting_id: int
) -> User:
    """Change an account's role or active flag; the last active admin and one's own account are protected."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(f"用户 {user_id} 不存在 (no such user)", field="id")
    if role is not None and role not in {r.value for r in Role}:
        raise InvalidInput(
            "角色须为 admin、analyst 或 viewer (role must be admin, analyst or viewer)", field="role"
        )
    demotes = role is not None and role != Role.admin and user.role == Role.admin
    deactivates = active is False and user.active
    if (demotes or deactivates) and user.id == acting_id:
        raise InvalidInput(
            "不能降低自己的角色或停用自己 (you cannot demote or deactivate yourself)", field="role"
        )
    if (demotes or deactivates) and user.role == Role.admin and _active_admins(session) <= 1:
        raise Conflict("至少要保留一名启用的管理员 (at least one active admin must remain)", field="role")
    if role is not None:
        user.role = Role(role)
    if active is not None:
        user.active = active
    session.commit()
    return user


def set_password(session: Session, *, user_id: int, password: str) -> User:
    """Replace an account's password."""
    user = session.get(User, user_id)
    if user is None:
        raise NotFound(f"用户 {user_id} 不存在 (no such user)", field="id")
    if len(password or "") < MIN_PASSWORD_LENGTH:
        raise InvalidInput(
            f"密码至少 {MIN_PASSWORD_LENGTH} 位 (password needs {MIN_PASSWORD_LENGTH}+ characters)",
            field="password",
        )
    user.password_hash = generate_password_hash(password)
    session.commit()
    return user
