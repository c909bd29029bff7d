"""Which registry records a finding is about, so each record's status in pages and reports agrees with
the findings: its subject ("licence:3", "licence:3,4"), the registry records its evidence cites, or the
number its subject names ("licence_lookup:粤B2-20230674", "footer:icp_filing:京ICP备10046444号-1").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.vetting.rules._common import parsed
from app.vetting.rules._sources import number_key

SEVERITY_RANK = {"blocker": 0, "warning": 1, "info": 2}


def _subject_keys(subject: str) -> list[str]:
    """'licence:3,4' is about licence:3 and licence:4; other subjects stand as they are."""
    kind, _, ids = subject.partition(":")
    if ids and all(part.strip().isdigit() for part in ids.split(",")):
        return [f"{kind}:{part.strip()}" for part in ids.split(",")]
    return [subject]


def _number_of(text: str) -> tuple[str, ...] | None:
    kind = parsed(text).kind
    return number_key(kind, text) if kind != "unknown" else None


def record_numbers(records: Iterable[tuple[str, Any, str | None]]) -> dict[tuple[str, ...], str]:
    """(entity, id, number) of recorded licences and filings -> {number comparison key: 'licence:3'}."""
    numbers: dict[tuple[str, ...], str] = {}
    for entity, record_id, number in records:
        key = _number_of(number or "")
        if key is not None:
            numbers.setdefault(key, f"{entity}:{record_id}")
    return numbers


def records_of(finding: Mapping[str, Any], numbers: Mapping[tuple[str, ...], str]) -> set[str]:
    """The record keys ('licence:3', 'filing:5', 'provider:uscc' ...) a finding (as a dict) is about."""
    keys = set(_subject_keys(str(finding.get("subject") or "")))
    for item in finding.get("evidence") or []:
        if isinstance(item, Mapping) and item.get("kind") == "registry" and item.get("id") is not None:
            keys.add(f"{item.get('entity')}:{item.get('id')}")
    subject = str(finding.get("subject") or "")
    if ":" in subject:
        named = _number_of(subject.rsplit(":", 1)[1])
        if named is not None and named in numbers:
            keys.add(numbers[named])
    return keys


def findings_by_record(
    findings: Iterable[Mapping[str, Any]], numbers: Mapping[tuple[str, ...], str]
) -> dict[str, list[Mapping[str, Any]]]:
    """The findings about each record key, most severe first."""
    grouped: dict[str, list[Mapping[str, Any]]] = {}
    ordered = sorted(findings, key=lambda finding: SEVERITY_RANK.get(str(finding.get("severity")), 9))
    for finding in ordered:
        for key in records_of(finding, numbers):
            grouped.setdefault(key, []).append(finding)
    return grouped
