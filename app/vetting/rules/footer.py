"""Compare what the provider's own website shows (facts["footer"]) with the registry.

The "footer" fact (app/credentials/evidence.py) is the latest scrape of the provider's website: the
numbers found on the home page and linked about / licence pages, and the copyright company name, each
with a reference to the stored page. Without that fact these rules raise nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.rules._common import fold_name, registry
from app.vetting.rules._sources import (
    KIND_NAMES,
    RecordedNumbers,
    joined,
    recorded_numbers,
    source_finding,
)
from scrapers.http import UNREACHABLE_HINTS

COMPARED_KINDS = ("icp_filing", "icp_licence", "licence", "psb_filing", "uscc")


def _footer(context: RuleContext) -> dict[str, Any] | None:
    fact = context.facts.get("footer")
    return fact if isinstance(fact, dict) else None


def _shown(fact: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for item in fact.get("identifiers", []) if isinstance(item, dict)]


def _ref(item: dict[str, Any], fact: dict[str, Any]) -> dict[str, Any]:
    return item.get("evidence") or (fact.get("evidence") or [{}])[0]


@rule("footer.fetch_failed", title_zh="官网无法抓取", title_en="Website could not be fetched")
def fetch_failed(context: RuleContext) -> Iterator[Finding]:
    """The latest scrape of the website failed, so its footer is unchecked."""
    fact = _footer(context)
    if fact is None or fact.get("ok", True):
        return
    yield source_finding(
        context,
        "footer.fetch_failed",
        subject="provider",
        evidence=fact.get("evidence", []),
        url=fact.get("url", ""),
        **_fetch_error(fact),
    )


def _fetch_error(fact: dict[str, Any]) -> dict[str, str]:
    """Why the fetch failed, in each language: an unreachable host by its cause, else the stored error."""
    code = str(fact.get("error_code") or "")
    if code.startswith("unreachable_") and code.removeprefix("unreachable_") in UNREACHABLE_HINTS:
        zh, en = UNREACHABLE_HINTS[code.removeprefix("unreachable_")]
        return {
            "error_zh": f"本机无法连接该网站（{zh}），请检查代理/网络，或在浏览器中人工核对",
            "error_en": f"this machine cannot reach the site ({en}); check the proxy/network, "
            "or check it by hand",
        }
    error = fact.get("error") or code
    return {"error_zh": error, "error_en": error}


@rule(
    "footer.filing_not_shown",
    title_zh="官网未展示 ICP 备案号",
    title_en="Website shows no ICP filing number",
    red_flag=7,
)
def filing_not_shown(context: RuleContext) -> Iterator[Finding]:
    """An ICP filing is recorded but the website shows none."""
    fact = _footer(context)
    if fact is None or not fact.get("ok", True):
        return
    recorded = recorded_numbers(context.provider, "icp_filing")
    if not recorded.entries or any(item.get("kind") == "icp_filing" for item in _shown(fact)):
        return
    yield source_finding(
        context,
        "footer.filing_not_shown",
        subject="provider",
        evidence=[*fact.get("evidence", [])[:1], *recorded.evidence],
        url=fact.get("url", ""),
        registry=joined(recorded.numbers),
    )


def _compared(context: RuleContext) -> Iterator[tuple[dict[str, Any], dict[str, Any], RecordedNumbers]]:
    """(fact, item, recorded) for each well-formed number the site shows of a kind the registry records
    (none without a footer fact)."""
    fact = _footer(context)
    for item in _shown(fact) if fact is not None else []:
        kind = item.get("kind", "")
        if kind in COMPARED_KINDS and item.get("valid", True):
            yield fact, item, recorded_numbers(context.provider, kind)


def _number_finding(
    context: RuleContext,
    rule_id: str,
    fact: dict[str, Any],
    item: dict[str, Any],
    article: str,
    **values: Any,
) -> Finding:
    """A finding about one number the site shows, naming its kind ('the'/'a' before it in English)."""
    kind = item.get("kind", "")
    zh, en = KIND_NAMES[kind]
    return source_finding(
        context,
        rule_id,
        subject=f"footer:{kind}:{item.get('normalized')}",
        url=item.get("url") or fact.get("url", ""),
        kind_zh=zh,
        kind_en=f"{article} {en}",
        site=item.get("normalized"),
        **values,
    )


@rule(
    "footer.number_mismatch",
    title_zh="官网编号与登记不一致",
    title_en="Website number differs from the registry",
)
def number_mismatch(context: RuleContext) -> Iterator[Finding]:
    """A number of a kind the registry records, shown on the site but matching none of the recorded ones."""
    for fact, item, recorded in _compared(context):
        if recorded.entries and not recorded.holds(item.get("normalized")):
            yield _number_finding(
                context,
                "footer.number_mismatch",
                fact,
                item,
                "the",
                evidence=[_ref(item, fact), *recorded.evidence],
                registry=joined(recorded.numbers),
            )


@rule(
    "footer.number_unrecorded",
    title_zh="官网展示了未登记的编号",
    title_en="Website shows a number that is not recorded",
)
def number_unrecorded(context: RuleContext) -> Iterator[Finding]:
    """A number of a kind the registry holds none of (worth recording and checking)."""
    for fact, item, recorded in _compared(context):
        if not recorded.entries:
            yield _number_finding(
                context, "footer.number_unrecorded", fact, item, "a", evidence=[_ref(item, fact)]
            )


@rule(
    "footer.invalid_number",
    title_zh="官网展示的编号格式有误",
    title_en="Website shows a malformed number",
    red_flag=9,
)
def invalid_number(context: RuleContext) -> Iterator[Finding]:
    """A number on the site that the identifier parser finds malformed."""
    fact = _footer(context)
    if fact is None:
        return
    for item in _shown(fact):
        if item.get("valid", True):
            continue
        problems = item.get("problems") or []
        yield source_finding(
            context,
            "footer.invalid_number",
            subject=f"footer:{item.get('kind')}:{item.get('normalized')}",
            evidence=[_ref(item, fact)],
            url=item.get("url") or fact.get("url", ""),
            site=item.get("text") or item.get("normalized"),
            problems=" ".join(problems),
        )


@rule(
    "footer.company_mismatch",
    title_zh="官网公司名称与登记不一致",
    title_en="Website company name differs",
    red_flag=5,
)
def company_mismatch(context: RuleContext) -> Iterator[Finding]:
    """The copyright / operator company name on the site against the legal name (and English name)."""
    fact = _footer(context)
    name = fact.get("company_name") if fact else None
    if not fact or not name:
        return
    provider = context.provider
    accepted = {fold_name(provider.legal_name, context.knowledge)}
    if provider.legal_name_en:
        accepted.add(fold_name(provider.legal_name_en, context.knowledge))
    if fold_name(name, context.knowledge) in accepted:
        return
    yield source_finding(
        context,
        "footer.company_mismatch",
        subject="provider",
        evidence=[
            fact.get("company_name_evidence") or (fact.get("evidence") or [{}])[0],
            registry("provider", provider.id, "legal_name", provider.legal_name),
        ],
        url=fact.get("url", ""),
        name=name,
        legal_name=provider.legal_name,
    )
