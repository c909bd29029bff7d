"""/api/v1/tokens: list and revoke API tokens (one's own; an admin sees and revokes everyone's)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, Optional

from flask import Response, g, jsonify
from pydantic import BaseModel, Field

from app.accounts import users as service
from app.accounts.auth import has_role
from app.api import bp
from app.api.routing import MAX_ID, api_route
from app.core.clock import aware
from app.core.db import get_session
from app.models import ApiToken
from app.models.enums import Role


class TokenPublic(BaseModel):
    """An API token without its secret (only a hash of it is stored)."""

    id: int
    username: str
    created_at: datetime
    last_used_at: Optional[datetime] = Field(
        description="最近使用时间，最多每分钟记录一次 (last use, noted at most once a minute)"
    )
    expires_at: Optional[datetime] = Field(description="到期时间；null 为不过期 (null: never expires)")
    revoked_at: Optional[datetime]
    state: Literal["active", "expired", "revoked"]


class TokenList(BaseModel):
    """Tokens, newest first."""

    items: list[TokenPublic]


def _public(token: ApiToken, username: str) -> dict:
    return {
        "id": token.id,
        "username": username,
        "created_at": aware(token.created_at),
        "last_used_at": aware(token.last_used_at),
        "expires_at": aware(token.expires_at),
        "revoked_at": aware(token.revoked_at),
        "state": service.token_state(token),
    }


def _owner_filter() -> int | None:
    """None for an admin (every token), else the caller's own id."""
    return None if has_role(g.api_user, Role.admin) else g.api_user.id


@api_route(
    bp,
    "/tokens",
    "GET",
    summary="列出 API 令牌 (list API tokens)",
    role=Role.viewer,
    response_model=TokenList,
    tags=("tokens",),
)
def list_tokens() -> Response:
    """Your own tokens; an admin gets every user's. Secrets are never shown, only when each was last used."""
    rows = service.list_tokens(get_session(), user_id=_owner_filter())
    return jsonify(TokenList(items=[_public(t, name) for t, name in rows]).model_dump(mode="json"))


@api_route(
    bp,
    f"/tokens/<int(max={MAX_ID}):token_id>",
    "DELETE",
    summary="吊销 API 令牌 (revoke an API token)",
    role=Role.viewer,
    status=204,
    errors=(404,),
    tags=("tokens",),
)
def revoke_token(token_id: int) -> Response:
    """Revoke one of your tokens (an admin: anyone's); it answers 401 from then on. Another user's is 404."""
    service.revoke_token(get_session(), token_id=token_id, owner_id=_owner_filter())
    return Response(status=204)
