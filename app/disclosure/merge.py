"""Merge a reviewed disclosure into the registry, and what it declared: red flag 13's fact and the record.

Accepted items enter the registry through app.registry.providers (the same validation, audit trail and
version check as an analyst's edit), as claims: the checks, lookups and benchmarks verify them as usual.
The registry has no per-field provenance, so the merge also writes one audit entry (action "declare",
entity "invitation") naming the declaration date and every declared value, and keeps the same record in
`Invitation.review["merge"]` for the provider page and the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask_babel import gettext as _
from sqlmodel import Session, col, func, select

from app.core import clock
from app.core.clock import aware, to_local
from app.core.errors import Conflict
from app.core.events import EvidenceChanged, publish
from app.credentials.facts import fact_source
from app.disclosure import invitations
from app.disclosure import schema as schema
from app.disclosure.comparison import (
    CHANGED,
    COMPLETE,
    DECLINED,
    INCOMPLETE,
    TOPICS,
    ReviewItem,
    review_items,
    submission,
    topic_questions,
)
from app.disclosure.review import (
    ACCEPT,
    REJECT,
    effective_status,
    get_invitation,
    is_merged,
    merged_uploads,
    undecided,
)
from app.models import AuditEntry, Provider
from app.models.checks import CheckRun
from app.models.disclosure import Invitation, InvitationStatus
from app.registry.providers import CHILD_ORDER, create_provider, get_provider, provider_input, update_provider

# The registry's yes/no of each topic, set on merge from an accepted answer.
TOPIC_FLAGS = {"topology": "discloses_network_topology", "storage": "discloses_storage_config"}
REJECTED = "rejected"


def _question_names(topic: str, names: list[str]) -> list[dict[str, str]]:
    section = schema.SECTION_BY_NAME[topic]
    return [{"name": name, "zh": section.field(name).zh, "en": section.field(name).en} for name in names]


def declaration_date(moment: datetime) -> str:
    """The day of a declaration as people there count days (the display zone, e.g. Asia/Shanghai)."""
    return to_local(moment).date().isoformat()


def topic_findings(invitation: Invitation) -> dict[str, Any]:
    """Red flag 13's fact from one reviewed submission: each topic's state with the questions it concerns."""
    answers = submission(invitation)
    decisions = (invitation.review or {}).get("items", {})
    topics = {}
    for topic in TOPICS:
        section = schema.SECTION_BY_NAME[topic]
        found = topic_questions(answers, topic)
        decision = decisions.get(topic) or {}
        state = found["state"]
        if decision.get("decision") == REJECT and state != DECLINED:
            state = REJECTED  # the analyst did not accept the answers: not disclosed
        names = found["unanswered"] if state == INCOMPLETE else []
        topics[topic] = {
            "state": state,
            "zh": section.zh,
            "en": section.en,
            "questions": _question_names(topic, names),
            "comment": decision.get("comment", ""),
        }
    return {
        "invitation_id": invitation.id,
        "submitted_at": aware(invitation.submitted_at).isoformat() if invitation.submitted_at else None,
        "declared_on": declaration_date(invitation.submitted_at) if invitation.submitted_at else None,
        "reviewed_at": aware(invitation.reviewed_at).isoformat() if invitation.reviewed_at else None,
        "topics": topics,
    }


def latest_reviewed(session: Session, *, provider_id: int) -> Invitation | None:
    """The provider's most recently submitted invitation that an analyst has reviewed."""
    return session.exec(
        select(Invitation)
        .where(Invitation.provider_id == provider_id, Invitation.status == InvitationStatus.reviewed.value)
        .order_by(col(Invitation.submitted_at).desc(), col(Invitation.id).desc())
    ).first()


@fact_source("disclosure")
def disclosure_fact(session: Session, provider: Any) -> dict[str, Any] | None:
    """The latest reviewed questionnaire's answers to the topology, storage and trial questions."""
    invitation = latest_reviewed(session, provider_id=provider.id)
    return topic_findings(invitation) if invitation is not None else None


# ---------------------------------------------------------------- merging
@dataclass(frozen=True)
class MergeResult:
    """What a merge did: the provider (created or changed), the items merged, and the re-check it ran."""

    invitation: Invitation
    provider: Provider
    created: bool
    merged: list[str]
    check_run_id: int | None


def _collection_patch(
    section: str, accepted: list[ReviewItem], current: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Every existing record by id (so none is deleted), changed ones with declared values, then new ones."""
    changes = {item.record_id: item.declared for item in accepted if item.record_id is not None}
    rows = [{"id": record["id"], **changes.get(record["id"], {})} for record in current]
    return rows + [dict(item.declared) for item in accepted if item.record_id is None]


def _flags(items: list[ReviewItem], answers: schema.Disclosure) -> dict[str, bool]:
    flags = {}
    for item in items:
        if item.key in TOPIC_FLAGS and item.decision == ACCEPT:
            state = topic_questions(answers, item.key)["state"]
            if state == COMPLETE:
                flags[TOPIC_FLAGS[item.key]] = True
            elif state == DECLINED:
                flags[TOPIC_FLAGS[item.key]] = False
    return flags


def registry_changes(
    items: list[ReviewItem], answers: schema.Disclosure, current: dict | None
) -> dict[str, Any]:
    """The accepted items as a provider patch (existing provider) or new provider's data (current None)."""
    accepted = [item for item in items if item.decision == ACCEPT and item.state in ("added", CHANGED)]
    data: dict[str, Any] = {}
    for item in accepted:
        if item.section == "identity":
            data.update(item.declared)
    data.update(_flags(items, answers))
    for section in CHILD_ORDER:
        rows = [item for item in accepted if item.section == section]
        if rows:
            data[section] = _collection_patch(section, rows, current[section] if current else [])
    return data


def _declared_record(items: list[ReviewItem], answers: schema.Disclosure) -> list[dict[str, Any]]:
    """The accepted items as plain data: key, section, title and the declared values."""
    record = []
    for item in items:
        if item.decision != ACCEPT:
            continue
        values = item.declared
        if item.section in TOPICS:
            dumped = getattr(answers, item.section).model_dump(mode="json")
            values = {name: value for name, value in dumped.items() if value not in (None, "", False)}
        if values or item.section in TOPICS:
            record.append(
                {
                    "key": item.key,
                    "section": item.section,
                    "title": item.title,
                    "state": item.state,
                    "values": values,
                }
            )
    return record


def _audit_changes(invitation: Invitation, declared_on: str, record: list[dict[str, Any]]) -> dict[str, Any]:
    changes: dict[str, Any] = {"declared_on": [None, declared_on], "invitation_id": [None, invitation.id]}
    for entry in record:
        for name, value in entry["values"].items():
            key = f"identity.{name}" if entry["section"] == "identity" else f"{entry['key']}.{name}"
            changes[key] = [None, value]
    return changes


def merge_submission(
    session: Session,
    *,
    invitation_id: int,
    actor: tuple[int | None, str],
    version: Any = None,
    now: datetime | None = None,
) -> MergeResult:
    """Write the accepted items into the registry (new provider when invited by name): audited, versioned."""
    moment = now or clock.now()
    invitation = get_invitation(session, invitation_id=invitation_id)
    if is_merged(invitation):
        raise Conflict(_("该问卷已合并入登记簿"), field="review")
    if effective_status(invitation, moment) != InvitationStatus.reviewed.value:
        raise Conflict(_("须先对每一项作出采纳或不采纳的决定，才能合并"), field="review")
    items = review_items(session, invitation)
    if undecided(items):
        raise Conflict(_("还有 %(count)s 项未审核", count=len(undecided(items))), field="review")
    answers = submission(invitation)
    created = invitation.provider_id is None
    current = None
    if not created:
        loaded = get_provider(session, provider_id=invitation.provider_id)
        current = {**provider_input(loaded), "version": loaded.version}
    data = registry_changes(items, answers, current)
    if created:
        provider = create_provider(session, data={"legal_name": invitation.legal_name, **data})
    elif data:
        expected = version if version not in (None, "") else current["version"]
        patch = {**data, "version": expected}
        provider = update_provider(session, provider_id=invitation.provider_id, patch=patch)
    else:
        provider = get_provider(session, provider_id=invitation.provider_id)
    declared_on = declaration_date(invitation.submitted_at or moment)
    record = _declared_record(items, answers)
    invitation = get_invitation(session, invitation_id=invitation_id)
    entry = AuditEntry(
        at=moment,
        actor_id=actor[0],
        actor_name=actor[1][:60],
        action="declare",
        entity="invitation",
        entity_id=invitation.id,
        provider_id=provider.id,
        changes=_audit_changes(invitation, declared_on, record),
    )
    session.add(entry)
    session.flush()
    invitation.provider_id = provider.id
    invitation.review = {
        **(invitation.review or {}),
        "merge": {
            "at": moment.isoformat(),
            "by": actor[1],
            "provider_id": provider.id,
            "created": created,
            "declared_on": declared_on,
            "provider_version": provider.version,
            "audit_entry_id": entry.id,
            "items": record,
        },
    }
    session.add(invitation)
    details = {"by": actor[1], "provider_id": provider.id, "created": created, "items": len(record)}
    invitations.log(session, invitation, "merged", **details)
    session.commit()
    results = publish(
        session, EvidenceChanged(provider_id=provider.id, since=moment, cause="disclosure merge")
    )
    run_id = next((result.id for result in results if isinstance(result, CheckRun)), None)
    return MergeResult(invitation, provider, created, [entry["key"] for entry in record], run_id)


# ---------------------------------------------------------------- what was declared, and verified since
def declarations(session: Session, *, provider_id: int) -> list[Invitation]:
    """The provider's merged questionnaires, latest first."""
    rows = session.exec(
        select(Invitation)
        .where(Invitation.provider_id == provider_id, Invitation.status == InvitationStatus.reviewed.value)
        .order_by(col(Invitation.submitted_at).desc(), col(Invitation.id).desc())
    ).all()
    return [row for row in rows if is_merged(row)]


def verified_since(session: Session, *, provider_id: int, since: datetime) -> dict[str, Any]:
    """Check runs, official lookups and benchmark runs of the provider after `since`."""
    from app.models.evidence import Lookup, LookupState
    from app.models.trials import BenchRun, RunState

    runs = session.exec(
        select(CheckRun)
        .where(CheckRun.provider_id == provider_id, col(CheckRun.created_at) >= since)
        .order_by(col(CheckRun.id).desc())
    ).all()
    lookups = session.exec(
        select(Lookup.kind, func.count())
        .where(
            Lookup.provider_id == provider_id,
            col(Lookup.created_at) >= since,
            col(Lookup.state).in_([LookupState.completed.value, LookupState.manual.value]),
        )
        .group_by(Lookup.kind)
    ).all()
    benches = session.exec(
        select(BenchRun.suite, func.count())
        .where(
            BenchRun.provider_id == provider_id,
            BenchRun.state == RunState.succeeded,
            col(BenchRun.finished_at) >= since,
        )
        .group_by(BenchRun.suite)
    ).all()
    latest = runs[0] if runs else None
    return {
        "check_runs": len(runs),
        "latest_check": {
            "id": latest.id,
            "verdict": latest.verdict,
            "at": aware(latest.created_at).isoformat(),
        }
        if latest
        else None,
        "lookups": {str(getattr(kind, "value", kind)): count for kind, count in lookups},
        "bench_runs": {suite: count for suite, count in benches},
    }


def declaration_summary(session: Session, *, provider_id: int) -> dict[str, Any] | None:
    """The latest merged declaration of a provider with what was verified since (report and provider page)."""
    merged = declarations(session, provider_id=provider_id)
    if not merged:
        return None
    invitation = merged[0]
    merge = invitation.review["merge"]
    since = aware(invitation.submitted_at) or datetime.fromisoformat(merge["at"])
    topics = topic_findings(invitation)["topics"]
    return {
        "invitation_id": invitation.id,
        "declared_on": merge["declared_on"],
        "submitted_at": since.isoformat(),
        "merged_at": merge["at"],
        "merged_by": merge["by"],
        "items": merge["items"],
        "topics": topics,
        "earlier": [row.id for row in merged[1:]],
        "verified_since": verified_since(session, provider_id=provider_id, since=since),
    }


# ---------------------------------------------------------------- the report's section (both languages)
TOPIC_STATES = {
    COMPLETE: ("已完整披露", "fully disclosed"),
    DECLINED: ("拒绝披露", "declined"),
    INCOMPLETE: ("部分未回答", "partly unanswered"),
    REJECTED: ("回答未被采纳", "answers not accepted"),
}


def _shown(section: str, name: str, value: Any, language: int) -> str:
    """A declared value as the report prints it in one language (0: Chinese, 1: English)."""
    spec = schema.SECTION_BY_NAME.get(section)
    field_spec = next((f for f in spec.fields if f.name == name), None) if spec else None
    if field_spec is not None and field_spec.choices:
        choice = next((c for c in field_spec.choices if c[0] == value), None)
        if choice is not None:
            return choice[1 + language]
    if field_spec is not None and field_spec.widget == "upload":
        return f"{('附件', 'attachment')[language]} #{value}"
    if isinstance(value, bool):
        return (("否", "是"), ("no", "yes"))[language][value]
    if isinstance(value, list):
        return ("、", ", ")[language].join(str(item) for item in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _field_names(section: str, name: str) -> tuple[str, str]:
    spec = schema.SECTION_BY_NAME.get(section)
    field_spec = next((f for f in spec.fields if f.name == name), None) if spec else None
    return (field_spec.zh, field_spec.en) if field_spec else (name, name)


def report_declaration(session: Session, *, provider_id: int) -> dict[str, Any] | None:
    """The provider report's disclosure source: what was declared, when, and what was verified since."""
    summary = declaration_summary(session, provider_id=provider_id)
    if summary is None:
        return None
    rows = []
    for item in summary["items"]:
        section = schema.SECTION_BY_NAME[item["section"]]
        for name, value in item["values"].items():
            zh, en = _field_names(item["section"], name)
            rows.append(
                {
                    "section_zh": section.zh,
                    "section_en": section.en,
                    "item": item["title"] if item["section"] not in ("identity", *TOPICS) else "",
                    "field_zh": zh,
                    "field_en": en,
                    "value_zh": _shown(item["section"], name, value, 0),
                    "value_en": _shown(item["section"], name, value, 1),
                }
            )
    topics = [
        {
            "zh": found["zh"],
            "en": found["en"],
            "state": found["state"],
            "state_zh": TOPIC_STATES[found["state"]][0],
            "state_en": TOPIC_STATES[found["state"]][1],
            "questions_zh": "、".join(q["zh"] for q in found["questions"]),
            "questions_en": ", ".join(q["en"] for q in found["questions"]),
        }
        for found in summary["topics"].values()
    ]
    kept = ("invitation_id", "declared_on", "merged_at", "merged_by", "verified_since")
    files = merged_uploads(session, provider_id=provider_id)
    return {**{key: summary[key] for key in kept}, "rows": rows, "topics": topics, "uploads": files}
