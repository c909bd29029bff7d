"""Findings and the rule registry: rules look at a provider (plus gathered facts) and raise findings.

Rules live in the modules of app.vetting.rules and register themselves with @rule. Credential rules,
scraper comparisons and benchmark comparisons all produce the same Finding, so verdicts, pages and
reports treat them alike.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from app.models.enums import Severity, Verdict  # the vocabulary is keyed by them


@dataclass(frozen=True)
class Finding:
    """One red flag (or note) with the values behind it and how a person can verify it."""

    rule_id: str
    severity: Severity
    message_zh: str
    message_en: str
    how_to_verify_zh: str = ""
    how_to_verify_en: str = ""
    subject: str = ""  # what it is about, e.g. "licence:3", "offer:12", "provider"
    evidence: tuple[dict[str, Any], ...] = ()  # e.g. {"kind": "registry", "field": ..., "value": ...}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (CLI, API, stored check runs)."""
        return {
            "rule_id": self.rule_id,
            "severity": self.severity.value,
            "message_zh": self.message_zh,
            "message_en": self.message_en,
            "how_to_verify_zh": self.how_to_verify_zh,
            "how_to_verify_en": self.how_to_verify_en,
            "subject": self.subject,
            "evidence": list(self.evidence),
        }


@dataclass
class RuleContext:
    """What rules may look at: the loaded provider aggregate, today, thresholds and gathered facts."""

    provider: Any
    today: date
    knowledge: dict[str, Any]
    facts: dict[str, Any] = field(default_factory=dict)  # e.g. "footer", "icp_lookup", "benchmarks"


RuleCheck = Callable[[RuleContext], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """A registered check; `red_flag` is its number in DOMAIN.md section 4, when it has one."""

    id: str
    title_zh: str
    title_en: str
    check: RuleCheck
    red_flag: int | None = None


RULES: dict[str, Rule] = {}


def rule(rule_id: str, *, title_zh: str, title_en: str, red_flag: int | None = None) -> Callable:
    """Register the decorated function as rule `rule_id`; a duplicate id raises."""

    def decorator(check: RuleCheck) -> RuleCheck:
        if rule_id in RULES:
            raise ValueError(f"rule {rule_id!r} is registered twice")
        RULES[rule_id] = Rule(rule_id, title_zh, title_en, check, red_flag)
        return check

    return decorator


@functools.cache
def _import_rule_modules() -> None:
    from app.core.plugins import import_submodules

    import_submodules("app.vetting.rules")


def load_rules() -> dict[str, Rule]:
    """Import every rule module (once per process) and return the registry."""
    _import_rule_modules()
    return RULES


def run_rules(context: RuleContext, rule_ids: Iterable[str] | None = None) -> list[Finding]:
    """Run the chosen rules (all by default) and return their findings, most severe first."""
    rules = load_rules()
    chosen = [rules[rule_id] for rule_id in rule_ids] if rule_ids is not None else list(rules.values())
    findings = [finding for entry in chosen for finding in entry.check(context)]
    order = {Severity.blocker: 0, Severity.warning: 1, Severity.info: 2}
    return sorted(findings, key=lambda finding: (order[finding.severity], finding.rule_id, finding.subject))


def verdict(findings: Iterable[Finding]) -> Verdict:
    """Fail on any blocker, needs review on any warning, else pass."""
    severities = {finding.severity for finding in findings}
    if Severity.blocker in severities:
        return Verdict.failed
    if Severity.warning in severities:
        return Verdict.needs_review
    return Verdict.passed
