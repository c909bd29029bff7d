"""Red flags 9, 10 and 11: malformed numbers, foreign-invested licences, a filing shown as the licence."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.identifier_common import MESSAGES
from app.vetting.rules._common import (
    finding,
    label,
    licences_proper,
    parsed,
    record_finding,
    registry,
)

# Problems another rule reports on its own (a future year: licence.issued_in_future; PSB digits against
# the prefix: psb.province_mismatch), matched by the fixed text before the first placeholder.
_REPORTED_ELSEWHERE = tuple(
    MESSAGES[key].split("{", 1)[0] for key in ("licence_year_future", "psb_province_mismatch")
)
FILING_LIKE = ("icp_filing", "psb_filing")


def _problems(problems: list[str]) -> list[str]:
    return [problem for problem in problems if not problem.startswith(_REPORTED_ELSEWHERE)]


def _records(provider: Any) -> Iterator[tuple[str, str, Any, str, str]]:
    """(record kind, entity, id, field, value) of every number the provider carries."""
    for licence in provider.licences:
        yield "licence", "licence", licence.id, "number_raw", licence.number_raw
    for filing in provider.filings:
        kind = str(getattr(filing.kind, "value", filing.kind) or "filing")
        yield kind, "filing", filing.id, "number_raw", filing.number_raw
    if provider.uscc:
        yield "uscc", "provider", provider.id, "uscc", provider.uscc


def _malformed(kind: str, value: str) -> list[str]:
    """What is wrong with the number for a record of this kind (empty when fine or another rule's)."""
    ident = parsed(value)
    if kind == "licence":
        if ident.kind in FILING_LIKE:
            return []  # licence.is_icp_filing
        if ident.kind == "icp_licence":
            return _problems(ident.problems) if not ident.valid else []
        if ident.kind != "licence":
            return ident.problems or ["无法识别为许可证号。"]
    elif kind in ("icp_filing", "icp_licence", "psb_filing", "uscc") and ident.kind != kind:
        expected = MESSAGES.get(f"not_{kind}", "")
        return [f"登记为 {kind}，但编号形如 {ident.kind}。{expected}".strip()]
    return [] if ident.valid else _problems(ident.problems)


def malformed_numbers(provider: Any) -> list[tuple[str, str, str]]:
    """(field path, value, what is wrong) of each number identifier.malformed flags, for a provider not
    stored yet (an import preview says what the check will say)."""
    found = []
    numbers = [
        ("licence", f"licences[{i}].number_raw", r.number_raw) for i, r in enumerate(provider.licences)
    ]
    for i, filing in enumerate(provider.filings):
        kind = str(getattr(filing.kind, "value", filing.kind) or "filing")
        numbers.append((kind, f"filings[{i}].number_raw", filing.number_raw))
    if provider.uscc:
        numbers.append(("uscc", "uscc", provider.uscc))
    for kind, path, value in numbers:
        problems = _malformed(kind, value)
        if problems:
            found.append((path, value, " ".join(problems)))
    return found


@rule(
    "identifier.malformed",
    title_zh="编号格式错误",
    title_en="Malformed number",
    red_flag=9,
)
def malformed(context: RuleContext) -> Iterator[Finding]:
    """Every licence, filing and credit-code number checked by the identifier parser."""
    severities = context.knowledge["malformed_severity"]
    for kind, entity, record_id, field, value in _records(context.provider):
        problems = _malformed(kind, value)
        if not problems:
            continue
        yield finding(
            context,
            "identifier.malformed",
            subject=f"{entity}:{record_id}" if entity != "provider" else "provider:uscc",
            evidence=[registry(entity, record_id, field, value)],
            severity=severities.get(kind, "warning"),
            record=label(context, "records", kind, "zh"),
            record_en=label(context, "records", kind, "en"),
            value=value,
            problems=" ".join(problems),
        )


@rule(
    "licence.foreign_invested",
    title_zh="合字（外商投资）许可证",
    title_en="Foreign-invested licence",
    red_flag=10,
)
def foreign_invested(context: RuleContext) -> Iterator[Finding]:
    """Licences whose number carries 合字: IDC/cloud is restricted for foreign investment."""
    for licence in licences_proper(context.provider):
        if parsed(licence.number_raw).parts.get("foreign_invested"):
            yield record_finding(
                context,
                "licence.foreign_invested",
                "licence",
                licence,
                ("number_raw", licence.number_raw),
            )


@rule(
    "licence.is_icp_filing",
    title_zh="以备案号冒充经营许可证",
    title_en="Filing number presented as the operating licence",
    red_flag=11,
)
def is_icp_filing(context: RuleContext) -> Iterator[Finding]:
    """A licence record whose number is an ICP filing (or a public-security filing) number."""
    for licence in context.provider.licences:
        kind = parsed(licence.number_raw).kind
        if kind in FILING_LIKE:
            yield record_finding(
                context,
                "licence.is_icp_filing",
                "licence",
                licence,
                ("number_raw", licence.number_raw),
                value=licence.number_raw,
                kind_zh=label(context, "identifier_kinds", kind, "zh"),
                kind_en=label(context, "identifier_kinds", kind, "en"),
            )
