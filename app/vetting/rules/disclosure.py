"""Red flag 13: the provider will not disclose its network topology or storage configuration."""

from __future__ import annotations

from collections.abc import Iterator

from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.rules._common import finding, registry

FIELDS = {
    "discloses_network_topology": ("网络拓扑", "network topology"),
    "discloses_storage_config": ("存储配置", "storage configuration"),
}


# Red flag 13 from evidence: the latest reviewed questionnaire (fact "disclosure" of
# app.disclosure.merge) replaces the two yes/no fields; each topic declined, left incomplete or
# not accepted by the analyst is named, with its unanswered questions.
TOPIC_SUBJECTS = {
    "topology": "provider:discloses_network_topology",
    "storage": "provider:discloses_storage_config",
    "trial": "disclosure:trial",
}
TOPIC_WORDING = {  # (Chinese, English) after the topic's name
    "declined": ("——尽调问卷 #{id} 中拒绝披露", " — declined in questionnaire #{id}"),
    "incomplete": (
        "——尽调问卷 #{id} 中未回答：{questions}",
        " — questionnaire #{id} leaves unanswered: {questions}",
    ),
    "rejected": (
        "——尽调问卷 #{id} 的回答未被采纳：{comment}",
        " — answers of questionnaire #{id} not accepted: {comment}",
    ),
}


def _from_questionnaire(context: RuleContext, fact: dict, rule_id: str) -> Iterator[Finding]:
    for topic, found in fact["topics"].items():
        wording = TOPIC_WORDING.get(found["state"])
        if wording is None:
            continue  # complete: disclosed
        values = {
            "id": fact["invitation_id"],
            "comment": found.get("comment") or "—",
        }
        zh = wording[0].format(**values, questions="、".join(f"“{q['zh']}”" for q in found["questions"]))
        en = wording[1].format(**values, questions="; ".join(q["en"] for q in found["questions"]))
        evidence = {
            "kind": "disclosure",
            "invitation_id": fact["invitation_id"],
            "declared_on": fact.get("declared_on"),
        }
        yield finding(
            context,
            rule_id,
            subject=TOPIC_SUBJECTS.get(topic, f"disclosure:{topic}"),
            evidence=[evidence],
            what=found["zh"] + zh,
            what_en=found["en"].lower() + en,
        )


def _disclosures(context: RuleContext, wanted: bool | None, rule_id: str) -> Iterator[Finding]:
    provider = context.provider
    fact = context.facts.get("disclosure")
    if fact:
        if wanted is False:
            yield from _from_questionnaire(context, fact, rule_id)
        return
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
    """Each disclosure recorded as refused; with a reviewed questionnaire, each topic not disclosed there."""
    return _disclosures(context, False, "disclosure.refused")


@rule(
    "disclosure.unknown",
    title_zh="未登记是否披露网络拓扑/存储配置",
    title_en="Disclosure of topology / storage not recorded",
    red_flag=13,
)
def unknown(context: RuleContext) -> Iterator[Finding]:
    """Each disclosure not recorded yet (a note: ask the provider); none once a questionnaire is reviewed."""
    return _disclosures(context, None, "disclosure.unknown")
