"""The analyst's side of a disclosure: where each invitation stands, reminders, and the per-item review.

A submission (`Invitation.answers`, app.disclosure.schema.Disclosure) is compared with the registry
item by item: every identity field, every licence, filing, certification, datacenter and offer row, and the
three red-flag-13 topics (topology, storage, trial). Each item is added, changed or unchanged (topics:
answered, declined or unanswered); the analyst accepts or rejects each with a comment, kept in
`Invitation.review["items"]`. Once every item that needs one has a decision the invitation is "reviewed".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from flask_babel import gettext as _
from pydantic import BaseModel, ValidationError
from sqlmodel import Session, col, func, or_, select

from app.core import clock
from app.core.clock import aware
from app.core.errors import Conflict, FieldError, InvalidInput, from_validation_error, not_one_of
from app.core.events import EvidenceChanged, publish
from app.disclosure import invitations, schema
from app.disclosure.comparison import (
    ADDED,
    ANSWERED,
    CHANGED,
    DECLINED,
    UNANSWERED,
    UNCHANGED,
    ReviewItem,
    review_items,
    row_title,
    submission,
)
from app.models import Provider
from app.models.disclosure import Invitation, InvitationPurpose, InvitationStatus
from app.registry.provider_list import Page

EXPIRED = "expired"


STATUSES = (
    InvitationStatus.sent.value,
    InvitationStatus.opened.value,
    InvitationStatus.draft.value,
    InvitationStatus.submitted.value,
    InvitationStatus.reviewed.value,
    EXPIRED,
    InvitationStatus.revoked.value,
)


PENDING = "pending"  # a filter: waiting for the provider (not expired) or for the analyst


OPEN_STATUSES = (InvitationStatus.sent.value, InvitationStatus.opened.value, InvitationStatus.draft.value)


REVIEWABLE = (InvitationStatus.submitted.value, InvitationStatus.reviewed.value)


ACCEPT, REJECT = "accept", "reject"


DECISIONS = (ACCEPT, REJECT)


MAX_COMMENT = 1000


def effective_status(invitation: Invitation, now: datetime | None = None) -> str:
    """The status people see: stored status, or "expired" for an unanswered link past its expiry."""
    return invitations.state(invitation, now)


def is_merged(invitation: Invitation) -> bool:
    """Whether the accepted items of this submission were merged into the registry."""
    return bool((invitation.review or {}).get("merge"))


def get_invitation(session: Session, *, invitation_id: int) -> Invitation:
    """One invitation, or NotFound."""
    return invitations.get(session, invitation_id=invitation_id)


def _status_condition(status: str, now: datetime) -> Any:
    unexpired = col(Invitation.expires_at) > now
    if status == EXPIRED:
        return col(Invitation.status).in_(OPEN_STATUSES) & ~unexpired
    if status == PENDING:
        return or_(
            col(Invitation.status).in_(OPEN_STATUSES) & unexpired,
            Invitation.status == InvitationStatus.submitted.value,
        )
    if status in OPEN_STATUSES:
        return (Invitation.status == status) & unexpired
    return Invitation.status == status


class InvitationQuery(BaseModel):
    """Filters and paging of the invitation list."""

    status: Literal[
        "sent", "opened", "draft", "submitted", "reviewed", "expired", "revoked", "pending", None
    ] = None
    q: str | None = None
    provider_id: int | None = None
    page: int = 1
    per_page: int = 50


def parse_list_query(params: dict[str, Any]) -> InvitationQuery:
    """Validate list filters from a query string; errors name the field and what it accepts."""
    cleaned = {key: value.strip() if isinstance(value, str) else value for key, value in params.items()}
    cleaned = {key: value for key, value in cleaned.items() if value not in (None, "")}
    if "status" in cleaned and cleaned["status"] not in (*STATUSES, PENDING):
        raise InvalidInput([not_one_of("status", (*STATUSES, PENDING))])
    try:
        query = InvitationQuery.model_validate(cleaned)
    except ValidationError as exc:
        raise from_validation_error(exc) from None
    errors = []
    if not 1 <= query.page <= 100_000:
        errors.append(FieldError("page", _("页码须为 1-%(most)s", most=100_000)))
    if not 1 <= query.per_page <= 200:
        errors.append(FieldError("per_page", _("每页 1-%(most)s 条", most=200)))
    if errors:
        raise InvalidInput(errors)
    return query


def list_invitations(
    session: Session, *, query: InvitationQuery, now: datetime | None = None
) -> Page[Invitation]:
    """Invitations matching the filters, newest first."""
    stmt = select(Invitation).where(Invitation.purpose == InvitationPurpose.disclosure.value)
    if query.status:
        stmt = stmt.where(_status_condition(query.status, now or clock.now()))
    if query.provider_id is not None:
        stmt = stmt.where(Invitation.provider_id == query.provider_id)
    if query.q:
        like = f"%{query.q}%"
        stmt = stmt.where(or_(col(Invitation.legal_name).ilike(like), col(Invitation.email).ilike(like)))
    total = session.exec(select(func.count()).select_from(stmt.subquery())).one()
    rows = session.exec(
        stmt.order_by(col(Invitation.created_at).desc(), col(Invitation.id).desc())
        .offset((query.page - 1) * query.per_page)
        .limit(query.per_page)
    ).all()
    return Page(list(rows), total, query.page, query.per_page)


def pending_for_provider(
    session: Session, *, provider_id: int, now: datetime | None = None
) -> list[Invitation]:
    """A provider's invitations still waiting for the provider or for the analyst, newest first."""
    return list(
        session.exec(
            select(Invitation)
            .where(Invitation.provider_id == provider_id, _status_condition(PENDING, now or clock.now()))
            .where(Invitation.purpose == InvitationPurpose.disclosure.value)
            .order_by(col(Invitation.created_at).desc())
        ).all()
    )


def status_counts(session: Session, *, now: datetime | None = None) -> dict[str, int]:
    """How many invitations are in each status (expired computed from the expiry)."""
    rows = session.exec(
        select(Invitation.status, Invitation.expires_at).where(
            Invitation.purpose == InvitationPurpose.disclosure.value
        )
    ).all()
    counts = dict.fromkeys(STATUSES, 0)
    moment = now or clock.now()
    for status, expires_at in rows:
        shown = EXPIRED if status in OPEN_STATUSES and aware(expires_at) <= moment else status
        counts[shown] = counts.get(shown, 0) + 1
    return counts


@dataclass(frozen=True)
class Reminder:
    """What a reminder did: the fresh link (shown once), whether it was e-mailed, and why not when not."""

    invitation: Invitation
    emailed: bool
    url: str
    note: str = ""


def reminder_text(invitation: Invitation, link: str) -> tuple[str, str]:
    """Subject and bilingual body of a reminder e-mail carrying the (new) link."""
    name = invitation.legal_name
    subject = f"提醒：请填写供应商尽调问卷 / Reminder: supplier due-diligence questionnaire ({name})"
    expires = aware(invitation.expires_at).date().isoformat()
    body = (
        f"您好，\n\n我们尚未收到“{name}”的供应商尽调问卷。填写链接：{link}\n"
        f"此前发送的链接已失效；已保存的草稿和上传的文件仍在。链接有效期至 {expires}，"
        "可先保存草稿，之后继续填写。\n\n"
        f"Hello,\n\nwe have not yet received the due-diligence questionnaire of {name}. Link: {link}\n"
        "The link sent earlier no longer works; the draft and files you saved are kept. "
        f"The link works until {expires}; you can save a draft and continue later.\n"
    )
    return subject, body


def send_reminder(
    session: Session,
    *,
    invitation_id: int,
    actor: str,
    now: datetime | None = None,
) -> Reminder:
    """Issue a fresh link (the old one stops working), record the reminder, e-mail it where possible."""
    from app.notify import mailer

    invitation = get_invitation(session, invitation_id=invitation_id)
    status = effective_status(invitation, now)
    if status not in OPEN_STATUSES:
        raise Conflict(_("状态为“%(status)s”的邀请不能再发提醒", status=status_label(status)), field="status")
    _token, url = invitations.renew_token(session, invitation)
    emailed, note = False, ""
    if not invitation.email:
        note = _("未登记邮箱：请把链接另行发给供应商")
    elif not mailer.mail_enabled():
        note = _("未配置邮件服务器：请把链接另行发给供应商")
    else:
        subject, body = reminder_text(invitation, url)
        try:
            mailer.send_mail(invitation.email, subject, body)
            emailed = True
        except mailer.MailError as exc:
            note = str(exc)
    invitation.last_reminder_at = now or clock.now()
    invitation.reminders += 1
    session.add(invitation)
    details = {
        "by": actor,
        "emailed": emailed,
        "to": invitation.email if emailed else "",
        "note": note,
        "new_link": True,
    }
    invitations.log(session, invitation, "reminded", **details)
    session.commit()
    return Reminder(invitation, emailed, url, note)


def undecided(items: list[ReviewItem]) -> list[ReviewItem]:
    """Items that still need the analyst's decision."""
    return [item for item in items if item.needs_decision and item.decision not in DECISIONS]


def save_decisions(
    session: Session,
    *,
    invitation_id: int,
    decisions: dict[str, tuple[str, str]],
    actor: str,
    now: datetime | None = None,
) -> Invitation:
    """Record accept/reject and a comment per item; the invitation is "reviewed" once every item has one."""
    invitation = get_invitation(session, invitation_id=invitation_id)
    if invitation.status not in REVIEWABLE:
        raise Conflict(_("只有已提交的问卷可以审核"), field="status")
    if is_merged(invitation):
        raise Conflict(_("该问卷已合并入登记簿，不能再修改审核结果"), field="review")
    items = review_items(session, invitation)
    known = {item.key for item in items}
    errors = []
    for key, (decision, comment) in decisions.items():
        if key not in known:
            errors.append(FieldError(f"decision-{key}", _("问卷中没有这一项")))
        elif decision not in (*DECISIONS, ""):
            errors.append(FieldError(f"decision-{key}", _("须为“采纳”或“不采纳”")))
        elif len(comment) > MAX_COMMENT:
            errors.append(
                FieldError(f"comment-{key}", _("最多 %(max_length)s 个字符", max_length=MAX_COMMENT))
            )
    if errors:
        raise InvalidInput(errors)
    moment = now or clock.now()
    was_reviewed = invitation.status == InvitationStatus.reviewed.value
    review = dict(invitation.review or {})
    stored = dict(review.get("items") or {})
    for key, (decision, comment) in decisions.items():
        if decision:
            stored[key] = {
                "decision": decision,
                "comment": comment.strip(),
                "by": actor,
                "at": moment.isoformat(),
            }
        elif comment.strip() and key in stored:
            stored[key] = {**stored[key], "comment": comment.strip()}
    review["items"] = stored
    invitation.review = review
    for item in items:
        saved = stored.get(item.key) or {}
        item.decision = saved.get("decision")
    if undecided(items):
        invitation.status = InvitationStatus.submitted.value
        invitation.reviewed_at = None
    else:
        invitation.status = InvitationStatus.reviewed.value
        invitation.reviewed_at = moment
    session.add(invitation)
    accepted = sum(1 for entry in stored.values() if entry["decision"] == ACCEPT)
    details = {"by": actor, "accepted": accepted, "rejected": len(stored) - accepted}
    invitations.log(session, invitation, "reviewed", **details)
    session.commit()
    if was_reviewed or invitation.status == InvitationStatus.reviewed.value:
        _recheck(session, invitation, moment)
    return invitation


def _recheck(session: Session, invitation: Invitation, moment: datetime) -> None:
    """Red flag 13 reads the latest reviewed questionnaire: re-run the provider's check (as a merge does)."""
    publish(
        session, EvidenceChanged(provider_id=invitation.provider_id, since=moment, cause="disclosure review")
    )


UPLOAD_FIELDS = (("licences", "scan_upload_id"), ("certifications", "scan_upload_id"))


def _upload_places(answers: schema.Disclosure) -> dict[int, tuple[str, str, str]]:
    """Each upload the answers name: id -> (section, field, title of its row)."""
    places = {}
    for section, name in UPLOAD_FIELDS:
        for row in getattr(answers, section):
            upload_id = getattr(row, name)
            if upload_id:
                places[upload_id] = (section, name, row_title(section, row.model_dump(mode="json")))
    if answers.topology.diagram_upload_id:
        places[answers.topology.diagram_upload_id] = ("topology", "diagram_upload_id", "")
    return places


def merged_uploads(session: Session, *, provider_id: int) -> list[dict[str, Any]]:
    """The files the provider's merged questionnaires declare, newest questionnaire first (plain data).

    Uploads are Evidence kept as stored (without a provider when it was invited by name), so they are
    found through upload -> invitation -> provider. Paths are on GPUVET_PUBLIC_URL when set.
    """
    from app.models.disclosure import DisclosureUpload
    from app.models.evidence import Evidence

    rows = session.exec(
        select(DisclosureUpload, Invitation, Evidence.sha256)
        .join(Invitation, col(Invitation.id) == DisclosureUpload.invitation_id)
        .join(Evidence, col(Evidence.id) == DisclosureUpload.evidence_id)
        .where(Invitation.provider_id == provider_id, Invitation.status == InvitationStatus.reviewed.value)
        .order_by(col(Invitation.submitted_at).desc(), col(Invitation.id).desc(), col(DisclosureUpload.id))
    ).all()
    places_of: dict[int, dict[int, tuple[str, str, str]]] = {}
    found = []
    for upload, invitation, sha256 in rows:
        if not is_merged(invitation):
            continue
        if invitation.id not in places_of:
            places_of[invitation.id] = _upload_places(submission(invitation))
        place = places_of[invitation.id].get(upload.id)
        if place is None:
            continue  # replaced by a later upload before the questionnaire was submitted
        section, name, title = place
        spec = schema.SECTION_BY_NAME[section]
        found.append(
            {
                "invitation_id": invitation.id,
                "upload_id": upload.id,
                "evidence_id": upload.evidence_id,
                "section_zh": spec.zh,
                "section_en": spec.en,
                "field_zh": spec.field(name).zh,
                "field_en": spec.field(name).en,
                "item": title,
                "filename": upload.filename,
                "media_type": upload.media_type,
                "size": upload.size,
                "sha256": sha256,
                "picture": upload.media_type in ("image/png", "image/jpeg"),
                "download": invitations.site_link(f"/evidence/{upload.evidence_id}/download"),
                "image": invitations.site_link(f"/evidence/{upload.evidence_id}/image"),
            }
        )
    return found


def status_label(status: str) -> str:
    """A status in words (current language)."""
    return {
        "sent": _("已发送"),
        "opened": _("已打开"),
        "draft": _("草稿"),
        "submitted": _("已提交"),
        "reviewed": _("已审核"),
        "expired": _("已过期"),
        "revoked": _("已撤销"),
        "pending": _("待处理"),
    }.get(status, status)


def state_label(state: str) -> str:
    """An item's or field's comparison state in words (current language)."""
    return {
        ADDED: _("新增"),
        CHANGED: _("有变化"),
        UNCHANGED: _("无变化"),
        ANSWERED: _("已回答"),
        DECLINED: _("拒绝披露"),
        UNANSWERED: _("未回答"),
        "declared_only": _("仅申报"),
    }.get(state, state)


def provider_name(session: Session, invitation: Invitation) -> str:
    """The invited provider's name in the registry, else the name the invitation was made for."""
    if invitation.provider_id is not None:
        provider = session.get(Provider, invitation.provider_id)
        if provider is not None:
            return provider.legal_name
    return invitation.legal_name
