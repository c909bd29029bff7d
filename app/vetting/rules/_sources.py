"""Helpers for the rules that compare gathered facts (footer scrape, official lookups) with the registry.

Their texts live in app/knowledge/sources.yaml (same shape as vetting.yaml's rules); thresholds,
accepted natures and statuses come from vetting.yaml through context.knowledge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from app.vetting.findings import Finding, RuleContext
from app.vetting.rules._common import finding, load_knowledge, parsed, registry

T = TypeVar("T")
SOURCES_FILE = Path(__file__).resolve().parents[2] / "knowledge" / "sources.yaml"
_DIGITS = re.compile(r"\D")

KIND_NAMES: dict[str, tuple[str, str]] = {
    "icp_filing": ("ICP 备案号", "ICP filing number"),
    "icp_licence": ("ICP 证编号", "ICP licence number"),
    "licence": ("经营许可证号", "licence number"),
    "psb_filing": ("公网安备号", "public-security filing number"),
    "uscc": ("统一社会信用代码", "unified social credit code"),
}


def texts() -> dict[str, Any]:
    """The rule texts of sources.yaml (re-read when the file changes)."""
    return load_knowledge(SOURCES_FILE)


def source_finding(context: RuleContext, rule_id: str, *, url: str = "", **details: Any) -> Finding:
    """A Finding with the severity and texts of `rule_id` from sources.yaml; `url` fills its texts."""
    return finding(context, rule_id, texts=texts(), url=url, **details)


def number_key(kind: str, number: str | None) -> tuple[str, ...] | None:
    """A comparison key for a number: province by code (so 川 = 蜀), digits, filing site suffix dropped."""
    if not number:
        return None
    identifier = parsed(number)
    if identifier.kind != kind or not identifier.normalized:
        return None
    province = identifier.province_code or ""
    if kind == "icp_filing":
        entity = identifier.to_dict().get("entity_number") or identifier.normalized
        return (kind, province, _DIGITS.sub("", entity))
    if kind == "licence":
        categories = ".".join(identifier.to_dict().get("categories") or [])
        return (kind, province, categories, _DIGITS.sub("", identifier.normalized))
    if kind == "uscc":
        return (kind, identifier.normalized)
    return (kind, province, _DIGITS.sub("", identifier.normalized))


def registry_numbers(provider: Any) -> dict[str, list[tuple[str, Any, str]]]:
    """The provider's recorded numbers by kind: (number as shown, record, entity name) per kind."""
    numbers: dict[str, list[tuple[str, Any, str]]] = {}
    for licence in provider.licences:
        kind = parsed(licence.number_raw).kind
        numbers.setdefault(kind, []).append((licence.number or licence.number_raw, licence, "licence"))
    for filing in provider.filings:
        kind = getattr(filing.kind, "value", filing.kind) or parsed(filing.number_raw).kind
        numbers.setdefault(kind, []).append((filing.number or filing.number_raw, filing, "filing"))
    if provider.uscc:
        numbers.setdefault("uscc", []).append((provider.uscc, provider, "provider"))
    return numbers


def number_keys(kind: str, numbers: Iterable[str | None]) -> set[tuple[str, ...]]:
    """The comparison keys of the numbers that parse as `kind` (the others match nothing)."""
    return {key for key in (number_key(kind, number) for number in numbers) if key is not None}


@dataclass(frozen=True)
class RecordedNumbers:
    """The registry's numbers of one kind, compared with numbers observed elsewhere (lookup, website)."""

    kind: str
    entries: list[tuple[str, Any, str]]

    @property
    def numbers(self) -> list[str]:
        """The recorded numbers as shown."""
        return [number for number, _, _ in self.entries]

    @property
    def evidence(self) -> list[dict[str, Any]]:
        """A registry reference to each recorded number."""
        return [registry(entity, record.id, "number", number) for number, record, entity in self.entries]

    def holds(self, number: str | None) -> bool:
        """Whether an observed number is one of the recorded ones."""
        key = number_key(self.kind, number)
        return key is not None and key in number_keys(self.kind, self.numbers)

    def missing_from(self, observed: Iterable[str | None]) -> list[tuple[str, Any, str]]:
        """The recorded entries that none of the observed numbers matches."""
        keys = number_keys(self.kind, observed)
        return [entry for entry in self.entries if number_key(self.kind, entry[0]) not in keys]

    def unrecorded(self, observed: Iterable[tuple[str | None, T]]) -> Iterator[tuple[str, T]]:
        """(number, item) for each observed number that parses and matches no recorded one, once each."""
        seen = number_keys(self.kind, self.numbers)
        for number, item in observed:
            key = number_key(self.kind, number)
            if key is not None and key not in seen:
                seen.add(key)
                yield str(number), item


def recorded_numbers(provider: Any, kind: str) -> RecordedNumbers:
    """The provider's recorded numbers of one kind (registry_numbers)."""
    return RecordedNumbers(kind, registry_numbers(provider).get(kind, []))


def joined(items: Iterable[Any], lang: str = "zh") -> str:
    """Items joined the way each language lists them ('—' when there are none)."""
    items = [str(item) for item in items]
    if not items:
        return "—" if lang == "zh" else "none"
    return ("、" if lang == "zh" else ", ").join(items)
