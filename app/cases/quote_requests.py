"""Requests for quotes (询价) from a procurement case: one link per provider, its page, its one quote.

A request is an invitation (app.disclosure.invitations) with purpose "quote", the case and the offers it
asks prices for: the same unguessable token, expiry, revocation, e-mail where SMTP is set and event log.
The provider's page shows only its own case's requirements in plain words and its own offers; the quote it
sends is stored like a hand-entered one (app.cases.quotes.create_quote, channel "link") and the link then
answers with thanks only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace
from typing import Any

from flask_babel import gettext as _
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlmodel import Session, col, select

from app.advice.engine import Advice
from app.advice.numbers import fmt
from app.advice.requirements import compute_needs
from app.cases import quotes
from app.cases.cases import Actor, advise_case, answers_of, get_case
from app.core import clock
from app.core.clock import aware
from app.core.errors import FieldError, InvalidInput, from_validation_error
from app.core.limits import MAX_ID
from app.disclosure import invitations
from app.disclosure.form import viewed
from app.models import Offer, Provider
from app.models.disclosure import Invitation, InvitationPurpose, InvitationStatus
from app.models.quotes import Quote, QuoteChannel

PURPOSE = InvitationPurpose.quote.value
MAX_OFFERS = 50
# Providers whose leading eligible offer the request page ticks (three quotes compared: 三家比价).
PRESELECT_PROVIDERS = 3


class QuoteRequestIn(BaseModel):
    """What an analyst gives to request quotes: the offers to price (among the case's advice candidates)."""

    model_config = ConfigDict(extra="forbid")

    offer_ids: list[int] = Field(
        min_length=1, max_length=MAX_OFFERS, description="offers (套餐) to price; one link per provider"
    )
    expires_in_days: int | None = Field(
        default=None, ge=1, le=invitations.MAX_DAYS, description="the links' validity, days"
    )


def read_request(data: Any) -> QuoteRequestIn:
    """The checked request body, or InvalidInput naming each bad field."""
    if not isinstance(data, Mapping):
        raise InvalidInput(_("请求体须为 JSON 对象"), field="")
    try:
        return QuoteRequestIn.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc) from None


@dataclass(frozen=True)
class Sent:
    """One provider's request: its invitation and the link (the only time the token is known)."""

    provider_id: int
    invitation: Invitation
    url: str
    mailed: bool
    mail_error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The API's answer for one provider."""
        return {"provider_id": self.provider_id, "invitation_id": self.invitation.id, "url": self.url}


def _offer_ids(value: Any) -> list[int]:
    """The requested offers' ids, in order, once each; InvalidInput on `offer_ids` otherwise."""
    accepted = _("offer_ids 须为 1-%(most)s 个套餐编号组成的列表", most=MAX_OFFERS)
    if not isinstance(value, list | tuple) or not 1 <= len(value) <= MAX_OFFERS:
        raise InvalidInput(accepted, field="offer_ids")
    ids: list[int] = []
    for item in value:
        if isinstance(item, str) and item.strip().isdigit():
            item = int(item.strip())
        if isinstance(item, bool) or not isinstance(item, int) or not 1 <= item <= MAX_ID:
            raise InvalidInput(accepted, field="offer_ids")
        if item not in ids:
            ids.append(item)
    return ids


def leading_offer_ids(advice: Advice, providers: int = PRESELECT_PROVIDERS) -> list[int]:
    """The best eligible offer of each of the first `providers` providers, as the case ranks them."""
    chosen: dict[int, int] = {}
    for assessed in advice.eligible:
        chosen.setdefault(assessed.offer.provider.id, assessed.offer.id)
        if len(chosen) == providers:
            break
    return list(chosen.values())


def request_quotes(
    session: Session,
    *,
    case_id: int,
    offer_ids: Any,
    actor: Actor,
    expires_in_days: Any = None,
    advice: Advice | None = None,
) -> list[Sent]:
    """One quote request per provider of the given offers (each among the case's advice candidates)."""
    get_case(session, case_id=case_id)
    ids = _offer_ids(offer_ids)
    advice = advice or advise_case(session, case_id=case_id)
    candidates = {assessed.offer.id for assessed in advice.ranked}
    offers = {offer.id: offer for offer in session.exec(select(Offer).where(col(Offer.id).in_(ids))).all()}
    unknown = [offer_id for offer_id in ids if offer_id not in offers or offer_id not in candidates]
    if unknown:
        message = _(
            "这些套餐不在登记册中，或不是本案建议中的候选套餐：%(ids)s",
            ids=", ".join(str(offer_id) for offer_id in unknown),
        )
        raise InvalidInput(message, field="offer_ids")
    by_provider: dict[int, list[int]] = {}
    for offer_id in ids:
        by_provider.setdefault(offers[offer_id].provider_id, []).append(offer_id)
    sent = []
    for provider_id, provider_offers in by_provider.items():
        provider = session.get(Provider, provider_id)
        data = {
            "provider_id": provider_id,
            "email": provider.contact_email if provider else None,
            "expires_in_days": expires_in_days,
        }
        created = invitations.create(
            session,
            data=data,
            actor_id=actor.id,
            actor_name=actor.name,
            purpose=PURPOSE,
            case_id=case_id,
            offer_ids=provider_offers,
        )
        sent.append(Sent(provider_id, created.invitation, created.url, created.mailed, created.mail_error))
    return sent


@dataclass(frozen=True)
class RequestStatus:
    """Where one quote request stands (sent, opened, submitted, expired, revoked) and the quote it brought."""

    invitation: Invitation
    status: str
    quote_id: int | None

    def as_dict(self) -> dict[str, Any]:
        """The API's form (times ISO 8601 with offset)."""
        row = self.invitation
        return {
            "invitation_id": row.id,
            "provider_id": row.provider_id,
            "provider_name": row.legal_name,
            "offer_ids": list(row.offer_ids),
            "status": self.status,
            "expires_at": _iso(row.expires_at),
            "opened_at": _iso(row.opened_at),
            "submitted_at": _iso(row.submitted_at),
            "quote_id": self.quote_id,
            "created_by": row.created_by_name,
            "created_at": _iso(row.created_at),
        }


def _iso(moment: datetime | None) -> str | None:
    return aware(moment).isoformat() if moment is not None else None  # type: ignore[union-attr]


def list_requests(session: Session, *, case_id: int) -> list[RequestStatus]:
    """The case's quote requests, newest first, each with its status and the quote it brought."""
    get_case(session, case_id=case_id)
    rows = session.exec(
        select(Invitation)
        .where(Invitation.case_id == case_id, Invitation.purpose == PURPOSE)
        .order_by(col(Invitation.created_at).desc(), col(Invitation.id).desc())
    ).all()
    quote_ids = dict(
        session.exec(
            select(Quote.invitation_id, Quote.id).where(
                col(Quote.invitation_id).in_([row.id for row in rows])
            )
        ).all()
    )
    now = clock.now()
    return [RequestStatus(row, invitations.state(row, now), quote_ids.get(row.id)) for row in rows]


def find(session: Session, token: str) -> Invitation | None:
    """The quote request whose token this is (any state), or None."""
    return invitations.find(session, token, PURPOSE)


def record_view(session: Session, invitation: Invitation, *, address: str = "") -> None:
    """Record a view of the link (the first one moves the request from sent to opened)."""
    viewed(session, invitation, address=address)


def requested_offers(session: Session, invitation: Invitation) -> list[tuple[int, str]]:
    """The offers the request asks prices for, as (id, name) in its order (offers since removed left out)."""
    ids = list(invitation.offer_ids)
    rows = {offer.id: offer for offer in session.exec(select(Offer).where(col(Offer.id).in_(ids))).all()}
    return [(offer_id, _offer_name(rows[offer_id])) for offer_id in ids if offer_id in rows]


def _offer_name(offer: Offer) -> str:
    size = _("%(gpus)s 卡/台", gpus=offer.gpus_per_node)
    return f"{offer.name} · {offer.gpu_model} × {size}" if offer.name else f"{offer.gpu_model} × {size}"


def requirements(session: Session, invitation: Invitation) -> list[tuple[str, list[str]]]:
    """The case's requirements in plain words for the provider (GPUs, intranet, storage, term, cities), each
    a heading and its lines.

    Only what a provider needs to price its offers: never the budget, the case's title or anything about
    other providers.
    """
    needs = compute_needs(answers_of(get_case(session, case_id=invitation.case_id or 0)))
    gpus = [
        _("1 台，%(per)s 张 GPU", per=needs.gpus_per_node)
        if needs.nodes == 1
        else _(
            "%(nodes)s 台 × 每台 %(per)s 张 GPU（共 %(total)s 张）",
            nodes=needs.nodes,
            per=needs.gpus_per_node,
            total=needs.nodes * needs.gpus_per_node,
        )
    ]
    if needs.gpu_models:
        models = " / ".join(needs.gpu_models)
        gpus.append(models if needs.gpu_strict else _("%(models)s 或同等算力", models=models))
    if needs.min_gpu_memory_gb:
        gpus.append(_("每张显存至少 %(gb)s GB", gb=needs.min_gpu_memory_gb))
    rows = [(_("GPU"), gpus)]
    if needs.nodes > 1:
        intranet = [
            _("节点间有效带宽至少 %(gbps)s Gbps", gbps=fmt(needs.needed_effective_gbps))
            if needs.needed_effective_gbps
            else _("多机训练，需要节点间高速互联")
        ]
        if needs.rdma_required:
            intranet.append(_("需要 RDMA（RoCE 或 InfiniBand）"))
        rows.append((_("内网"), intranet))
    storage = [
        text
        for value, text in (
            (needs.dataset_gb, _("数据集约 %(n)s GB", n=fmt(needs.dataset_gb or 0))),
            (needs.read_mb_s, _("读取至少 %(n)s MB/s", n=fmt(needs.read_mb_s or 0))),
            (
                needs.checkpoint_write_mb_s,
                _("写检查点至少 %(n)s MB/s", n=fmt(needs.checkpoint_write_mb_s or 0)),
            ),
        )
        if value
    ]
    if storage:
        rows.append((_("存储"), storage))
    term = _(
        "%(months)s 个月，每月约 %(hours)s 小时",
        months=needs.contract_months,
        hours=fmt(needs.hours_per_month),
    )
    rows.append((_("租期"), [term]))
    if needs.dedicated_bandwidth:
        rows.append((_("带宽"), [_("需要独享带宽")]))
    users = [city.name for city in needs.user_cities if city != needs.office_city]
    cities = [_("办公地点：%(city)s", city=needs.office_city.name)]
    if users:
        cities.append(_("用户所在城市：%(cities)s", cities=", ".join(users)))
    rows.append((_("城市"), cities))
    return rows


def _refuse_offer(values: Mapping[str, Any]) -> None:
    """InvalidInput on `offer_id` (not one of the request's offers) with every other bad value named too."""
    errors = [FieldError("offer_id", _("请选择本次询价的套餐之一"))]
    try:
        quotes.read_quote({**values, "offer_id": 1, "received_via": QuoteChannel.link.value})
    except InvalidInput as exc:
        errors += exc.errors
    raise InvalidInput(errors)


def submit_quote(
    session: Session,
    invitation: Invitation,
    *,
    values: Mapping[str, Any],
    scan: Any,
    filename: str | None = None,
    address: str = "",
) -> Quote:
    """Store the provider's quote through its link (once); InvalidInput (logged) when a value is wrong."""
    chosen = str(values.get("offer_id") or "").strip()
    try:
        if invitation.status in (InvitationStatus.submitted.value, InvitationStatus.revoked.value):
            raise InvalidInput(_("该询价链接已提交过报价，不能再次提交"), field="")
        if chosen not in {str(offer_id) for offer_id in invitation.offer_ids}:
            _refuse_offer(values)
        invitation.status = InvitationStatus.submitted.value
        invitation.submitted_at = clock.now()
        session.add(invitation)
        quote = quotes.create_quote(
            session,
            case_id=invitation.case_id or 0,
            values={**values, "received_via": QuoteChannel.link.value},
            scan=scan,
            user=SimpleNamespace(id=None, username=invitation.legal_name[:60]),
            filename=filename,
            invitation=invitation,
        )
    except InvalidInput as exc:
        session.rollback()
        invitations.log(
            session, invitation, "submit_refused", address=address, fields=[e.field for e in exc.errors]
        )
        session.commit()
        raise
    invitations.log(session, invitation, "submitted", address=address, quote_id=quote.id)
    session.commit()
    return quote
