"""Helpers shared by the rule modules: the knowledge file, cached number parsing, finding assembly."""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from app.vetting.findings import Finding, RuleContext, Severity
from app.vetting.identifier_common import Identifier
from app.vetting.identifiers import identify

KNOWLEDGE_FILE = Path(__file__).resolve().parents[2] / "knowledge" / "vetting.yaml"


@lru_cache(maxsize=4)
def _load(path: str, mtime_ns: int) -> tuple[dict[str, Any], str]:
    raw = Path(path).read_bytes()
    data = yaml.safe_load(raw.decode("utf-8"))
    return data, f"v{data.get('version', 0)}-{hashlib.sha256(raw).hexdigest()[:8]}"


def load_knowledge(path: Path | None = None) -> dict[str, Any]:
    """The vetting knowledge (thresholds, requirements, texts), re-read when the file changes."""
    path = path or KNOWLEDGE_FILE
    return _load(str(path), path.stat().st_mtime_ns)[0]


def knowledge_version(path: Path | None = None) -> str:
    """'v<version>-<sha256 prefix>' of the knowledge file, stored with every check run."""
    path = path or KNOWLEDGE_FILE
    return _load(str(path), path.stat().st_mtime_ns)[1]


@lru_cache(maxsize=8192)
def parsed(text: str) -> Identifier:
    """identify(text), cached: several rules look at the same numbers of one provider."""
    return identify(text)


def label(context: RuleContext, group: str, key: str, lang: str) -> str:
    """A name from the knowledge file's labels section (the key itself when missing)."""
    entry = context.knowledge["labels"].get(group, {}).get(key)
    if isinstance(entry, dict):
        return entry.get(lang, key)
    if isinstance(entry, str):
        return entry if lang == "en" else key
    return key


def registry(entity: str, record_id: Any, field: str, value: Any) -> dict[str, Any]:
    """An evidence reference to a registry value."""
    return {"kind": "registry", "entity": entity, "id": record_id, "field": field, "value": value}


def number_of(record: Any) -> str:
    """A licence's or filing's number as shown: normalised when it parsed, else as typed."""
    return record.number or record.number_raw


def joined(items: Any, lang: str = "zh") -> str:
    """Items joined the way each language lists them."""
    return ("、" if lang == "zh" else ", ").join(str(item) for item in items)


def finding(
    context: RuleContext,
    rule_id: str,
    *,
    subject: str,
    evidence: Iterable[dict[str, Any]],
    severity: str | None = None,
    company: str | None = None,
    texts: dict[str, Any] | None = None,
    url: str | None = None,
    **values: Any,
) -> Finding:
    """A Finding with the severity and texts of `rule_id` from a knowledge file (vetting.yaml, or `texts`):
    its messages filled with values, its how-to-verify (the shared text the spec names, else its own)
    filled with the company name and, when given, the url (which the messages may name too)."""
    source = context.knowledge if texts is None else texts
    spec = source["rules"][rule_id]
    fill = {"company": company or context.provider.legal_name}
    if url is not None:
        values, fill["url"] = {"url": url, **values}, url
    key = spec.get("verify")
    shared = {**context.knowledge.get("verify", {}), **source.get("verify", {})}
    verify_zh = shared[f"{key}_zh"] if key else spec.get("verify_zh", "")
    verify_en = shared[f"{key}_en"] if key else spec.get("verify_en", "")
    return Finding(
        rule_id=rule_id,
        severity=Severity(severity or spec["severity"]),
        message_zh=spec["message_zh"].format(**values),
        message_en=spec["message_en"].format(**values),
        how_to_verify_zh=verify_zh.format(**fill),
        how_to_verify_en=verify_en.format(**fill),
        subject=subject,
        evidence=tuple(evidence),
    )


def record_finding(
    context: RuleContext,
    rule_id: str,
    entity: str,
    record: Any,
    cited: tuple[str, Any],
    /,
    *,
    evidence: Iterable[dict[str, Any]] = (),
    **values: Any,
) -> Finding:
    """A finding about one licence or filing record: subject '<entity>:<id>', the record's cited (field,
    value) as first evidence, its number (number_of) among the values."""
    field, value = cited
    return finding(
        context,
        rule_id,
        subject=f"{entity}:{record.id}",
        evidence=[registry(entity, record.id, field, value), *evidence],
        number=number_of(record),
        **values,
    )


def licences_proper(provider: Any) -> list[Any]:
    """The provider's licence records whose number really is an operating licence number."""
    return [licence for licence in provider.licences if parsed(licence.number_raw).kind == "licence"]


def fold_name(text: str | None, knowledge: dict[str, Any]) -> str:
    """A company name folded for comparison: NFKC, no spaces or listed punctuation, brackets unified,
    equivalent legal-form spellings mapped to one."""
    if not text:
        return ""
    names = knowledge.get("names", {})
    drop = set(names.get("drop_chars", " "))
    folded = unicodedata.normalize("NFKC", text)
    folded = "".join(char for char in folded if not char.isspace() and char not in drop)
    folded = folded.translate(str.maketrans("[]【】〔〕", "()()()")).upper()
    for variant, canonical in names.get("equivalent_suffixes", {}).items():
        if folded.endswith(variant):
            folded = folded[: -len(variant)] + canonical
    return folded
