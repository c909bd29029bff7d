"""The rules a proposed procurement decision must meet, each refusal an InvalidInput naming the field:

- every chosen offer exists and belongs to a provider that quoted for the case or to one of the case's
  eligible candidates (the advice's);
- a chosen provider with quotes for the case has a valid (unexpired) one: quotes past their validity never
  back a decision; the decision cites the valid quotes of its providers;
- fewer than 3 providers with a valid quote for the case need a single-source reason (三家比价);
- no chosen provider has a blocker on a licence red flag (DOMAIN.md 1-4, 10, 11);
- every open finding (blocker or warning of the latest check run) of a chosen provider is covered by a risk
  acceptance with a reason and a day after today; an acceptance names an open finding of a chosen provider.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.cases.cases import advise_case
from app.cases.decision_evidence import (
    finding_key,
    is_licence_block,
    joined,
    open_findings_of,
)
from app.cases.quote_comparison import COMPARED_PROVIDERS
from app.cases.quotes import is_expired
from app.core.errors import FieldError, InvalidInput, ServiceError
from app.core.i18n import current_language
from app.models import Offer, Provider
from app.models.cases import ProcurementCase
from app.models.checks import StoredFinding
from app.models.decisions import Decision
from app.models.quotes import Quote


class Forbidden(ServiceError):
    """The acting person may not do this (a role too low, or the proposer approving their own decision)."""

    status = 403


@dataclass
class Chosen:
    """What a valid proposal chose: offers, their providers, the quotes behind them, the open findings."""

    offer_ids: list[int]
    provider_ids: list[int]
    quote_ids: list[int]
    findings: dict[int, StoredFinding] = field(default_factory=dict)  # open findings by id


def add_months(day: date, months: int) -> date:
    """The same day `months` later (the month's last day when it has fewer days)."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1]))


def _candidate_offer_ids(session: Session, case: ProcurementCase) -> set[int]:
    """The offers the case's advice finds eligible (none while the questionnaire is unfinished)."""
    if not case.complete:
        return set()
    ranked = advise_case(session, case_id=case.id).ranked  # type: ignore[arg-type]
    return {ranked.table.offers[int(row)].id for row in ranked.eligible_rows}


def _offers(
    session: Session, case: ProcurementCase, offer_ids: list[int], quotes: list[Quote]
) -> list[Offer]:
    """The chosen offers, each of a quoting provider or an eligible candidate."""
    found = {offer.id: offer for offer in session.exec(select(Offer).where(col(Offer.id).in_(offer_ids)))}
    errors = [
        FieldError(f"offer_ids[{index}]", _("套餐 %(id)s 不存在", id=offer_id))
        for index, offer_id in enumerate(offer_ids)
        if offer_id not in found
    ]
    if errors:
        raise InvalidInput(errors)
    quoting = {quote.provider_id for quote in quotes}
    outside = [offer_id for offer_id in offer_ids if found[offer_id].provider_id not in quoting]
    candidates = _candidate_offer_ids(session, case) if outside else set()
    errors = [
        FieldError(
            f"offer_ids[{offer_ids.index(offer_id)}]",
            _("套餐 %(id)s 既没有该案例的报价，也不是该案例的候选套餐", id=offer_id),
        )
        for offer_id in outside
        if offer_id not in candidates
    ]
    if errors:
        raise InvalidInput(errors)
    return [found[offer_id] for offer_id in offer_ids]


def _quotes_behind(offers: list[Offer], quotes: list[Quote], today: date) -> list[int]:
    """The valid quotes of the chosen providers; a provider whose every quote expired is refused."""
    providers = {offer.provider_id for offer in offers}
    valid = [quote for quote in quotes if quote.provider_id in providers and not is_expired(quote, today)]
    backed = {quote.provider_id for quote in valid}
    errors = []
    for index, offer in enumerate(offers):
        expired = [q for q in quotes if q.provider_id == offer.provider_id and is_expired(q, today)]
        if offer.provider_id not in backed and expired:
            last = max(quote.valid_until for quote in expired)
            errors.append(
                FieldError(
                    f"offer_ids[{index}]",
                    _(
                        "套餐 %(id)s 的供应商的报价已于 %(day)s 过期，"
                        "过期报价不能作为决定依据，请先取得新报价",
                        id=offer.id,
                        day=last.isoformat(),
                    ),
                )
            )
    if errors:
        raise InvalidInput(errors)
    return sorted(quote.id for quote in valid)  # type: ignore[misc]


def _single_source(entry: Any, valid: list[Quote]) -> None:
    providers = {quote.provider_id for quote in valid}
    if len(providers) < COMPARED_PROVIDERS and not entry.single_source_reason:
        raise InvalidInput(
            _(
                "只有 %(count)s 家供应商有有效报价（少于 %(least)s 家），须写明单一来源理由",
                count=len(providers),
                least=COMPARED_PROVIDERS,
            ),
            field="single_source_reason",
        )


def _names(session: Session, provider_ids: list[int]) -> dict[int, str]:
    rows = session.exec(select(Provider.id, Provider.legal_name).where(col(Provider.id).in_(provider_ids)))
    return dict(rows.all())


def licence_errors(
    session: Session, findings: dict[int, list[StoredFinding]], field_of: dict[int, str]
) -> list[FieldError]:
    """One error per licence-flag blocker of the providers, naming the flag and the finding's message."""
    names = _names(session, list(findings))
    return [
        FieldError(
            field_of[provider_id],
            _(
                "供应商 %(name)s 有许可证红旗第 %(flag)s 条的阻断项，不能被选定：%(message)s",
                name=names.get(provider_id, provider_id),
                flag=finding.red_flag,
                message=finding.message(current_language()),
            ),
        )
        for provider_id, items in findings.items()
        for finding in items
        if is_licence_block(finding)
    ]


def _acceptances(entry: Any, findings: dict[int, StoredFinding], today: date) -> None:
    errors = []
    covered: set[int] = set()
    for index, accepted in enumerate(entry.risk_acceptances):
        if accepted.finding_id not in findings:
            message = _("发现 %(id)s 不是所选供应商最新核查的未解决发现", id=accepted.finding_id)
            errors.append(FieldError(f"risk_acceptances[{index}].finding_id", message))
        elif accepted.finding_id in covered:
            message = _("发现 %(id)s 已接受过一次", id=accepted.finding_id)
            errors.append(FieldError(f"risk_acceptances[{index}].finding_id", message))
        if accepted.until <= today:
            message = _("接受期限须晚于今天（%(today)s）", today=today.isoformat())
            errors.append(FieldError(f"risk_acceptances[{index}].until", message))
        covered.add(accepted.finding_id)
    uncovered = [finding for finding_id, finding in findings.items() if finding_id not in covered]
    if uncovered:
        listed = joined(
            _(
                "#%(id)s %(rule)s（%(message)s）",
                id=finding.id,
                rule=finding_key(finding.rule_id, finding.subject),
                message=finding.message(current_language()),
            )
            for finding in uncovered
        )
        errors.append(
            FieldError(
                "risk_acceptances",
                _("以下未解决的发现须解决或写明风险接受：%(findings)s", findings=listed),
            )
        )
    if errors:
        raise InvalidInput(errors)


def check_proposal(session: Session, *, case: ProcurementCase, entry: Any, today: date) -> Chosen:
    """Apply every rule to a checked DecisionIn; what it chose, or InvalidInput naming the field."""
    offer_ids = list(dict.fromkeys(entry.offer_ids))
    quotes = list(session.exec(select(Quote).where(Quote.case_id == case.id).order_by(col(Quote.id))))
    offers = _offers(session, case, offer_ids, quotes)
    quote_ids = _quotes_behind(offers, quotes, today)
    _single_source(entry, [quote for quote in quotes if not is_expired(quote, today)])  # loaded above
    provider_ids = sorted({offer.provider_id for offer in offers})
    findings = open_findings_of(session, provider_ids)
    first_offer = {}
    for index, offer in enumerate(offers):
        first_offer.setdefault(offer.provider_id, f"offer_ids[{index}]")
    blocked = licence_errors(session, findings, first_offer)
    if blocked:
        raise InvalidInput(blocked)
    open_ = {finding.id: finding for items in findings.values() for finding in items}
    _acceptances(entry, open_, today)  # type: ignore[arg-type]
    return Chosen(offer_ids, provider_ids, quote_ids, open_)  # type: ignore[arg-type]


def check_still_choosable(session: Session, decision: Decision) -> None:
    """At approval: no chosen provider has come to a licence-flag blocker (InvalidInput naming it)."""
    findings = open_findings_of(session, decision.provider_ids)
    blocked = licence_errors(session, findings, {provider_id: "provider_ids" for provider_id in findings})
    if blocked:
        raise InvalidInput(blocked)
