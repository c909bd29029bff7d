"""Accounts and API tokens."""

from datetime import datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock
from app.models.enums import Role


class User(SQLModel, table=True):
    __audited__ = True
    __audit_skip__ = ("session_version",)

    id: Optional[int] = Field(default=None, primary_key=True)
    username: str = Field(max_length=60, unique=True)
    password_hash: str = Field(max_length=255)
    role: Role = Field(default=Role.viewer, sa_type=sa.String(16))
    active: bool = Field(default=True)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
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
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
    last_used_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    expires_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    revoked_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))


class LoginFailure(SQLModel, table=True):
    """One failed login, kept for a while to throttle guessing per account and per client address."""

    __tablename__ = "login_failure"

    id: Optional[int] = Field(default=None, primary_key=True)
    username: str = Field(max_length=60, index=True)
    address: str = Field(max_length=64, index=True)
    failed_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)


class LoginAddress(SQLModel, table=True):
    """A client address an account logged in from: under the account's ceiling it keeps its own allowance."""

    __tablename__ = "login_address"
    __table_args__ = (sa.UniqueConstraint("username", "address", name="uq_login_address_username_address"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    username: str = Field(max_length=60)
    address: str = Field(max_length=64)
    last_success_at: datetime = Field(
        default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True
    )


class AccountNotice(SQLModel, table=True):
    """A message to one user about their own account (failed logins on it), shown at the top of the inbox.

    The words are made when shown, from `kind` and `details`, in the reader's language. `dedupe_key` is
    unique, so workers noticing the same burst at once store one notice.
    """

    __tablename__ = "account_notice"
    __table_args__ = (sa.Index("ix_account_notice_user_read", "user_id", "read_at"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", ondelete="CASCADE")
    kind: str = Field(max_length=40)
    dedupe_key: str = Field(max_length=80, unique=True)
    details: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
    read_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
