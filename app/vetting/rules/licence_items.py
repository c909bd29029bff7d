"""Red flags 1 and 2 (and the B14 note): the licence's business items against what the offers sell."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.rules._common import finding, joined, label, licences_proper, number_of, registry


def _kind(value: Any) -> str:
    return getattr(value, "value", value)


def _held(context: RuleContext, licences: list[Any], lang: str) -> str:
    """What the licences hold, e.g. '京B2-20249905: B21、B25 (second-class items only)'."""
    if not licences:
        return "未登记任何经营许可证" if lang == "zh" else "no operating licence is recorded"
    parts = []
    for licence in licences:
        items = joined(licence.business_items, lang) or (
            "未登记业务种类" if lang == "zh" else "no items recorded"
        )
        parts.append(f"{number_of(licence)}{'：' if lang == 'zh' else ': '}{items}")
    text = ("；" if lang == "zh" else "; ").join(parts)
    items = {item for licence in licences for item in licence.business_items}
    if items and all(item.startswith("B2") for item in items):
        text += (
            "（只有第二类业务，不覆盖 IDC/云业务）"
            if lang == "zh"
            else " (second-class items only: no IDC/cloud)"
        )
    return text


@rule(
    "licence.missing_item",
    title_zh="缺少套餐所需的业务种类（如 B11）",
    title_en="Business item required by the offers (e.g. B11) missing",
    red_flag=1,
)
def missing_item(context: RuleContext) -> Iterator[Finding]:
    """Each business item the offer kinds need (knowledge: offer_kinds) must be on some licence."""
    provider = context.provider
    requirements = context.knowledge["offer_kinds"]
    needed: dict[str, list[Any]] = {}
    for offer in provider.offers:
        for item in requirements.get(_kind(offer.offer_kind), {}).get("required_items", []):
            needed.setdefault(item, []).append(offer)
    licences = licences_proper(provider)
    held = {item for licence in licences for item in licence.business_items}
    for item, offers in sorted(needed.items()):
        if item in held:
            continue
        kinds = sorted({_kind(offer.offer_kind) for offer in offers})
        evidence = [registry("offer", o.id, "offer_kind", _kind(o.offer_kind)) for o in offers]
        evidence += [
            registry("licence", lic.id, "business_items", list(lic.business_items)) for lic in licences
        ]
        yield finding(
            context,
            "licence.missing_item",
            subject=f"item:{item}",
            evidence=evidence,
            item=item,
            item_name=label(context, "business_items", item, "zh"),
            item_name_en=label(context, "business_items", item, "en"),
            offer_kinds=joined(label(context, "offer_kinds", kind, "zh") for kind in kinds),
            offer_kinds_en=joined((label(context, "offer_kinds", kind, "en") for kind in kinds), "en"),
            held=_held(context, licences, "zh"),
            held_en=_held(context, licences, "en"),
        )


@rule(
    "licence.bandwidth_without_b14",
    title_zh="转售公网带宽但无 B14（参考）",
    title_en="Public bandwidth resold without B14 (note)",
)
def bandwidth_without_b14(context: RuleContext) -> Iterator[Finding]:
    """Offers with public bandwidth and no licence holding the resale item (knowledge: bandwidth_resale)."""
    resale = context.knowledge["bandwidth_resale"]
    item, minimum = resale["item"], resale["min_public_mbps"]
    licences = licences_proper(context.provider)
    if any(item in licence.business_items for licence in licences):
        return
    offers = [o for o in context.provider.offers if (o.public_mbps or 0) >= minimum]
    if not offers:
        return
    names = [o.name or o.gpu_model for o in offers]
    mbps = max(o.public_mbps for o in offers)
    yield finding(
        context,
        "licence.bandwidth_without_b14",
        subject=f"item:{item}",
        evidence=[registry("offer", o.id, "public_mbps", o.public_mbps) for o in offers],
        item=item,
        offer=joined(names),
        mbps=f"{mbps:g}",
    )


def _cloud_offers_and_b11(context: RuleContext) -> tuple[list[Any], list[Any]]:
    """Offers that need 互联网资源协作服务, and the B11 licences, when none of those includes it."""
    kinds = context.knowledge["offer_kinds"]
    offers = [
        o for o in context.provider.offers if kinds.get(_kind(o.offer_kind), {}).get("needs_resource_collab")
    ]
    b11 = [lic for lic in licences_proper(context.provider) if "B11" in lic.business_items]
    if not offers or not b11 or any(lic.b11_includes_resource_collab for lic in b11):
        return [], []
    return offers, b11


def _collab_finding(context: RuleContext, rule_id: str, offers: list[Any], licences: list[Any]) -> Finding:
    evidence = [
        registry("licence", lic.id, "b11_includes_resource_collab", lic.b11_includes_resource_collab)
        for lic in licences
    ]
    evidence += [registry("offer", o.id, "offer_kind", _kind(o.offer_kind)) for o in offers]
    return finding(
        context,
        rule_id,
        subject="licence:" + ",".join(str(lic.id) for lic in licences),
        evidence=evidence,
        offers=joined(o.name or o.gpu_model for o in offers),
        numbers=joined(number_of(lic) for lic in licences),
    )


@rule(
    "licence.b11_no_resource_collab",
    title_zh="B11 不含互联网资源协作服务却售云主机",
    title_en="Cloud instances sold on a B11 that excludes resource collaboration",
    red_flag=2,
)
def b11_no_resource_collab(context: RuleContext) -> Iterator[Finding]:
    """Cloud offers while every B11 licence is recorded as excluding 互联网资源协作服务."""
    offers, b11 = _cloud_offers_and_b11(context)
    if b11 and all(lic.b11_includes_resource_collab is False for lic in b11):
        yield _collab_finding(context, "licence.b11_no_resource_collab", offers, b11)


@rule(
    "licence.b11_resource_collab_unknown",
    title_zh="售云主机，但 B11 是否含互联网资源协作服务未登记",
    title_en="Cloud instances sold; whether B11 includes resource collaboration is not recorded",
    red_flag=2,
)
def b11_resource_collab_unknown(context: RuleContext) -> Iterator[Finding]:
    """Cloud offers while no B11 licence is known to include 互联网资源协作服务 and some are unrecorded."""
    offers, b11 = _cloud_offers_and_b11(context)
    unknown = [lic for lic in b11 if lic.b11_includes_resource_collab is None]
    if unknown:
        yield _collab_finding(context, "licence.b11_resource_collab_unknown", offers, unknown)
