"""Red flags 6, 7 and 8: ICP filing province, nature, absence or blacklisting; PSB digits vs prefix."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.core import provinces
from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.rules._common import finding, fold_name, joined, parsed, record_finding, registry

ICP_KINDS = ("icp_filing", "icp_licence")


def _kind(filing: Any) -> str:
    kind = getattr(filing.kind, "value", filing.kind)
    return kind or parsed(filing.number_raw).kind


def _icp_filings(provider: Any) -> list[Any]:
    return [filing for filing in provider.filings if _kind(filing) == "icp_filing"]


@rule(
    "filing.province_mismatch",
    title_zh="ICP 备案省份与注册地不同",
    title_en="ICP filing province differs from the registered province",
    red_flag=6,
)
def province_mismatch(context: RuleContext) -> Iterator[Finding]:
    """The province of an ICP filing/licence number (aliases such as 蜀 = 四川 accepted) vs registration."""
    registered = context.provider.registered_province
    if not registered:
        return
    for filing in context.provider.filings:
        if _kind(filing) not in ICP_KINDS:
            continue
        province = parsed(filing.number_raw).province
        if province and province != registered:
            yield record_finding(
                context,
                "filing.province_mismatch",
                "filing",
                filing,
                ("number", filing.number_raw),
                evidence=[registry("provider", context.provider.id, "registered_province", registered)],
                filing_province=province,
                filing_province_en=province,
                registered_province=registered,
                registered_province_en=registered,
            )


@rule(
    "filing.nature",
    title_zh="备案主体性质不是企业",
    title_en="Filing entity is not an enterprise",
    red_flag=7,
)
def nature(context: RuleContext) -> Iterator[Finding]:
    """ICP filings whose recorded entity nature is not an accepted one (knowledge: filing)."""
    accepted = context.knowledge["filing"]["acceptable_natures"]
    for filing in _icp_filings(context.provider):
        if filing.entity_nature and filing.entity_nature not in accepted:
            yield record_finding(
                context,
                "filing.nature",
                "filing",
                filing,
                ("entity_nature", filing.entity_nature),
                nature=filing.entity_nature,
                accepted=joined(f"“{name}”" for name in accepted),
                accepted_en=joined((f"'{name}'" for name in accepted), "en"),
            )


@rule("filing.missing", title_zh="没有 ICP 备案", title_en="No ICP filing", red_flag=7)
def missing(context: RuleContext) -> Iterator[Finding]:
    """A provider with a website or offers (knowledge: filing.needs_filing_when) but no ICP filing."""
    provider = context.provider
    if _icp_filings(provider):
        return
    when = context.knowledge["filing"]["needs_filing_when"]
    reasons, reasons_en, evidence = [], [], []
    if "website" in when and provider.website:
        reasons.append(f"网站 {provider.website}")
        reasons_en.append(f"a website ({provider.website})")
        evidence.append(registry("provider", provider.id, "website", provider.website))
    if "offers" in when and provider.offers:
        reasons.append(f"{len(provider.offers)} 个在售套餐")
        reasons_en.append(f"{len(provider.offers)} offers")
        evidence.append(registry("provider", provider.id, "offers", len(provider.offers)))
    if reasons:
        yield finding(
            context,
            "filing.missing",
            subject="provider",
            evidence=evidence,
            reasons="、".join(reasons),
            reasons_en=" and ".join(reasons_en),
        )


@rule("filing.blacklisted", title_zh="备案在黑名单中", title_en="Filing blacklisted", red_flag=7)
def blacklisted(context: RuleContext) -> Iterator[Finding]:
    """Filings whose entity number or entity name is on the knowledge file's blacklist."""
    entries = context.knowledge["filing"].get("blacklist") or []
    if not entries:
        return
    listed = {}
    for entry in entries:
        entry = entry if isinstance(entry, dict) else {"match": entry}
        listed[fold_name(str(entry["match"]), context.knowledge)] = entry.get("reason", "")
    for filing in context.provider.filings:
        ident = parsed(filing.number_raw)
        keys = {
            fold_name(filing.number_raw, context.knowledge),
            fold_name(ident.normalized, context.knowledge),
            fold_name(ident.parts.get("entity_number"), context.knowledge),
            fold_name(filing.entity_name, context.knowledge),
        } - {""}
        hits = keys & set(listed)
        if hits:
            yield record_finding(
                context,
                "filing.blacklisted",
                "filing",
                filing,
                ("number", filing.number_raw),
                entity=filing.entity_name or "—",
                reason=joined(listed[hit] or hit for hit in sorted(hits)),
            )


@rule(
    "psb.province_mismatch",
    title_zh="公网安备号数字与省份前缀不符",
    title_en="Public-security filing digits do not match the prefix",
    red_flag=8,
)
def psb_mismatch(context: RuleContext) -> Iterator[Finding]:
    """The first two digits of a PSB filing (the police bureau's division code) vs its prefix province."""
    for filing in context.provider.filings:
        ident = parsed(filing.number_raw)
        if ident.kind != "psb_filing" or not ident.province_code:
            continue
        code = str(ident.parts.get("division_code", ""))[:2]
        coded = provinces.by_code(code) if len(code) == 2 else None
        if code == ident.province_code or len(code) < 2:
            continue
        coded_name = coded.name if coded else "未知"
        yield record_finding(
            context,
            "psb.province_mismatch",
            "filing",
            filing,
            ("number", filing.number_raw),
            prefix_province=ident.province,
            prefix_province_en=ident.province,
            prefix_code=ident.province_code,
            digits_code=code,
            digits_province=coded_name,
            digits_province_en=coded.name if coded else "unknown",
        )
