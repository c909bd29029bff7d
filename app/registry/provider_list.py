"""Listing providers: the query a list page or the API sends, its search, filters, sort and pages."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import sqlalchemy as sa
from flask_babel import gettext as _
from pydantic import BaseModel
from sqlmodel import Session, col, func, or_, select

from app.core.errors import FieldError
from app.models import Datacenter, Filing, Licence, Offer, Provider
from app.models.checks import CheckRun
from app.models.latest_runs import POINTER
from app.registry.list_query import parse_list_query
from app.registry.providers import with_children
from app.vetting.identifier_common import normalize_text


class ProviderQuery(BaseModel):
    """Search, filter, sort and page parameters of the provider list (page and API)."""

    q: str | None = None
    province: str | None = None
    gpu_model: str | None = None
    bandwidth_type: str | None = None
    storage_type: str | None = None
    status: str | None = None
    verdict: str | None = None  # the latest check run's verdict, or "unchecked"
    checked: str | None = None  # "never", or "stale": the latest check is older than stale_days
    stale_days: int | None = None
    sort: str = "name"
    page: int = 1
    per_page: int = 20


# The latest check run's verdict as a rank: worst first (never checked last), or best first.
_LATEST_VERDICT = select(CheckRun.verdict).where(CheckRun.id == POINTER).correlate(Provider).scalar_subquery()
_WORST_FIRST = sa.case({"fail": 0, "needs_review": 1, "pass": 2}, value=_LATEST_VERDICT, else_=3)
_BEST_FIRST = sa.case({"pass": 0, "needs_review": 1, "fail": 2}, value=_LATEST_VERDICT, else_=3)
# "unverified": the latest check passes or needs review while some credential is not verified at its source
# (the verdict names them: 通过（未核实：…）); "unchecked": never checked.
VERDICT_FILTERS = ("fail", "needs_review", "pass", "unchecked", "unverified")

SORTS = {
    "name": col(Provider.legal_name).asc(),
    "-name": col(Provider.legal_name).desc(),
    "updated": col(Provider.updated_at).asc(),
    "-updated": col(Provider.updated_at).desc(),
    "province": col(Provider.registered_province).asc(),
    "status": col(Provider.status).asc(),
    "verdict": _WORST_FIRST.asc(),
    "-verdict": _BEST_FIRST.asc(),
}


Item = TypeVar("Item")


@dataclass
class Page(Generic[Item]):
    """One page of a list (providers, invitations) with the numbers needed for pagination."""

    items: list[Item]
    total: int
    page: int
    per_page: int

    @property
    def pages(self) -> int:
        """Number of pages (at least 1)."""
        return max(1, math.ceil(self.total / self.per_page))


def parse_query(params: dict[str, Any]) -> ProviderQuery:
    """Validate list parameters from a query string or API call."""
    from app.models.enums import BandwidthType, ProviderStatus, StorageType

    allowed = {
        "bandwidth_type": [e.value for e in BandwidthType],
        "storage_type": [e.value for e in StorageType],
        "status": [e.value for e in ProviderStatus],
        "verdict": list(VERDICT_FILTERS),
        "checked": ["never", "stale"],
        "sort": list(SORTS),
    }
    return parse_list_query(ProviderQuery, params, allowed, _stale_days_errors)


def _stale_days_errors(query: ProviderQuery) -> list[FieldError]:
    if query.stale_days is not None and not 1 <= query.stale_days <= 3650:
        return [FieldError("stale_days", _("须为 %(low)s-%(high)s 的整数", low=1, high=3650))]
    return []


def _search_condition(text: str) -> Any:
    like = f"%{text}%"
    normalized = f"%{normalize_text(text)}%"
    return or_(
        col(Provider.legal_name).ilike(like),
        col(Provider.legal_name_en).ilike(like),
        col(Provider.short_name).ilike(like),
        col(Provider.uscc).ilike(normalized),
        select(Licence.id)
        .where(Licence.provider_id == Provider.id)
        .where(or_(col(Licence.number).ilike(normalized), col(Licence.number_raw).ilike(like)))
        .exists(),
        select(Filing.id)
        .where(Filing.provider_id == Provider.id)
        .where(
            or_(
                col(Filing.number).ilike(normalized),
                col(Filing.number_raw).ilike(like),
                col(Filing.entity_name).ilike(like),
            )
        )
        .exists(),
    )


def _filtered(query: ProviderQuery) -> Any:
    stmt = select(Provider)
    if query.q:
        stmt = stmt.where(_search_condition(query.q.strip()))
    if query.status:
        stmt = stmt.where(Provider.status == query.status)
    if query.verdict or query.checked:  # the latest check run's verdict and age (app.registry.dashboard)
        from app.registry.dashboard import DEFAULT_STALE_DAYS, checked_condition, verdict_condition

        if query.verdict and query.verdict != "unverified":  # that one: list_providers
            stmt = stmt.where(verdict_condition(query.verdict))
        if query.checked:
            stmt = stmt.where(checked_condition(query.checked, query.stale_days or DEFAULT_STALE_DAYS))
    if query.province:
        in_datacenter = (
            select(Datacenter.id)
            .where(Datacenter.provider_id == Provider.id, Datacenter.province == query.province)
            .exists()
        )
        stmt = stmt.where(or_(Provider.registered_province == query.province, in_datacenter))
    offer_conditions = []
    if query.gpu_model:
        offer_conditions.append(col(Offer.gpu_model).ilike(f"%{query.gpu_model.strip()}%"))
    if query.bandwidth_type:
        offer_conditions.append(Offer.bandwidth_type == query.bandwidth_type)
    if query.storage_type:
        offer_conditions.append(Offer.storage_type == query.storage_type)
    if offer_conditions:
        stmt = stmt.where(
            select(Offer.id).where(Offer.provider_id == Provider.id, *offer_conditions).exists()
        )
    return stmt


def list_providers(session: Session, *, query: ProviderQuery) -> Page[Provider]:
    """One page of providers matching the query, nested records loaded in constant statements."""
    stmt = _filtered(query)
    if query.verdict == "unverified":
        stmt = stmt.where(col(Provider.id).in_(_unverified_ids(session, stmt)))
    total = session.exec(select(func.count()).select_from(stmt.subquery())).one()
    rows = session.exec(
        stmt.order_by(SORTS[query.sort], col(Provider.id))
        .offset((query.page - 1) * query.per_page)
        .limit(query.per_page)
        .options(*with_children())
    ).all()
    return Page(items=list(rows), total=total, page=query.page, per_page=query.per_page)


def _unverified_ids(session: Session, stmt: Any) -> list[int]:
    """Ids of the providers `stmt` selects whose latest check passes or needs review with some credential
    not verified at its source, read from their verdicts (a constant number of statements)."""
    from app.credentials.verdicts import verdicts_of  # it reads the registry

    ids = session.exec(stmt.with_only_columns(col(Provider.id))).all()
    return [
        provider_id
        for provider_id, verdict in verdicts_of(session, ids).items()
        if verdict.level in ("pass", "needs_review") and verdict.unverified
    ]


MAX_PICKER_CHOICES = 2000


def picker_choices(session: Session) -> list[tuple[int, str]]:
    """(id, name as people know it) of every provider, by legal name: what a provider picker offers
    ("深圳示例算力有限公司（示例云）"), so that nobody has to know a provider's number."""
    rows = session.exec(
        select(Provider.id, Provider.legal_name, Provider.short_name)
        .order_by(col(Provider.legal_name), col(Provider.id))
        .limit(MAX_PICKER_CHOICES)
    ).all()
    return [(pid, f"{legal}（{short}）" if short and short != legal else legal) for pid, legal, short in rows]
