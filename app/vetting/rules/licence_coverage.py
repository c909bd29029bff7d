"""Red flag 3: every datacenter must lie inside the coverage of a licence that holds B11.

A provincial licence (province prefix, e.g. 浙B1-...) is valid in its own province only; if its coverage
lists cities, only those. A cross-regional licence (issued by MIIT, no prefix) covers what its coverage
lists: province names (any accepted spelling), city names, or "全国" (knowledge: coverage.nationwide).
A datacenter is covered when its province is covered, or its city is listed (city names are compared
after dropping a trailing 市/地区/盟/自治州).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from app.core import provinces
from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.rules._common import finding, joined, licences_proper, number_of, parsed, registry


@dataclass(frozen=True)
class Scope:
    """Where one licence is valid: provinces (None = nationwide), listed cities, and flags."""

    provinces: frozenset[str] | None
    cities: frozenset[str]
    provincial: bool
    unknown: bool


def _city(name: str | None, suffixes: list[str]) -> str:
    name = (name or "").strip()
    for suffix in suffixes:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _scope(licence: Any, knowledge: dict[str, Any]) -> Scope:
    """The licence's scope from its number (provincial or not) and its recorded coverage."""
    settings = knowledge["coverage"]
    entries = [str(entry).strip() for entry in licence.coverage if str(entry).strip()]
    named = {entry: provinces.lookup(entry) for entry in entries}
    nationwide = set(settings["nationwide"])
    cities = frozenset(
        _city(entry, settings["city_suffixes"])
        for entry, found in named.items()
        if found is None and entry not in nationwide
    )
    ident = parsed(licence.number_raw)
    if ident.parts.get("issuer_level") == "provincial":
        own = frozenset({ident.province}) if ident.province else frozenset()
        return Scope(own, cities, provincial=True, unknown=not own)
    if any(entry in nationwide for entry in entries):
        return Scope(None, cities, provincial=False, unknown=False)
    covered = frozenset(found.name for found in named.values() if found is not None)
    return Scope(covered, cities, provincial=False, unknown=not entries)


def _covers(datacenter: Any, scope: Scope, suffixes: list[str]) -> bool:
    """Provincial: own province (and a listed city, when cities are listed); else province or city."""
    city = _city(datacenter.city, suffixes)
    if scope.provinces is None:
        return True
    if scope.provincial:
        return datacenter.province in scope.provinces and (not scope.cities or city in scope.cities)
    return datacenter.province in scope.provinces or (bool(city) and city in scope.cities)


def _describe(licence: Any, scope: Scope, lang: str) -> str:
    number = number_of(licence)
    if scope.provincial:
        where = joined(sorted(scope.provinces or []), lang)
        limit = joined(sorted(scope.cities), lang)
        if lang == "zh":
            return f"{number} 为{where}省级许可证，只在{where}有效" + (f"（限 {limit}）" if limit else "")
        return f"{number} is a provincial licence of {where}, valid there only" + (
            f" (limited to {limit})" if limit else ""
        )
    listed = joined(sorted((scope.provinces or set()) | scope.cities), lang)
    return f"{number} 覆盖 {listed}" if lang == "zh" else f"{number} covers {listed}"


def _b11_scopes(context: RuleContext) -> list[tuple[Any, Scope]]:
    b11 = [lic for lic in licences_proper(context.provider) if "B11" in lic.business_items]
    return [(lic, _scope(lic, context.knowledge)) for lic in b11]


def _location(datacenter: Any) -> str:
    return " ".join(part for part in (datacenter.province, datacenter.city) if part)


def _uncovered(context: RuleContext) -> Iterator[tuple[Any, list[Any]]]:
    """Each datacenter no B11 licence is known to cover, with the licences' scopes."""
    scopes = _b11_scopes(context)
    if not scopes:
        return
    suffixes = context.knowledge["coverage"]["city_suffixes"]
    for datacenter in context.provider.datacenters:
        if not any(not scope.unknown and _covers(datacenter, scope, suffixes) for _lic, scope in scopes):
            yield datacenter, scopes


@rule(
    "licence.coverage",
    title_zh="机房不在许可证覆盖范围内",
    title_en="Datacenter outside the licence coverage",
    red_flag=3,
)
def coverage(context: RuleContext) -> Iterator[Finding]:
    """A datacenter outside every known coverage of the provider's B11 licences."""
    for datacenter, scopes in _uncovered(context):
        if any(scope.unknown for _lic, scope in scopes):
            continue  # some coverage is unknown: licence.coverage_unknown says so instead
        evidence = [registry("datacenter", datacenter.id, "province", datacenter.province)]
        if datacenter.city:
            evidence.append(registry("datacenter", datacenter.id, "city", datacenter.city))
        evidence += [registry("licence", lic.id, "coverage", list(lic.coverage)) for lic, _ in scopes]
        yield finding(
            context,
            "licence.coverage",
            subject=f"datacenter:{datacenter.id}",
            evidence=evidence,
            datacenter=datacenter.name,
            location=_location(datacenter),
            location_en=_location(datacenter),
            licences="；".join(_describe(lic, scope, "zh") for lic, scope in scopes),
            licences_en="; ".join(_describe(lic, scope, "en") for lic, scope in scopes),
        )


@rule(
    "licence.coverage_unknown",
    title_zh="许可证覆盖范围未登记",
    title_en="Licence coverage not recorded",
    red_flag=3,
)
def coverage_unknown(context: RuleContext) -> Iterator[Finding]:
    """A datacenter no licence is known to cover while some cross-regional licence lacks its coverage."""
    for datacenter, scopes in _uncovered(context):
        for lic, scope in scopes:
            if not scope.unknown:
                continue
            yield finding(
                context,
                "licence.coverage_unknown",
                subject=f"datacenter:{datacenter.id}",
                evidence=[
                    registry("licence", lic.id, "coverage", list(lic.coverage)),
                    registry("datacenter", datacenter.id, "province", datacenter.province),
                ],
                number=number_of(lic),
                datacenter=datacenter.name,
                location=_location(datacenter),
                location_en=_location(datacenter),
            )
