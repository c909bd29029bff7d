"""Compare the official lookups (facts["icp_lookup"], facts["licence_lookup"]) with the registry.

Each fact is the provider's latest completed lookup (app/credentials/lookups.py): the name that was
queried, when, the records the official system returned and a reference to the stored reply. Without
a fact these rules raise nothing. Accepted natures, licence statuses, the expiry threshold and the
business items each offer kind needs are read from vetting.yaml (context.knowledge).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from datetime import date, datetime
from typing import Any

from app.core.clock import when
from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.rules._common import fold_name, label, registry
from app.vetting.rules._sources import joined, recorded_numbers
from app.vetting.rules._sources import source_finding as _source_finding


def _fact(context: RuleContext, name: str) -> dict[str, Any] | None:
    fact = context.facts.get(name)
    return fact if isinstance(fact, dict) else None


def _records(fact: dict[str, Any]) -> list[dict[str, Any]]:
    return [record for record in fact.get("records", []) if isinstance(record, dict)]


def _refs(fact: dict[str, Any]) -> list[dict[str, Any]]:
    return list(fact.get("evidence", []))


def _lookup(context: RuleContext, name: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(records, references to the stored reply) of the lookup fact `name`; none without the fact."""
    fact = _fact(context, name)
    return (_records(fact), _refs(fact)) if fact is not None else ([], [])


def _at(fact: dict[str, Any]) -> str:
    """When the lookup was made, in the display zone and labelled (e.g. 2026-11-30 16:00 UTC+8)."""
    try:
        return when(datetime.fromisoformat(str(fact.get("completed_at"))))
    except ValueError:
        return str(fact.get("completed_at") or "")[:16].replace("T", " ")


def source_finding(context: RuleContext, rule_id: str, **details: Any) -> Finding:
    """A lookup finding; one from a lookup recorded by hand says so, naming who recorded it and when."""
    finding = _source_finding(context, rule_id, **details)
    fact = _fact(context, "icp_lookup" if rule_id.startswith("lookup.icp") else "licence_lookup")
    manual = (fact or {}).get("manual")
    if not isinstance(manual, dict):
        return finding
    looked = manual.get("looked_at")
    at, by = when(datetime.fromisoformat(looked)) if looked else "", manual.get("by") or ""
    return dataclasses.replace(
        finding,
        message_zh=f"{finding.message_zh}（人工记录：{by} 于 {at} 在官方网站查看）",
        message_en=f"{finding.message_en} (recorded by hand by {by} on {at})",
    )


def _date(value: Any) -> date | None:
    try:
        return date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


# ------------------------------------------------------------------------------------------------ ICP filing
def _not_found(context: RuleContext, fact_name: str, rule_id: str) -> Iterator[Finding]:
    """A finding when the lookup by company name found nothing."""
    fact = _fact(context, fact_name)
    if fact is None or _records(fact):
        return
    yield source_finding(
        context, rule_id, subject="provider", evidence=_refs(fact), query=fact.get("query"), at=_at(fact)
    )


@rule(
    "lookup.icp_not_found", title_zh="官方未查到备案", title_en="No filing in the official system", red_flag=7
)
def icp_not_found(context: RuleContext) -> Iterator[Finding]:
    """The ICP lookup by company name found nothing."""
    yield from _not_found(context, "icp_lookup", "lookup.icp_not_found")


@rule(
    "lookup.icp_nature",
    title_zh="官方备案主体性质不是企业",
    title_en="Official filing nature is not an enterprise",
    red_flag=7,
)
def icp_nature(context: RuleContext) -> Iterator[Finding]:
    """Official filing records whose natureName is not an accepted nature."""
    records, refs = _lookup(context, "icp_lookup")
    accepted = context.knowledge["filing"]["acceptable_natures"]
    for record in records:
        nature = record.get("natureName")
        if nature and nature not in accepted:
            yield source_finding(
                context,
                "lookup.icp_nature",
                subject=f"icp_lookup:{record.get('mainLicence')}",
                evidence=refs,
                number=record.get("mainLicence"),
                nature=nature,
                accepted=joined(f"“{name}”" for name in accepted),
                accepted_en=joined((f"'{name}'" for name in accepted), "en"),
            )


def _name_mismatches(
    context: RuleContext, fact_name: str, rule_id: str, name_key: str, number_key: str
) -> Iterator[Finding]:
    """Findings for official records whose holder name differs from the registry's legal name."""
    records, refs = _lookup(context, fact_name)
    legal = fold_name(context.provider.legal_name, context.knowledge)
    for record in records:
        name = record.get(name_key)
        if name and fold_name(name, context.knowledge) != legal:
            yield source_finding(
                context,
                rule_id,
                subject=f"{fact_name}:{record.get(number_key)}",
                evidence=[
                    *refs,
                    registry("provider", context.provider.id, "legal_name", context.provider.legal_name),
                ],
                number=record.get(number_key),
                name=name,
                legal_name=context.provider.legal_name,
            )


@rule(
    "lookup.icp_unit_name",
    title_zh="官方备案主办单位名称不一致",
    title_en="Official filing operator name differs",
    red_flag=5,
)
def icp_unit_name(context: RuleContext) -> Iterator[Finding]:
    """Official filing records whose unitName differs from the legal name."""
    yield from _name_mismatches(context, "icp_lookup", "lookup.icp_unit_name", "unitName", "mainLicence")


def _number_mismatches(
    context: RuleContext, fact_name: str, rule_id: str, kind: str, number_fields: tuple[str, ...]
) -> Iterator[Finding]:
    """Recorded numbers missing from the official results (only when the lookup found something)."""
    fact = _fact(context, fact_name)
    if fact is None or not _records(fact):
        return
    observed = [record.get(field) for record in _records(fact) for field in number_fields]
    found = sorted({record.get(number_fields[0]) or "" for record in _records(fact)} - {""})
    for number, record, entity in recorded_numbers(context.provider, kind).missing_from(observed):
        yield source_finding(
            context,
            rule_id,
            subject=f"{entity}:{record.id}",
            evidence=[*_refs(fact), registry(entity, record.id, "number", number)],
            registry=number,
            query=fact.get("query"),
            found=joined(found),
            found_en=joined(found, "en"),
        )


def _unrecorded(
    context: RuleContext,
    fact_name: str,
    rule_id: str,
    kind: str,
    number_field: str,
    details: Callable[[dict[str, Any]], dict[str, Any]],
) -> Iterator[Finding]:
    """Official numbers the registry does not hold, once each, described by `details(record)`."""
    records, refs = _lookup(context, fact_name)
    observed = ((record.get(number_field), record) for record in records)
    for number, record in recorded_numbers(context.provider, kind).unrecorded(observed):
        yield source_finding(
            context,
            rule_id,
            subject=f"{fact_name}:{number}",
            evidence=refs,
            number=number,
            **details(record),
        )


@rule(
    "lookup.icp_number_mismatch",
    title_zh="登记的备案号官方未查到",
    title_en="Recorded filing not found officially",
)
def icp_number_mismatch(context: RuleContext) -> Iterator[Finding]:
    """Recorded ICP filings missing from the official results (only when the lookup found something)."""
    yield from _number_mismatches(
        context, "icp_lookup", "lookup.icp_number_mismatch", "icp_filing", ("mainLicence", "serviceLicence")
    )


@rule("lookup.icp_unrecorded", title_zh="官方备案未登记", title_en="Official filing not recorded")
def icp_unrecorded(context: RuleContext) -> Iterator[Finding]:
    """Official filings (entity numbers) that the registry does not hold."""
    yield from _unrecorded(
        context,
        "icp_lookup",
        "lookup.icp_unrecorded",
        "icp_filing",
        "mainLicence",
        lambda record: {"domain": record.get("domain") or "—"},
    )


# ------------------------------------------------------------------------------------------------ licences
def _needed_items(context: RuleContext) -> dict[str, list[str]]:
    """Business item -> offer kinds that need it, for the provider's offers (vetting.yaml offer_kinds)."""
    needs: dict[str, list[str]] = {}
    for offer in context.provider.offers:
        kind = str(getattr(offer.offer_kind, "value", offer.offer_kind))
        for item in context.knowledge["offer_kinds"].get(kind, {}).get("required_items", []):
            if kind not in needs.setdefault(item, []):
                needs[item].append(kind)
    return needs


def _good(context: RuleContext, record: dict[str, Any]) -> bool:
    return record.get("status") in context.knowledge["licence_status"]["good"]


@rule(
    "lookup.licence_not_found",
    title_zh="官方未查到许可证",
    title_en="No licence in the official system",
    red_flag=1,
)
def licence_not_found(context: RuleContext) -> Iterator[Finding]:
    """The licence lookup found nothing while the provider sells something that needs a licence."""
    if _needed_items(context):
        yield from _not_found(context, "licence_lookup", "lookup.licence_not_found")


@rule(
    "lookup.licence_status",
    title_zh="官方许可证状态异常",
    title_en="Official licence status is not normal",
    red_flag=4,
)
def licence_status(context: RuleContext) -> Iterator[Finding]:
    """Official licence records whose status is not a good one; severity per status (vetting.yaml)."""
    records, refs = _lookup(context, "licence_lookup")
    statuses = context.knowledge["licence_status"]
    for record in records:
        status = record.get("status") or ""
        if _good(context, record):
            continue
        yield source_finding(
            context,
            "lookup.licence_status",
            subject=f"licence_lookup:{record.get('licenceNo')}",
            evidence=refs,
            severity=statuses["severity"].get(status, statuses["default"]),
            number=record.get("licenceNo"),
            status=status or "—",
            status_en=label(context, "licence_status", status, "en") if status else "empty",
        )


def _expiries(context: RuleContext) -> Iterator[tuple[dict[str, Any], date, int, list[dict[str, Any]]]]:
    """(record, expiry date, days from today, lookup references) per valid official licence with an expiry."""
    records, refs = _lookup(context, "licence_lookup")
    for record in records:
        expires = _date(record.get("expiryDate"))
        if expires is not None and _good(context, record):
            yield record, expires, (expires - context.today).days, refs


@rule("lookup.licence_expired", title_zh="官方许可证已过期", title_en="Official licence expired", red_flag=4)
def licence_expired(context: RuleContext) -> Iterator[Finding]:
    """Official expiry dates in the past."""
    for record, expires, days, refs in _expiries(context):
        if days < 0:
            yield source_finding(
                context,
                "lookup.licence_expired",
                subject=f"licence_lookup:{record.get('licenceNo')}",
                evidence=refs,
                number=record.get("licenceNo"),
                expires_on=expires.isoformat(),
                days=-days,
            )


@rule(
    "lookup.licence_expiring", title_zh="官方许可证即将到期", title_en="Official licence expiring", red_flag=4
)
def licence_expiring(context: RuleContext) -> Iterator[Finding]:
    """Official expiry dates within thresholds.licence_expiring_days (vetting.yaml)."""
    limit = int(context.knowledge["thresholds"]["licence_expiring_days"])
    for record, expires, days, refs in _expiries(context):
        if 0 <= days <= limit:
            yield source_finding(
                context,
                "lookup.licence_expiring",
                subject=f"licence_lookup:{record.get('licenceNo')}",
                evidence=refs,
                number=record.get("licenceNo"),
                expires_on=expires.isoformat(),
                days=days,
                limit=limit,
            )


@rule(
    "lookup.licence_missing_item",
    title_zh="官方许可证缺少所需业务",
    title_en="Official licences lack a needed item",
    red_flag=1,
)
def licence_missing_item(context: RuleContext) -> Iterator[Finding]:
    """Items the offers need (e.g. B11) that no valid official licence includes."""
    records, refs = _lookup(context, "licence_lookup")
    if not records:
        return
    valid = [record for record in records if _good(context, record)]
    held = sorted({item for record in valid for item in record.get("businessItems") or []})
    for item, kinds in sorted(_needed_items(context).items()):
        if item in held:
            continue
        yield source_finding(
            context,
            "lookup.licence_missing_item",
            subject=f"licence_lookup:{item}",
            evidence=refs,
            item=item,
            offer_kinds=joined(label(context, "offer_kinds", kind, "zh") for kind in kinds),
            offer_kinds_en=joined((label(context, "offer_kinds", kind, "en") for kind in kinds), "en"),
            held=joined(held),
            held_en=joined(held, "en"),
        )


@rule(
    "lookup.licence_no_resource_collab",
    title_zh="官方许可证 B11 不含云主机",
    title_en="Official B11 excludes cloud hosts",
    red_flag=2,
)
def licence_no_resource_collab(context: RuleContext) -> Iterator[Finding]:
    """Cloud offers while every valid official B11 licence excludes 互联网资源协作服务."""
    records, refs = _lookup(context, "licence_lookup")
    needs_collab = any(
        context.knowledge["offer_kinds"]
        .get(str(getattr(o.offer_kind, "value", o.offer_kind)), {})
        .get("needs_resource_collab")
        for o in context.provider.offers
    )
    b11 = [r for r in records if _good(context, r) and "B11" in (r.get("businessItems") or [])]
    if not needs_collab or not b11 or not all(r.get("b11ExcludesResourceCollab") is True for r in b11):
        return
    yield source_finding(
        context,
        "lookup.licence_no_resource_collab",
        subject="provider",
        evidence=refs,
        numbers=joined(r.get("licenceNo") for r in b11),
    )


@rule(
    "lookup.licence_company_name",
    title_zh="官方持证公司名称不一致",
    title_en="Official licence holder name differs",
    red_flag=5,
)
def licence_company_name(context: RuleContext) -> Iterator[Finding]:
    """Official licence holders whose name differs from the legal name."""
    yield from _name_mismatches(
        context, "licence_lookup", "lookup.licence_company_name", "companyName", "licenceNo"
    )


@rule(
    "lookup.licence_number_mismatch",
    title_zh="登记的许可证官方未查到",
    title_en="Recorded licence not found officially",
)
def licence_number_mismatch(context: RuleContext) -> Iterator[Finding]:
    """Recorded licence numbers missing from the official results (only when the lookup found something)."""
    yield from _number_mismatches(
        context, "licence_lookup", "lookup.licence_number_mismatch", "licence", ("licenceNo",)
    )


def _status_details(context: RuleContext, record: dict[str, Any]) -> dict[str, Any]:
    """An official licence's status in each language ('—' when it has none)."""
    status = record.get("status") or ""
    return {
        "status": status or "—",
        "status_en": label(context, "licence_status", status, "en") if status else "—",
    }


@rule("lookup.licence_unrecorded", title_zh="官方许可证未登记", title_en="Official licence not recorded")
def licence_unrecorded(context: RuleContext) -> Iterator[Finding]:
    """Official licences the registry does not hold."""
    yield from _unrecorded(
        context,
        "licence_lookup",
        "lookup.licence_unrecorded",
        "licence",
        "licenceNo",
        lambda record: _status_details(context, record),
    )
