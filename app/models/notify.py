"""Notifications: who watches which providers, inboxes, webhooks, and every delivery attempt (issue 12)."""

from datetime import datetime
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock

CHANNELS = ("email", "webhook")
DELIVERY_STATES = ("pending", "sending", "retrying", "delivered", "failed")


class ProviderWatch(SQLModel, table=True):
    """A user watches one provider: its change events reach that user."""

    __tablename__ = "provider_watch"
    __audited__ = True
    __table_args__ = (sa.UniqueConstraint("user_id", "provider_id", name="uq_provider_watch_user_provider"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", index=True, ondelete="CASCADE")
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))


class NotifySettings(SQLModel, table=True):
    """A user's notification choices: watch every provider, and e-mail on or off (to which address)."""

    __tablename__ = "notify_settings"
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", unique=True, ondelete="CASCADE")
    watch_all: bool = Field(default=False, index=True)
    email_enabled: bool = Field(default=False)
    email: Optional[str] = Field(default=None, max_length=200)
    updated_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))


class Webhook(SQLModel, table=True):
    """A URL receiving change events as signed JSON: a user's own (their watches) or global (every event)."""

    __tablename__ = "webhook"
    __audited__ = True
    __audit_skip__ = ("secret_encrypted",)  # not even the encrypted secret goes into the audit trail

    id: Optional[int] = Field(default=None, primary_key=True)
    user_id: Optional[int] = Field(default=None, foreign_key="user.id", index=True, ondelete="CASCADE")
    url: str = Field(max_length=500)
    description: str = Field(default="", max_length=120)
    secret_encrypted: str = Field(sa_type=sa.Text)
    enabled: bool = Field(default=True)
    created_by_name: str = Field(default="", max_length=60)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))


class InboxItem(SQLModel, table=True):
    """A change event in a user's in-app inbox; read once `read_at` is set."""

    __tablename__ = "inbox_item"
    __table_args__ = (
        sa.UniqueConstraint("user_id", "event_id", name="uq_inbox_item_user_event"),
        sa.Index("ix_inbox_item_user_read", "user_id", "read_at"),
    )

    id: Optional[int] = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="user.id", ondelete="CASCADE")
    event_id: int = Field(foreign_key="change_event.id", index=True, ondelete="CASCADE")
    read_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))


class Delivery(SQLModel, table=True):
    """One message for one target (an e-mail address or a webhook URL): its state and how often it was tried.

    `dedupe_key` (event, channel, recipient) is unique, so an event queued twice is delivered once; a test
    message from the settings page has no event and no key.
    """

    __tablename__ = "notify_delivery"

    id: Optional[int] = Field(default=None, primary_key=True)
    event_id: Optional[int] = Field(
        default=None, foreign_key="change_event.id", index=True, ondelete="CASCADE"
    )
    channel: str = Field(max_length=10)
    target: str = Field(max_length=500)
    user_id: Optional[int] = Field(default=None, foreign_key="user.id", index=True, ondelete="CASCADE")
    webhook_id: Optional[int] = Field(default=None, foreign_key="webhook.id", index=True, ondelete="CASCADE")
    dedupe_key: Optional[str] = Field(default=None, max_length=200, unique=True)
    payload: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    state: str = Field(default="pending", max_length=12, index=True)
    attempts: int = Field(default=0)
    next_attempt_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    claimed_at: Optional[datetime] = Field(
        default=None, sa_type=sa.DateTime(timezone=True)
    )  # latest try began
    last_error: Optional[str] = Field(default=None, sa_type=sa.Text)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True), index=True)
    finished_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))


class DeliveryAttempt(SQLModel, table=True):
    """One try of a delivery: when, how long, and the answer (HTTP status) or the error."""

    __tablename__ = "notify_attempt"

    id: Optional[int] = Field(default=None, primary_key=True)
    delivery_id: int = Field(foreign_key="notify_delivery.id", index=True, ondelete="CASCADE")
    attempt: int
    ok: bool = Field(default=False)
    status_code: Optional[int] = Field(default=None)
    error: Optional[str] = Field(default=None, sa_type=sa.Text)
    duration_ms: int = Field(default=0)
    started_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
