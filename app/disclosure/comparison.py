"""A submission compared with the registry item by item: what each identity field, row and topic changes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask_babel import gettext as _
from pydantic import ValidationError
from sqlmodel import Session

from app.core.errors import from_validation_error
from app.disclosure import schema
from app.models.disclosure import Invitation
from app.registry.providers import CHILD_KINDS, get_provider, provider_input
from app.vetting.identifiers import identify

TOPICS = ("topology", "storage", "trial")


ADDED, CHANGED, UNCHANGED = "added", "changed", "unchanged"


# Values that declare nothing: blanks, and "not sure" (the form's default for bandwidth and storage type).
NOT_DECLARED = (None, "", [], "unknown")


ANSWERED, DECLINED, UNANSWERED = "answered", "declined", "unanswered"
COMPLETE, INCOMPLETE = "complete", "incomplete"  # a topic's state: DECLINED, or whether it is answered
# The main questions of each red-flag-13 topic: a disclosure that answers them is complete. The diagram,
# the backup scheme and the notes are details: asked for, shown when given, never a red flag when left blank.
QUESTIONS = {
    "topology": ("oversubscription_ratio", "uplink_gbps", "shared_with"),
    "storage": ("location", "raid"),
    "trial": ("will_lend",),
}


@dataclass
class FieldDiff:
    """One field of an item: the declared value beside the registry's (None: no value)."""

    name: str
    label: str
    declared: Any
    registry: Any
    state: str  # added | changed | unchanged | declared_only
    registry_field: bool = True  # False: the registry has no such field (declared only, not merged)


@dataclass
class ReviewItem:
    """One thing the analyst accepts or rejects: an identity field, a row, or a disclosure topic."""

    key: str  # "identity.uscc", "licences.0", "topology"
    section: str
    title: str
    state: str  # added | changed | unchanged, or answered | declined | unanswered for topics
    fields: list[FieldDiff] = field(default_factory=list)
    record_id: int | None = None  # the registry record it matches
    declared: dict[str, Any] = field(default_factory=dict)  # registry-shaped values to merge
    decision: str | None = None
    comment: str = ""
    decided_by: str = ""
    errors: list[str] = field(default_factory=list)
    blocker: str = ""  # a finding that stops the merge being routine ("different legal entity")

    @property
    def needs_decision(self) -> bool:
        """Unchanged items need none: there is nothing to merge."""
        return self.state != UNCHANGED


def submission(invitation: Invitation) -> schema.Disclosure:
    """The submitted answers as the questionnaire model (they were validated when submitted)."""
    try:
        return schema.Disclosure.model_validate(invitation.answers or {})
    except ValidationError as exc:
        raise from_validation_error(exc, "answers") from None


def _same(declared: Any, registry: Any) -> bool:
    if isinstance(declared, list) or isinstance(registry, list):
        return sorted(map(str, declared or [])) == sorted(map(str, registry or []))
    if isinstance(declared, (int, float)) and isinstance(registry, (int, float)):
        return float(declared) == float(registry)
    return _plain(declared) == _plain(registry)


def _plain(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return getattr(value, "value", value)


def _field_state(declared: Any, registry: Any) -> str:
    if _same(declared, registry):
        return UNCHANGED
    return ADDED if registry in (None, "", []) else CHANGED


def _registry_number(text: str | None) -> str | None:
    if not text:
        return None
    ident = identify(text)
    return ident.normalized or text


def _match(section: str, row: dict[str, Any], records: list[dict[str, Any]], taken: set[int]) -> dict | None:
    """The registry record a declared row describes (licences and filings by number, datacenters by name)."""

    def free(candidates: list[dict[str, Any]]) -> dict | None:
        return next((record for record in candidates if record["id"] not in taken), None)

    if section in ("licences", "filings"):
        number = _registry_number(row.get("number_raw"))
        return free([r for r in records if _registry_number(r.get("number_raw")) == number])
    if section == "datacenters":
        return free([r for r in records if r.get("name") == row.get("name")])
    if section == "certifications":
        same_kind = [r for r in records if _plain(r.get("kind")) == row.get("kind")]
        numbered = [r for r in same_kind if row.get("number") and r.get("number") == row.get("number")]
        return free(numbered) or free([r for r in same_kind if not (row.get("number") and r.get("number"))])
    if section == "offers":
        keys = ("gpu_model", "gpus_per_node", "offer_kind", "datacenter_name")
        exact = [
            r for r in records if all(_same(row.get(k), r.get(k)) for k in keys if row.get(k) is not None)
        ]
        return free(exact)
    return None


def row_title(section: str, row: dict[str, Any]) -> str:
    if section in ("licences", "filings"):
        return row.get("number_raw") or ""
    if section == "certifications":  # the kind is shown as a field; the title stays language-neutral
        return " ".join(str(part) for part in (row.get("name"), row.get("number")) if part)
    if section == "datacenters":
        return row.get("name") or ""
    if section == "offers":
        return f"{row.get('gpu_model')} × {row.get('gpus_per_node')}"
    return ""


def _row_item(
    section: str, index: int, row: dict[str, Any], records: list[dict[str, Any]], taken: set[int]
) -> ReviewItem:
    spec = schema.SECTION_BY_NAME[section]
    registry_names = set(CHILD_KINDS[section].schema.model_fields) - {"id", "datacenter_id"}
    matched = _match(section, row, records, taken)
    if matched is not None:
        taken.add(matched["id"])
    fields, declared = [], {}
    for field_spec in spec.fields:
        value = row.get(field_spec.name)
        if value in NOT_DECLARED:
            continue  # not answered: the registry keeps its value
        in_registry = field_spec.name in registry_names
        current = matched.get(field_spec.name) if matched and in_registry else None
        if not in_registry:
            state = "declared_only"
        elif matched is None:
            state = ADDED
        else:
            state = _field_state(value, current)
        fields.append(FieldDiff(field_spec.name, field_spec.label(), value, current, state, in_registry))
        if in_registry:
            declared[field_spec.name] = value
    if matched is None:
        state = ADDED
    elif any(f.state in (ADDED, CHANGED) for f in fields):
        state = CHANGED
    else:
        state = UNCHANGED
    return ReviewItem(
        key=f"{section}.{index}",
        section=section,
        title=row_title(section, row),
        state=state,
        fields=fields,
        record_id=matched["id"] if matched else None,
        declared=declared,
    )


def _identity_items(answers: schema.Disclosure, current: dict[str, Any] | None) -> list[ReviewItem]:
    spec = schema.SECTION_BY_NAME["identity"]
    identity = answers.identity.model_dump(mode="json")
    items = []
    for field_spec in spec.fields:
        value = identity.get(field_spec.name)
        if value in (None, ""):
            continue
        registry = current.get(field_spec.name) if current else None
        state = ADDED if current is None else _field_state(value, registry)
        items.append(
            ReviewItem(
                key=f"identity.{field_spec.name}",
                section="identity",
                title=field_spec.label(),
                state=state,
                fields=[FieldDiff(field_spec.name, field_spec.label(), value, registry, state)],
                declared={field_spec.name: value},
                blocker=_other_entity(field_spec.name, state, value, registry),
            )
        )
    return items


def _other_entity(name: str, state: str, declared: Any, registry: Any) -> str:
    """A changed USCC names another legal entity: the blocker text, or "" for any other field or state."""
    if name != "uscc" or state != CHANGED:
        return ""
    return _(
        "不同的法律主体：申报的统一社会信用代码 %(declared)s 与登记的 %(registry)s 不同。"
        "请先核实签约主体（营业执照、企业信用公示系统），不要把它当作普通更正采纳。",
        declared=declared,
        registry=registry,
    )


def blockers(items: list[ReviewItem]) -> list[ReviewItem]:
    """The items carrying a blocker-level finding."""
    return [item for item in items if item.blocker]


def topic_questions(answers: schema.Disclosure, topic: str) -> dict[str, Any]:
    """A topic's state (complete, declined or incomplete) and the names of its unanswered questions."""
    values = getattr(answers, topic)
    names = list(QUESTIONS[topic])
    if topic == "storage" and values.location in ("network", "both"):
        names.append("network_type")
    if topic == "trial" and values.will_lend:
        names.append("how")
    unanswered = [name for name in names if getattr(values, name) in (None, "")]
    declined = answers.answer_states()[topic] == "declined"
    state = DECLINED if declined else INCOMPLETE if unanswered else COMPLETE
    return {"state": state, "unanswered": [] if declined else unanswered}


def _topic_item(answers: schema.Disclosure, topic: str) -> ReviewItem:
    spec = schema.SECTION_BY_NAME[topic]
    values = getattr(answers, topic).model_dump(mode="json")
    state = answers.answer_states()[topic]
    fields = [
        FieldDiff(f.name, f.label(), values.get(f.name), None, "declared_only", registry_field=False)
        for f in spec.fields
        if values.get(f.name) not in (None, "", False) or f.name == "will_lend"
    ]
    item = ReviewItem(key=topic, section=topic, title=spec.title(), state=state, fields=fields)
    missing = topic_questions(answers, topic)["unanswered"]
    if state == ANSWERED and missing:
        item.errors = [
            _(
                "未回答：%(questions)s",
                questions="、".join(schema.label(f"{topic}.{name}") for name in missing),
            )
        ]
    return item


def review_items(session: Session, invitation: Invitation) -> list[ReviewItem]:
    """Every item of the submission compared with the registry, with the decisions recorded so far."""
    answers = submission(invitation)
    current = None
    if invitation.provider_id is not None:
        current = provider_input(get_provider(session, provider_id=invitation.provider_id))
    items = _identity_items(answers, current)
    for section in schema.REPEATED:
        taken: set[int] = set()
        records = current[section] if current else []
        for index, row in enumerate(getattr(answers, section)):
            items.append(_row_item(section, index, row.model_dump(mode="json"), records, taken))
    items += [_topic_item(answers, topic) for topic in TOPICS]
    decisions = (invitation.review or {}).get("items", {})
    for item in items:
        saved = decisions.get(item.key) or {}
        item.decision = saved.get("decision")
        item.comment = saved.get("comment", "")
        item.decided_by = saved.get("by", "")
    return items
