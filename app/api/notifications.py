"""/api/v1/inbox and /api/v1/providers/{id}/watch: the caller's inbox, and watching a provider."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from flask import Response, current_app, g, jsonify, request
from pydantic import BaseModel, Field, ValidationError

from app.api import bp
from app.api.routing import MAX_ID, api_route
from app.core.clock import aware
from app.core.db import get_session
from app.core.errors import from_validation_error
from app.models.enums import Role
from app.notify import watches as notifications
from app.notify.dispatch import event_document


class InboxParams(BaseModel):
    """Query of the inbox list."""

    unread: bool = Field(default=False, description="只列未读 (unread items only)")
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0, le=1_000_000)


class InboxEntryPublic(BaseModel):
    """An inbox item with its change event."""

    id: int
    read_at: Optional[datetime]
    created_at: datetime
    event: dict[str, Any] = Field(
        description="变化事件：kind、severity、message_zh、message_en、provider_id 等 (the change event)"
    )


class InboxPage(BaseModel):
    """The caller's inbox, newest first."""

    items: list[InboxEntryPublic]
    total: int
    unread: int


class WatchState(BaseModel):
    """Whether the caller watches the provider."""

    provider_id: int
    watching: bool
    changed: bool


@api_route(
    bp,
    "/inbox",
    "GET",
    summary="我的收件箱：关注的供应商的变化 (your inbox: changes of watched providers)",
    role=Role.viewer,
    response_model=InboxPage,
    query_model=InboxParams,
    tags=("notifications",),
)
def list_inbox() -> Response:
    """Newest first; each item carries its change event. Items are marked read on the inbox page."""
    try:
        query = InboxParams.model_validate(request.args.to_dict())
    except ValidationError as exc:
        raise from_validation_error(exc) from None
    session = get_session()
    settings = current_app.config["GPUVET_SETTINGS"]
    entries, total = notifications.inbox(
        session, g.api_user.id, unread_only=query.unread, limit=query.limit, offset=query.offset
    )
    items = [
        {
            "id": entry.item.id,
            "read_at": aware(entry.item.read_at),
            "created_at": aware(entry.item.created_at),
            "event": event_document(entry.event, entry.provider_name, settings),
        }
        for entry in entries
    ]
    unread = notifications.unread_count(session, g.api_user.id)
    return jsonify(InboxPage(items=items, total=total, unread=unread).model_dump(mode="json"))


WATCH = f"/providers/<int(max={MAX_ID}):provider_id>/watch"


@api_route(
    bp,
    WATCH,
    "PUT",
    summary="关注供应商 (watch a provider)",
    role=Role.viewer,
    response_model=WatchState,
    errors=(404,),
    tags=("notifications",),
)
def watch_provider(provider_id: int) -> Response:
    """Its change events reach your inbox (and your e-mail and webhooks); watching twice changes nothing."""
    changed = notifications.watch(get_session(), g.api_user.id, provider_id)
    return jsonify(WatchState(provider_id=provider_id, watching=True, changed=changed).model_dump())


@api_route(
    bp,
    WATCH,
    "DELETE",
    summary="取消关注供应商 (stop watching a provider)",
    role=Role.viewer,
    response_model=WatchState,
    errors=(404,),
    tags=("notifications",),
)
def unwatch_provider(provider_id: int) -> Response:
    """Stop watching; a provider you did not watch answers changed: false."""
    changed = notifications.unwatch(get_session(), g.api_user.id, provider_id)
    return jsonify(WatchState(provider_id=provider_id, watching=False, changed=changed).model_dump())
