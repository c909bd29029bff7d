"""The provider's verdict as the advice shows it beside each ranked offer, and what it means for the ranking.

A provider whose check fails on a licence red flag (DOMAIN.md flags 1-4, 10, 11) is excluded with that
flag named; one whose check fails only on evidence (benchmark findings: a measured figure below the claim)
stays ranked, on its measured figures, and says so. The label and what is unverified come from
app.credentials.verdicts.verdicts_of when a session is at hand (read afresh for the offers shown); the
advice's own facts (the latest check run's verdict and findings) give the level otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from app.advice.facts import FindingFacts, ProviderFacts
from app.core.vocabulary import LABELS

LICENCE_RED_FLAGS = frozenset({1, 2, 3, 4, 10, 11})
BENCHMARK_RULES = "benchmarks."  # rule ids of findings about measured figures
SHOWN_FINDINGS = 3  # findings named beside a verdict; the rest are counted
UNCHECKED = "unchecked"
LEVELS = LABELS["verdict_level"]  # the labels of app.credentials.verdicts, whose level names it reads


class Verdict(Protocol):
    """What the advice reads of app.credentials.verdicts.ProviderVerdict (any object with its to_dict)."""

    def to_dict(self) -> dict[str, Any]: ...


VerdictReader = Callable[[Iterable[int]], Mapping[int, Verdict]]


def is_licence_failure(finding: FindingFacts) -> bool:
    """A blocker finding on a licence red flag: the provider may not legally rent these servers."""
    return finding.severity == "blocker" and finding.red_flag in LICENCE_RED_FLAGS


def is_evidence_failure(finding: FindingFacts) -> bool:
    """A blocker finding about a measured figure (the ranking weighs the measurement itself)."""
    return finding.severity == "blocker" and finding.rule_id.startswith(BENCHMARK_RULES)


def fails_on_evidence_only(provider: ProviderFacts) -> bool:
    """Whether the provider's check fails only because measurements fell short of its claims."""
    blockers = [f for f in provider.findings if f.severity == "blocker"]
    return bool(blockers) and all(is_evidence_failure(f) for f in blockers)


def licence_failure_texts(red_flag: int, message_zh: str, message_en: str) -> tuple[str, str]:
    """Why a licence red flag excludes the provider's offers."""
    zh, en = message_zh.rstrip("。"), message_en.rstrip(".")
    return (
        f"核查结论为不通过：许可证红旗 {red_flag}（{zh}），不能合法出租这些服务器",
        f"the check fails on licence red flag {red_flag} ({en}): the provider may not legally rent "
        "these servers",
    )


def evidence_failure_texts(messages_zh: list[str], messages_en: list[str]) -> tuple[str, str]:
    """Why a provider whose check fails is still ranked: its measured figures failed, and they count."""
    messages_zh = [message.rstrip("。") for message in messages_zh]
    messages_en = [message.rstrip(".") for message in messages_en]
    return (
        "核查结论为不通过，原因是实测低于声称（" + "；".join(messages_zh) + "）：按实测数据排名，"
        "被实测否定的声称数据不计分",
        "the check fails because measurements fell short of the claims (" + "; ".join(messages_en) + "): "
        "ranked on the measured figures; claims they contradict do not score",
    )


def _level_of(provider: ProviderFacts) -> str:
    """The level the advice's own facts give (the latest check run's verdict)."""
    check = provider.check
    return (check.verdict or UNCHECKED) if check is not None else UNCHECKED


def _findings_shown(provider: ProviderFacts) -> list[dict[str, Any]]:
    """The blocker and warning findings behind a verdict, most severe first."""
    ordered = sorted(
        (f for f in provider.findings if f.severity in ("blocker", "warning")),
        key=lambda f: f.severity != "blocker",
    )
    return [
        {
            "rule_id": f.rule_id,
            "severity": f.severity,
            "red_flag": f.red_flag,
            "message_zh": f.message_zh,
            "message_en": f.message_en,
        }
        for f in ordered
    ]


def verdict_dict(provider: ProviderFacts, found: Verdict | None = None) -> dict[str, Any]:
    """The verdict shown beside the provider's offers: level, label, what is unverified, the findings."""
    if found is not None:
        shown = found.to_dict()
    else:
        level = _level_of(provider)
        zh, en = LEVELS.get(level, LEVELS[UNCHECKED])
        run_id = provider.check.run_id if provider.check is not None else None
        shown = {"level": level, "label_zh": zh, "label_en": en, "unverified": None, "check_run_id": run_id}
        shown.update(provider_id=provider.id, outdated=None)
    shown["level_zh"], shown["level_en"] = LEVELS.get(shown["level"], LEVELS[UNCHECKED])
    findings = _findings_shown(provider)
    shown["findings"] = findings[:SHOWN_FINDINGS]
    shown["more_findings"] = max(0, len(findings) - SHOWN_FINDINGS)
    shown["ranked_on_measurements"] = shown["level"] == "fail" and fails_on_evidence_only(provider)
    shown["link"] = provider.check.link if provider.check is not None else None
    return shown


def verdicts_for(
    providers: Iterable[ProviderFacts], reader: VerdictReader | None
) -> dict[int, dict[str, Any]]:
    """The verdict of each provider, read through `reader` when there is one (one read for them all)."""
    unique = {provider.id: provider for provider in providers}
    found = reader(unique) if reader is not None and unique else {}
    return {pid: verdict_dict(provider, found.get(pid)) for pid, provider in unique.items()}
