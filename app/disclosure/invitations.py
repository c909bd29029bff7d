"""Invitations (links for a provider with no account): create, find by token, revoke, e-mail, log events.

An invitation asks for the disclosure questionnaire (/d/<token>) or, from a procurement case, for a quote
(/q/<token>, `purpose` "quote", with the case and the offers to price); a link opens only its own page.

The token (secrets.token_urlsafe(32)) is shown once, in the link; only its SHA-256 is stored. A wrong,
expired or revoked token is answered the same way (NotFound), so a guesser learns nothing, and every wrong
guess counts against the client address (rows in the login-failure table, as login throttling does).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flask import current_app, has_app_context, has_request_context, url_for
from flask_babel import gettext as _
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from sqlmodel import Session, col, select

from app.core import clock
from app.core.clock import aware, when
from app.core.errors import InvalidInput, NotFound, from_validation_error
from app.core.records import get_or_404
from app.core.runtime_settings import effective
from app.models import LoginFailure, Provider
from app.models.disclosure import Invitation, InvitationEvent, InvitationPurpose, InvitationStatus
from app.models.fields import RecordId, SingleLine, blank_to_none, checked_email, reject_bool, single_line

TOKEN_BYTES = 32
GUESS_WINDOW = timedelta(minutes=15)
GUESS_MARK = "#disclosure-token"  # the login-failure rows of wrong tokens (no account name starts with #)
MAX_DAYS = 365
PATH = "/d/"
# Each purpose's page: its path and its endpoint.
PAGES = {
    InvitationPurpose.disclosure.value: (PATH, "web.disclosure_form_page"),
    InvitationPurpose.quote.value: ("/q/", "web.quote_form_page"),
}


class InvitationIn(BaseModel):
    """What an analyst gives to invite a provider: an existing provider's id, or a new provider's name."""

    model_config = ConfigDict(extra="forbid")

    provider_id: RecordId | None = None
    legal_name: SingleLine | None = Field(default=None, min_length=2, max_length=200)
    email: SingleLine | None = Field(default=None, max_length=200)
    expires_in_days: int | None = Field(default=None, ge=1, le=MAX_DAYS)

    @field_validator("legal_name", "email", mode="before")
    @classmethod
    def _blank(cls, value: Any) -> Any:
        return blank_to_none(value, keep_controls=True)

    _days = field_validator("expires_in_days", mode="before")(reject_bool)
    _email = field_validator("email")(checked_email)


@dataclass(frozen=True)
class Created:
    """A new invitation with its link (the only time the token is known)."""

    invitation: Invitation
    token: str
    url: str
    mailed: bool
    mail_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The API's and CLI's answer: id, url, expires_at (ISO 8601 with offset)."""
        return {
            "id": self.invitation.id,
            "url": self.url,
            "expires_at": aware(self.invitation.expires_at).isoformat(),
            "mailed": self.mailed,
            "mail_error": self.mail_error,
        }


def token_hash(token: str) -> str:
    """SHA-256 hex of a token (what is stored and looked up)."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def _settings() -> Any:
    if has_app_context():
        return current_app.config["GPUVET_SETTINGS"]
    from app.core.config import Settings

    return Settings()


def link(token: str, purpose: str = InvitationPurpose.disclosure.value) -> str:
    """The form's address: on GPUVET_PUBLIC_URL when set, else this request's host, else a path."""
    path, endpoint = PAGES[purpose]
    public = _settings().public_url
    if public:
        return public.rstrip("/") + path + token
    if has_request_context():
        return url_for(endpoint, token=token, _external=True)
    return path + token


def site_link(path: str) -> str:
    """A path on this site: absolute on GPUVET_PUBLIC_URL when set (e-mails, reports), else the path."""
    public = (_settings().public_url or "").rstrip("/")
    return public + path if public else path


def state(invitation: Invitation, now: datetime | None = None) -> str:
    """The status to show: the stored one, or `expired` once the link is past its time (unless final)."""
    now = now or clock.now()
    final = (
        InvitationStatus.revoked.value,
        InvitationStatus.reviewed.value,
        InvitationStatus.submitted.value,
    )
    if invitation.status not in final and aware(invitation.expires_at) <= now:
        return "expired"
    return invitation.status


def log(
    session: Session, invitation: Invitation, kind: str, *, address: str = "", **details: Any
) -> InvitationEvent:
    """Add one event (viewed, draft_saved, submitted, refused_upload, ...) to the session (not committed)."""
    event = InvitationEvent(
        invitation_id=invitation.id, kind=kind[:24], remote_addr=(address or "")[:64], details=details
    )
    session.add(event)
    return event


def _one_line_name(provider: Provider) -> str:
    """The provider's name, refused when it was stored with a line break (it becomes the mail's subject)."""
    try:
        return single_line(provider.legal_name)
    except ValueError:
        message = _(
            "供应商 %(id)s 的名称含换行符或其他控制字符，不能用作邮件标题：请先在登记册中修改名称，再发邀请",
            id=provider.id,
        )
        raise InvalidInput(message, field="provider_id") from None


def _mail(invitation: Invitation, url: str) -> tuple[bool, str | None]:
    from app.notify.mailer import MailDisabled, MailError, send_mail

    if not invitation.email:
        return False, None
    if invitation.purpose == InvitationPurpose.quote.value:
        subject = _("询价邀请：%(name)s", name=invitation.legal_name)
        text = _(
            "您好，\n\n我们正在为一项算力采购询价，请通过以下链接查看需求并填写报价（无需注册账号），"
            "附上签字盖章的报价单扫描件：\n%(url)s\n\n链接有效期至 %(until)s，报价只能提交一次。"
            "如有疑问请回复本邮件。\n",
            url=url,
            until=when(invitation.expires_at),
        )
    else:
        subject = _("供应商尽调问卷邀请：%(name)s", name=invitation.legal_name)
        text = _(
            "您好，\n\n请通过以下链接填写供应商尽职调查问卷（无需注册账号），可先保存草稿，稍后继续填写：\n"
            "%(url)s\n\n链接有效期至 %(until)s。如有疑问请回复本邮件。\n",
            url=url,
            until=when(invitation.expires_at),
        )
    try:
        send_mail(invitation.email, subject, text)
    except MailDisabled:
        return False, None
    except MailError as exc:
        return False, str(exc)
    return True, None


def create(
    session: Session,
    *,
    data: Any,
    actor_id: int | None = None,
    actor_name: str = "system",
    purpose: str = InvitationPurpose.disclosure.value,
    case_id: int | None = None,
    offer_ids: list[int] | None = None,
) -> Created:
    """Validate, store and (when an address is given and SMTP configured) e-mail a new invitation.

    A quote request (`purpose` "quote") names its case and the offers it asks prices for.
    """
    if not isinstance(data, dict):
        raise InvalidInput(_("请求体须为 JSON 对象"), field="")
    try:
        payload = InvitationIn.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc) from None
    if (payload.provider_id is None) == (payload.legal_name is None):
        raise InvalidInput(
            _("请给出 provider_id（已有供应商）或 legal_name（新供应商），二者只能选一"), field=""
        )
    legal_name = payload.legal_name
    if payload.provider_id is not None:
        provider = session.get(Provider, payload.provider_id)
        if provider is None:
            raise NotFound(_("供应商 %(id)s 不存在", id=payload.provider_id), field="provider_id")
        legal_name = _one_line_name(provider)
    days = payload.expires_in_days or effective(_settings()).invitation_days
    token = secrets.token_urlsafe(TOKEN_BYTES)
    invitation = Invitation(
        provider_id=payload.provider_id,
        legal_name=legal_name or "",
        email=payload.email or "",
        token_hash=token_hash(token),
        expires_at=clock.now() + timedelta(days=days),
        created_by_id=actor_id,
        created_by_name=actor_name[:60],
        purpose=InvitationPurpose(purpose).value,
        case_id=case_id,
        offer_ids=list(offer_ids or []),
    )
    session.add(invitation)
    session.flush()
    url = link(token, invitation.purpose)
    mailed, mail_error = _mail(invitation, url)
    log(session, invitation, "created", by=actor_name, mailed=mailed, mail_error=mail_error)
    session.commit()
    return Created(invitation, token, url, mailed, mail_error)


def renew_token(session: Session, invitation: Invitation) -> tuple[str, str]:
    """A fresh token for the invitation (the old link stops working), and its link; not committed.

    Only the token's hash is stored, so a message that must carry the link needs a new one; the answers,
    draft and uploads belong to the invitation and stay with it.
    """
    token = secrets.token_urlsafe(TOKEN_BYTES)
    invitation.token_hash = token_hash(token)
    session.add(invitation)
    return token, link(token, invitation.purpose)


class TooManyGuesses(Exception):
    """Too many wrong tokens from this address: `retry_after` seconds until the next try."""

    def __init__(self, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(f"retry after {retry_after} s")


def check_guesses(session: Session, address: str) -> None:
    """Raise TooManyGuesses when this address sent the allowed number of wrong tokens within the window."""
    limit = _settings().disclosure_token_guesses
    since = clock.now() - GUESS_WINDOW
    times = session.exec(
        select(LoginFailure.failed_at)
        .where(LoginFailure.username == GUESS_MARK, LoginFailure.address == (address or "-")[:64])
        .where(LoginFailure.failed_at > since)
        .order_by(col(LoginFailure.failed_at).desc())
        .limit(limit)
    ).all()
    if len(times) >= limit:
        raise TooManyGuesses(max(1, int((aware(times[-1]) + GUESS_WINDOW - clock.now()).total_seconds()) + 1))


def wrong_guess(session: Session, address: str) -> None:
    """Count one wrong, expired or revoked token against the client address."""
    session.add(LoginFailure(username=GUESS_MARK, address=(address or "-")[:64], failed_at=clock.now()))
    session.commit()


def find(
    session: Session, token: str, purpose: str = InvitationPurpose.disclosure.value
) -> Invitation | None:
    """The invitation of this purpose whose token this is (any state), or None."""
    if not token or len(token) > 100:
        return None
    return session.exec(
        select(Invitation).where(Invitation.token_hash == token_hash(token), Invitation.purpose == purpose)
    ).first()


def get(session: Session, *, invitation_id: int) -> Invitation:
    """One invitation by id, or NotFound."""
    return get_or_404(
        session, Invitation, invitation_id, _("邀请 %(id)s 不存在", id=invitation_id), field="id"
    )


def revoke(session: Session, *, invitation_id: int, actor_name: str = "system") -> Invitation:
    """Withdraw the link: the form answers like a wrong token from now on (answers already saved stay)."""
    invitation = get(session, invitation_id=invitation_id)
    if invitation.status != InvitationStatus.revoked.value:
        invitation.status = InvitationStatus.revoked.value
        invitation.revoked_at = clock.now()
        log(session, invitation, "revoked", by=actor_name)
        session.commit()
    return invitation


def events(session: Session, *, invitation_id: int) -> list[InvitationEvent]:
    """The invitation's events, oldest first."""
    return list(
        session.exec(
            select(InvitationEvent)
            .where(InvitationEvent.invitation_id == invitation_id)
            .order_by(col(InvitationEvent.id))
        ).all()
    )
