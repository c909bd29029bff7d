"""Procurement decisions (采购决定): an analyst proposes the chosen offers of a case, another person with the
approver role (or an admin) approves, returns or rejects it (four eyes).

A proposal is checked rule by rule (app.cases.decision_rules), each refusal an InvalidInput naming the
field. The evidence it rests on (app.cases.decision_evidence) is kept in `snapshot["evidence"]` with its
SHA-256 in `evidence_sha256`; approval reads the evidence again and refuses when it changed, naming what
changed. Approval freezes the snapshot (the evidence and the decision's own fields) with its SHA-256, starts
the term and sets each chosen provider's status to approved. Every row is audited (app.core.audit).

The role is checked here, from the acting user's stored role: callers pass only the Actor.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Annotated, Any

from flask_babel import gettext as _
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, ValidationError
from sqlalchemy.orm import object_session
from sqlmodel import Session, col, select

from app.cases import decision_rules as rules
from app.cases.cases import Actor, get_case
from app.cases.decision_evidence import changes as changes  # re-exported: the decision's interface
from app.cases.decision_evidence import (
    changes_from,
    decision_evidence,
    evidence_of,
    evidence_sha256,
    finding_key,
    joined,
)
from app.cases.decision_evidence import licence_blocks as licence_blocks
from app.cases.decision_evidence import open_findings as open_findings
from app.core import clock
from app.core.audit import set_actor
from app.core.clock import aware
from app.core.errors import Conflict, FieldError, InvalidInput, from_validation_error
from app.core.limits import MAX_ID
from app.core.records import get_or_404
from app.core.vocabulary import label
from app.models import Provider, User
from app.models.decisions import Decision, DecisionCondition, DecisionState, RiskAcceptance
from app.models.enums import ROLE_RANK, ProviderStatus, Role
from app.models.fields import multi_line
from app.registry.providers import atomic
from app.reports.assemble import snapshot_sha256

MAX_TEXT = 4000
MAX_LIST = 200
NEEDS_REAPPROVAL = "needs_reapproval"  # read from the term and the acceptances, never stored
# What a risk acceptance copies from the finding it accepts (kept when later checks no longer list it).
ACCEPTED_FINDING = ("provider_id", "rule_id", "subject", "severity", "message_zh", "message_en")


def _clean(value: Any) -> Any:
    """Text trimmed, its control characters but tabs and line breaks dropped (app.models.fields)."""
    value = multi_line(value)
    return value.strip() if isinstance(value, str) else value


# The length constraints come before the cleaning validator so that pydantic judges them as a string's
# ("at least 1 character"), not as a collection's ("at least 1 item").
Text = Annotated[str, StringConstraints(min_length=1, max_length=MAX_TEXT), BeforeValidator(_clean)]
OptionalText = Annotated[str, StringConstraints(max_length=MAX_TEXT), BeforeValidator(_clean)]


class ConditionIn(BaseModel):
    """A condition the decision carries, with the day it is due (optional)."""

    model_config = ConfigDict(extra="forbid")

    text: Text = Field(description="e.g. re-measure the intranet bandwidth within 30 days of delivery")
    due_on: date | None = Field(default=None, description="due on this day, YYYY-MM-DD")


class AcceptanceIn(BaseModel):
    """An open finding of a chosen provider knowingly accepted: why, and until when."""

    model_config = ConfigDict(extra="forbid")

    finding_id: int = Field(ge=1, le=MAX_ID, description="the open finding (of the latest check run)")
    reason: Text = Field(description="why the risk is accepted")
    until: date = Field(description="accepted until this day (after today), YYYY-MM-DD")


class DecisionIn(BaseModel):
    """A proposed decision as entered (page form or API body)."""

    model_config = ConfigDict(extra="forbid")

    offer_ids: list[Annotated[int, Field(ge=1, le=MAX_ID)]] = Field(
        min_length=1, max_length=20, description="the chosen offers (of quoting providers or candidates)"
    )
    scope: Text = Field(description="which workloads or data the decision covers")
    term_months: int = Field(ge=1, le=60, description="term in months, from the approval day")
    justification: Text = Field(description="why these offers")
    single_source_reason: OptionalText = Field(
        default="", description="required with fewer than 3 valid quotes from different providers"
    )
    conditions: list[ConditionIn] = Field(default_factory=list, max_length=50)
    risk_acceptances: list[AcceptanceIn] = Field(default_factory=list, max_length=MAX_LIST)


def read_decision(data: Mapping[str, Any]) -> DecisionIn:
    """The checked input, or InvalidInput naming every bad field (conditions[0].due_on ...)."""
    if not isinstance(data, Mapping):
        raise InvalidInput(_("请求体须为 JSON 对象"), field="")
    try:
        return DecisionIn.model_validate(dict(data))
    except ValidationError as exc:
        raise from_validation_error(exc) from None


def _commit(session: Session) -> None:
    try:
        session.commit()
    except Exception:
        session.rollback()
        raise


@atomic
def propose(session: Session, *, case_id: int, data: Mapping[str, Any], actor: Actor) -> Decision:
    """Check and store a proposed decision with its conditions and risk acceptances (one transaction).

    A returned decision is never edited: a fresh proposal replaces it (the returned one stays on record)."""
    case = get_case(session, case_id=case_id)
    entry = read_decision(data)
    today = clock.business_today()
    chosen = rules.check_proposal(session, case=case, entry=entry, today=today)
    set_actor(session, user_id=actor.id, name=actor.name)
    evidence = decision_evidence_for(session, case.id, chosen, today)
    decision = Decision(
        case_id=case.id,
        offer_ids=chosen.offer_ids,
        provider_ids=chosen.provider_ids,
        quote_ids=chosen.quote_ids,
        scope=entry.scope,
        term_months=entry.term_months,
        justification=entry.justification,
        single_source_reason=entry.single_source_reason,
        evidence_sha256=evidence_sha256(evidence),
        proposed_by_id=actor.id,
        proposed_by_name=actor.name[:60],
        snapshot={"evidence": evidence},
    )
    session.add(decision)
    session.flush()
    for position, condition in enumerate(entry.conditions):
        session.add(
            DecisionCondition(
                decision_id=decision.id,  # type: ignore[arg-type]
                position=position,
                text=condition.text,
                due_on=condition.due_on,
            )
        )
    for accepted in entry.risk_acceptances:
        finding = chosen.findings[accepted.finding_id]
        session.add(
            RiskAcceptance(
                decision_id=decision.id,  # type: ignore[arg-type]
                finding_id=finding.id,
                accepted_by_id=actor.id,
                accepted_by_name=actor.name[:60],
                **accepted.model_dump(exclude={"finding_id"}),  # reason, until
                **{name: getattr(finding, name) for name in ACCEPTED_FINDING},
            )
        )
    _commit(session)
    session.refresh(decision)
    return decision


def decision_evidence_for(session: Session, case_id: int, chosen: rules.Chosen, today: date) -> dict:
    """The evidence of a proposal not stored yet."""
    return evidence_of(
        session,
        case_id=case_id,
        provider_ids=chosen.provider_ids,
        offer_ids=chosen.offer_ids,
        quote_ids=chosen.quote_ids,
        today=today,
    )


def get_decision(session: Session, *, decision_id: int, lock: bool = False) -> Decision:
    """One decision, or NotFound; `lock`: read afresh and lock its row until the commit (PostgreSQL)."""
    options = {"with_for_update": True, "populate_existing": True} if lock else {}
    message = _("采购决定 %(id)s 不存在", id=decision_id)
    return get_or_404(session, Decision, decision_id, message, field="id", **options)


def list_decisions(session: Session, *, case_id: int | None = None, limit: int = MAX_LIST) -> list[Decision]:
    """Decisions (of one case, when given; NotFound when it does not exist), the latest proposed first."""
    statement = select(Decision)
    if case_id is not None:
        get_case(session, case_id=case_id)
        statement = statement.where(Decision.case_id == case_id)
    statement = statement.order_by(col(Decision.proposed_at).desc(), col(Decision.id).desc()).limit(limit)
    return list(session.exec(statement))


def conditions_of(session: Session, decision_id: int) -> list[DecisionCondition]:
    """The decision's conditions in the order entered."""
    statement = select(DecisionCondition).where(DecisionCondition.decision_id == decision_id)
    return list(session.exec(statement.order_by(col(DecisionCondition.position), col(DecisionCondition.id))))


def acceptances_of(session: Session, decision_id: int) -> list[RiskAcceptance]:
    """The decision's risk acceptances in the order entered."""
    statement = select(RiskAcceptance).where(RiskAcceptance.decision_id == decision_id)
    return list(session.exec(statement.order_by(col(RiskAcceptance.id))))


def lapsed(acceptance: RiskAcceptance, today: date) -> bool:
    """Whether a risk acceptance has lapsed (it still holds on its `until` day)."""
    return acceptance.until < today


def effective_state(
    decision: Decision, today: date | None = None, acceptances: list[RiskAcceptance] | None = None
) -> str:
    """The decision's state, or "needs_reapproval" for an approved one past its term or with a lapsed
    risk acceptance (read from its session when `acceptances` is not given)."""
    state = DecisionState(decision.state).value
    if state != DecisionState.approved:
        return state
    today = today or clock.business_today()
    if decision.valid_until is not None and decision.valid_until < today:
        return NEEDS_REAPPROVAL
    if acceptances is None:
        session = object_session(decision)
        acceptances = acceptances_of(session, decision.id) if session is not None else []  # type: ignore[arg-type]
    if any(lapsed(acceptance, today) for acceptance in acceptances):
        return NEEDS_REAPPROVAL
    return state


# --- four eyes -----------------------------------------------------------------------------------------


def _decider(session: Session, decision: Decision, actor: Actor) -> None:
    """Refuse anyone but a second person with the approver or admin role."""
    user = session.get(User, actor.id) if actor.id is not None else None
    if user is None or not user.active or ROLE_RANK[Role(user.role)] < ROLE_RANK[Role.approver]:
        raise rules.Forbidden(_("只有审批人（approver）或管理员可以审批采购决定"), field="")
    if decision.proposed_by_id is not None and decision.proposed_by_id == actor.id:
        raise rules.Forbidden(_("四眼原则：提议人不能审批自己提议的采购决定，请由另一位审批人处理"), field="")


def _pending(session: Session, decision_id: int, actor: Actor) -> Decision:
    """The decision awaiting this actor's decision, its row locked until the commit (PostgreSQL): of two
    approvers deciding at once, the second finds it decided."""
    decision = get_decision(session, decision_id=decision_id, lock=True)
    _decider(session, decision, actor)
    if decision.state != DecisionState.proposed:
        raise Conflict(
            _(
                "采购决定 %(id)s 已是“%(state)s”，只有待审批的决定可以审批",
                id=decision.id,
                state=label(decision.state, kind="decision_state"),
            ),
            field="state",
        )
    return decision


def _comment(comment: Any, *, required: bool) -> str:
    text = comment.strip() if isinstance(comment, str) else ""
    if required and not text:
        raise InvalidInput(_("请写明意见（退回或否决时必填）"), field="comment")
    if len(text) > MAX_TEXT or "\x00" in text:
        raise InvalidInput(_("意见不超过 %(most)s 字，且不能包含空字符", most=MAX_TEXT), field="comment")
    return text


def _decide(decision: Decision, actor: Actor, state: DecisionState, comment: str) -> None:
    decision.state = state
    decision.decided_by_id = actor.id
    decision.decided_by_name = actor.name[:60]
    decision.decided_at = clock.now()
    decision.decision_comment = comment


# The decision's own fields its snapshot keeps as stored (the id lists copied, dates written out below).
OWN_FIELDS = ("id", "case_id", "scope", "term_months", "justification", "single_source_reason")
ID_LISTS = ("offer_ids", "provider_ids", "quote_ids")


def _iso(value: Any) -> str | None:
    """A date or a time (aware) as ISO text, None as None."""
    return None if value is None else (aware(value) if isinstance(value, datetime) else value).isoformat()


def own_fields(decision: Decision) -> dict[str, Any]:
    """The decision's own fields as frozen in its snapshot."""
    fields = {name: getattr(decision, name) for name in OWN_FIELDS}
    fields.update({name: list(getattr(decision, name)) for name in ID_LISTS})
    fields.update(
        proposed_by=decision.proposed_by_name,
        proposed_at=_iso(decision.proposed_at),
        approved_by=decision.decided_by_name,
        approved_at=_iso(decision.decided_at),
        comment=decision.decision_comment,
        valid_from=_iso(decision.valid_from),
        valid_until=_iso(decision.valid_until),
    )
    return fields


@atomic
def approve(session: Session, *, decision_id: int, actor: Actor, comment: Any = "") -> Decision:
    """Approve a proposed decision (a second person, approver or admin): the evidence must be unchanged and
    every risk acceptance still hold; freezes the snapshot, starts the term, sets the providers approved."""
    decision = _pending(session, decision_id, actor)
    text = _comment(comment, required=False)
    today = clock.business_today()
    evidence = decision_evidence(session, decision, today)
    changed = changes_from(decision, evidence)
    if changed:
        raise Conflict(
            [FieldError("evidence", _("提议后证据已变化，请重新提议：%(what)s", what=joined(changed)))]
        )
    acceptances = acceptances_of(session, decision.id)  # type: ignore[arg-type]
    gone = [acceptance for acceptance in acceptances if lapsed(acceptance, today)]
    if gone:
        raise Conflict(
            [
                FieldError(
                    "risk_acceptances",
                    _(
                        "风险接受 %(finding)s 已于 %(day)s 到期，请重新提议",
                        finding=finding_key(acceptance.rule_id, acceptance.subject),
                        day=acceptance.until.isoformat(),
                    ),
                )
                for acceptance in gone
            ]
        )
    rules.check_still_choosable(session, decision)
    providers = list(session.exec(select(Provider).where(col(Provider.id).in_(decision.provider_ids))))
    set_actor(session, user_id=actor.id, name=actor.name)
    _decide(decision, actor, DecisionState.approved, text)
    decision.valid_from = today
    decision.valid_until = rules.add_months(today, decision.term_months)
    snapshot = {"evidence": evidence, "decision": own_fields(decision)}
    decision.snapshot = snapshot
    decision.snapshot_sha256 = snapshot_sha256(snapshot)
    session.add(decision)
    for provider in providers:
        provider.status = ProviderStatus.approved
        provider.updated_at = clock.now()
        session.add(provider)
    _commit(session)
    session.refresh(decision)
    return decision


@atomic
def return_decision(session: Session, *, decision_id: int, actor: Actor, comment: Any) -> Decision:
    """Send a proposed decision back with comments (required); a fresh proposal replaces it."""
    return _close(session, decision_id, actor, comment, DecisionState.returned)


@atomic
def reject(session: Session, *, decision_id: int, actor: Actor, comment: Any) -> Decision:
    """Reject a proposed decision for good, saying why (required)."""
    return _close(session, decision_id, actor, comment, DecisionState.rejected)


def _close(session: Session, decision_id: int, actor: Actor, comment: Any, state: DecisionState) -> Decision:
    decision = _pending(session, decision_id, actor)
    text = _comment(comment, required=True)
    set_actor(session, user_id=actor.id, name=actor.name)
    _decide(decision, actor, state, text)
    session.add(decision)
    _commit(session)
    session.refresh(decision)
    return decision


# --- the API's shape -----------------------------------------------------------------------------------


def decision_dict(session: Session, decision: Decision, lang: str = "zh") -> dict[str, Any]:
    """A decision as JSON-plain data: its fields, state (and effective state), proposer, approver, snapshot
    hash, conditions and risk acceptances, labels in `lang`."""
    today = clock.business_today()
    acceptances = acceptances_of(session, decision.id)  # type: ignore[arg-type]
    effective = effective_state(decision, today, acceptances)
    fields = own_fields(decision)
    return {
        **{
            key: value
            for key, value in fields.items()
            if key not in ("approved_by", "approved_at", "comment")
        },
        "state": DecisionState(decision.state).value,
        "effective_state": effective,
        "state_label": label(effective, lang, kind="decision_state"),
        "proposed_by_id": decision.proposed_by_id,
        "decided_by": decision.decided_by_name or None,
        "decided_by_id": decision.decided_by_id,
        "decided_at": fields["approved_at"],
        "decision_comment": decision.decision_comment,
        "approved_by": decision.decided_by_name if decision.state == DecisionState.approved else None,
        "evidence_sha256": decision.evidence_sha256,
        "snapshot_sha256": decision.snapshot_sha256 or None,
        "conditions": [
            {
                "id": condition.id,
                "text": condition.text,
                "due_on": _iso(condition.due_on),
                "met_at": _iso(condition.met_at),
                "met_by": condition.met_by_name or None,
            }
            for condition in conditions_of(session, decision.id)  # type: ignore[arg-type]
        ],
        "risk_acceptances": [
            {
                "id": acceptance.id,
                "provider_id": acceptance.provider_id,
                "finding_id": acceptance.finding_id,
                "rule_id": acceptance.rule_id,
                "subject": acceptance.subject,
                "severity": acceptance.severity,
                "message": acceptance.message_en if lang == "en" else acceptance.message_zh,
                "reason": acceptance.reason,
                "accepted_by": acceptance.accepted_by_name,
                "until": acceptance.until.isoformat(),
                "lapsed": lapsed(acceptance, today),
            }
            for acceptance in acceptances
        ],
    }
