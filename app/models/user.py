"""Accounts and API tokens."""

from datetime import datetime
from typing import Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from app.models.enums import Role
from app.models.provider import utcnow


class User(SQLModel, table=True):
    __audited__ = True
    __audit_skip__ = ("session_version",)

    id: Optional[int] = Field(default=None, primary_key=True)
    username: str = Field(max_length=60, unique=True)
    password_hash: str = Field(max_length=255)
    role: Role = Field(default=Role.viewer, sa_type=sa.String(16))
    active: bool = Field(default=True)
    created_at: datetime = Field(default_factory=utcnow, sa_type=sa.DateTime(timezone=True))
    # Raised on logout, password change and deactivation: sessions that stored an older value end.
    session_version: int = Field(default=1, sa_column_kwargs={"server_default": sa.text("1")})

    # Flask-Login protocol
    @property
    def is_authenticated(self) -> bool:
        """Every loaded user is authenticated."""
        return True

    @property
    def is_active(self) -> bool:
        """Deactivated users cannot log in."""
        return self.active

    @property
    def is_anonymous(self) -> bool:
        """Real users are never anonymous."""
        return False

    def get_id(self) -> str:
        """Identifier kept in the session cookie."""
        return str(self.id)


class ApiToken(SQLModel, table=True):
    id: Optional[int] = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    token_hash: str = Field(max_length=64, unique=True)
    created_at: datetime = Field(default_factory=utcnow, sa_type=sa.DateTime(timezone=True))
    last_used_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    expires_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    revoked_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))


class LoginFailure(SQLModel, table=True):
    """One failed login, kept for a while to throttle guessing per account and per client address."""

    __tablename__ = "login_failure"

    id: Optional[int] = Field(default=None, primary_key=True)
    username: str = Field(max_length=60, index=True)
    address: str = Field(max_length=64, index=True)
    failed_at: datetime = Field(default_factory=utcnow, sa_type=sa.DateTime(timezone=True), index=True)
