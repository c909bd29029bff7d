"""/api/v1/invitations: invite a provider (existing or new) to the disclosure questionnaire."""

from __future__ import annotations

from flask import Response, g
from pydantic import BaseModel

from app.api import bp
from app.api.body import json_object
from app.api.routing import api_route, created
from app.core.db import get_session
from app.disclosure import invitations
from app.disclosure.invitations import InvitationIn
from app.models.enums import Role

TAGS = ("disclosure",)


class InvitationCreated(BaseModel):
    """The new invitation: its id, the link to send (shown only now) and when it expires."""

    id: int
    url: str
    expires_at: str
    mailed: bool
    mail_error: str | None


@api_route(
    bp,
    "/invitations",
    "POST",
    summary="邀请供应商填写尽调问卷 (invite a provider to the disclosure questionnaire)",
    role=Role.analyst,
    request_model=InvitationIn,
    response_model=InvitationCreated,
    status=201,
    errors=(404,),
    tags=TAGS,
)
def create_invitation() -> Response:
    """Give provider_id (an existing provider) or legal_name (a new one); optional email, expires_in_days."""
    user = g.api_user
    invitation = invitations.create(
        get_session(), data=json_object(), actor_id=user.id, actor_name=user.username
    )
    return created(invitation.as_dict())
