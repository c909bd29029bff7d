"""Red flag 13: the provider will not disclose its network topology or storage configuration."""

from __future__ import annotations

from collections.abc import Iterator

from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.rules._common import finding, registry

FIELDS = {
    "discloses_network_topology": ("网络拓扑", "network topology"),
    "discloses_storage_config": ("存储配置", "storage configuration"),
}


def _disclosures(context: RuleContext, wanted: bool | None, rule_id: str) -> Iterator[Finding]:
    provider = context.provider
    for field, (what, what_en) in FIELDS.items():
        if getattr(provider, field) is wanted:
            yield finding(
                context,
                rule_id,
                subject=f"provider:{field}",
                evidence=[registry("provider", provider.id, field, wanted)],
                what=what,
                what_en=what_en,
            )


@rule(
    "disclosure.refused",
    title_zh="拒绝披露网络拓扑/存储配置",
    title_en="Network topology / storage configuration not disclosed",
    red_flag=13,
)
def refused(context: RuleContext) -> Iterator[Finding]:
    """Each of the two disclosures recorded as refused."""
    return _disclosures(context, False, "disclosure.refused")


@rule(
    "disclosure.unknown",
    title_zh="未登记是否披露网络拓扑/存储配置",
    title_en="Disclosure of topology / storage not recorded",
    red_flag=13,
)
def unknown(context: RuleContext) -> Iterator[Finding]:
    """Each of the two disclosures not recorded yet (a note: ask the provider)."""
    return _disclosures(context, None, "disclosure.unknown")
