"""Procurement cases: store questionnaire answers step by step, advise on them, keep checklist ticks."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import sqlalchemy as sa
from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.advice import checklist, questionnaire
from app.advice.answers import Answers, WorkloadKind, validate_answers, validate_step
from app.advice.engine import Advice, advise, confirm_counts, measure_first_counts
from app.advice.knowledge import load
from app.core import clock
from app.core.errors import FieldError, InvalidInput, NotFound
from app.core.records import get_or_404
from app.core.versions import VersionedKind, check_version, commit_versioned
from app.credentials.verdicts import verdicts_of
from app.models import AuditEntry, Provider
from app.models.cases import ChecklistTick, ProcurementCase
from app.models.checks import CheckRun
from app.models.trials import BenchRun, RunState
from app.models.watch import ChangeEvent
from app.registry import offer_snapshot

logger = logging.getLogger(__name__)


MAX_LIST = 200


@dataclass(frozen=True)
class Actor:
    """Who is acting (recorded as owner / ticked_by)."""

    id: int | None
    name: str


def get_case(session: Session, *, case_id: int) -> ProcurementCase:
    """One case, or NotFound."""
    return get_or_404(session, ProcurementCase, case_id, _("选型案例 %(id)s 不存在", id=case_id), field="id")


def list_cases(session: Session, *, limit: int = MAX_LIST) -> list[ProcurementCase]:
    """Cases, most recently changed first."""
    stmt = select(ProcurementCase).order_by(
        col(ProcurementCase.updated_at).desc(), col(ProcurementCase.id).desc()
    )
    return list(session.exec(stmt.limit(limit)).all())


def case_history(session: Session, *, case_id: int) -> list[AuditEntry]:
    """Audit entries of the case and of its checklist ticks, newest first."""
    tick_ids = select(ChecklistTick.id).where(ChecklistTick.case_id == case_id)
    stmt = (
        select(AuditEntry)
        .where(
            sa.or_(
                sa.and_(AuditEntry.entity == ProcurementCase.__tablename__, AuditEntry.entity_id == case_id),
                sa.and_(
                    AuditEntry.entity == ChecklistTick.__tablename__, col(AuditEntry.entity_id).in_(tick_ids)
                ),
            )
        )
        .order_by(col(AuditEntry.id).desc())
        .limit(MAX_LIST)
    )
    return list(session.exec(stmt).all())


def answers_of(case: ProcurementCase) -> Answers:
    """The validated answers of a complete case."""
    return validate_answers(case.answers)


def _default_title(kind: WorkloadKind) -> str:
    label = load("scenarios")["kinds"][kind.value]["label_zh"]
    return f"{label} {clock.business_today():%Y-%m-%d}"


def _dump(section: Any) -> dict[str, Any]:
    return section.model_dump(mode="json", exclude_none=True)


CASE_VERSIONS = VersionedKind(
    ProcurementCase,
    "案例",
    "case",
    lambda case_id: (AuditEntry.entity == ProcurementCase.__tablename__) & (AuditEntry.entity_id == case_id),
)


def _check_version(session: Session, case: ProcurementCase, expected: Any) -> int:
    return check_version(session, CASE_VERSIONS, case, expected)


def _touch(case: ProcurementCase) -> None:
    case.version += 1
    case.updated_at = clock.now()


def _commit(session: Session, *, case_id: int | None = None, expected: int | None = None) -> None:
    """Commit; a version another writer committed first is a 409."""
    try:
        commit_versioned(session, CASE_VERSIONS, case_id, expected)
    except Exception:
        session.rollback()
        raise


def start_case(session: Session, *, workload: dict[str, Any], owner: Actor) -> ProcurementCase:
    """Create a draft case from the questionnaire's first step."""
    section = validate_step("workload", workload, {})
    raw = {"workload": _dump(section)}
    case = ProcurementCase(
        title=section.title or _default_title(section.kind),
        workload_kind=section.kind.value,
        answers=raw,
        step=questionnaire.neighbour(raw, "workload", 1) or "workload",
        owner_id=owner.id,
        owner_name=owner.name,
    )
    session.add(case)
    _commit(session)
    return case


def save_step(
    session: Session, *, case_id: int, step: str, data: dict[str, Any], version: Any
) -> ProcurementCase:
    """Validate one step's section (and the kind rules about it) and store it; the version must match."""
    case = get_case(session, case_id=case_id)
    if step not in questionnaire.STEP_KEYS:
        raise NotFound(_("没有这一步：%(step)s", step=step), field="step")
    expected = _check_version(session, case, version)
    data, derived = questionnaire.with_defaults(case.answers, step, data)
    section = validate_step(step, data, case.answers)
    raw = questionnaire.with_derived({**case.answers, step: _dump(section)}, step, derived)
    case.answers = raw
    if step == "workload":
        case.workload_kind = section.kind.value  # type: ignore[attr-defined]
        case.title = section.title or case.title  # type: ignore[attr-defined]
    case.step = questionnaire.neighbour(raw, step, 1) or step
    case.complete = case.complete and _is_valid(raw)
    _touch(case)
    _commit(session, case_id=case_id, expected=expected)
    return case


def _is_valid(raw: dict[str, Any]) -> bool:
    try:
        validate_answers(questionnaire.pruned(raw))
    except InvalidInput:
        return False
    return True


def finish_case(session: Session, *, case_id: int, version: Any) -> ProcurementCase:
    """Validate every answered step together and mark the case complete."""
    case = get_case(session, case_id=case_id)
    expected = _check_version(session, case, version)
    raw = questionnaire.pruned(case.answers)
    answers = validate_answers(raw)
    # Only the sections this kind asks: a training case stores no inference defaults (latency budget ...).
    case.answers = questionnaire.pruned(answers.model_dump(mode="json", exclude_none=True))
    case.complete = True
    case.step = "done"
    _touch(case)
    _commit(session, case_id=case_id, expected=expected)
    return case


def create_case(session: Session, *, answers: Any, owner: Actor, title: str | None = None) -> ProcurementCase:
    """Create a complete case from a whole answers document (API and CLI)."""
    validated = validate_answers(answers)
    raw = validated.model_dump(mode="json", exclude_none=True)
    case = ProcurementCase(
        title=title or validated.workload.title or _default_title(validated.kind),
        workload_kind=validated.kind.value,
        answers=questionnaire.pruned(raw),
        step="done",
        complete=True,
        owner_id=owner.id,
        owner_name=owner.name,
    )
    session.add(case)
    _commit(session)
    return case


def delete_case(session: Session, *, case_id: int, version: Any) -> None:
    """Delete a case and its ticks (audited)."""
    case = get_case(session, case_id=case_id)
    expected = _check_version(session, case, version)
    for tick in session.exec(select(ChecklistTick).where(ChecklistTick.case_id == case_id)).all():
        session.delete(tick)
    session.delete(case)
    _commit(session, case_id=case_id, expected=expected)


def evidence_since(session: Session, *, case: ProcurementCase) -> dict[str, int]:
    """Runs (executed or uploaded) and check runs that changed something since the case was saved.

    A check run counts when it is the provider's first or recorded a change (a finding added or cleared, a
    severity or verdict changed): the daily re-check that finds what it found yesterday is not new evidence.
    One statement.
    """
    since = case.updated_at
    finished = col(BenchRun.finished_at)
    landed = sa.or_(finished > since, sa.and_(finished.is_(None), col(BenchRun.created_at) > since))
    runs = (
        sa.select(sa.func.count())
        .select_from(BenchRun)
        .where(BenchRun.state == RunState.succeeded, col(BenchRun.offer_id).is_not(None), landed)
        .scalar_subquery()
    )
    # runs that recorded a change: found through the events' own time (indexed; events are few)
    changed = (
        sa.select(sa.func.count(sa.distinct(ChangeEvent.check_run_id)))
        .where(col(ChangeEvent.created_at) > since, col(ChangeEvent.check_run_id).is_not(None))
        .scalar_subquery()
    )
    # providers checked for the first time: one index seek per provider, however many runs there are
    earlier: Any = sa.orm.aliased(CheckRun)
    first_id = (
        sa.select(sa.func.min(earlier.id))
        .where(earlier.provider_id == Provider.id)
        .correlate(Provider)
        .scalar_subquery()
    )
    first = (
        sa.select(sa.func.count())
        .select_from(Provider)
        .join(CheckRun, col(CheckRun.id) == first_id)
        .where(col(CheckRun.created_at) > since)
        .correlate(None)
        .scalar_subquery()
    )
    run_count, changed_count, first_count = session.execute(sa.select(runs, changed, first)).one()
    return {"runs": int(run_count or 0), "check_runs": int(changed_count or 0) + int(first_count or 0)}


def resave_case(session: Session, *, case_id: int, version: Any) -> ProcurementCase:
    """Save a complete case again, unchanged, so that it stands on the evidence there is now."""
    case = get_case(session, case_id=case_id)
    expected = _check_version(session, case, version)
    _touch(case)
    _commit(session, case_id=case_id, expected=expected)
    return case


def ticks_of(session: Session, *, case_id: int) -> list[checklist.Tick]:
    """The case's hand ticks."""
    rows = session.exec(select(ChecklistTick).where(ChecklistTick.case_id == case_id)).all()
    return [
        checklist.Tick(
            item_key=row.item_key,
            provider_id=row.provider_id,
            done=row.done,
            by=row.ticked_by,
            at=row.ticked_at,
            comment=row.comment,
            evidence_url=row.evidence_url,
        )
        for row in rows
    ]


def advise_answers(session: Session, *, answers: Answers, today: date | None = None) -> Advice:
    """Advice for answers that are not stored (the CLI, the API's answers check)."""
    today = today or clock.business_today()
    advice = advise(answers, offer_snapshot.offer_table(session, today=today), today=today)
    advice.read_verdicts = partial(verdicts_of, session)
    return advice


def advise_case(
    session: Session,
    *,
    case_id: int,
    today: date | None = None,
    check_link: Callable[[int], str | None] | None = None,
    run_link: Callable[[int], str | None] | None = None,
) -> Advice:
    """Advice for a stored, complete case (its hand ticks included)."""
    case = get_case(session, case_id=case_id)
    if not case.complete:
        step = questionnaire.first_invalid(case.answers) or case.step
        raise InvalidInput(
            f"问卷尚未完成，请先完成“{step}”一步"
            f" (the questionnaire is not finished; continue at step {step})",
            field="step",
        )
    today = today or clock.business_today()
    offers = offer_snapshot.offer_table(session, today=today, check_link=check_link, run_link=run_link)
    advice = advise(answers_of(case), offers, today=today, ticks=ticks_of(session, case_id=case_id))
    advice.read_verdicts = partial(verdicts_of, session)  # afresh: lookups and footers are not in the table
    return advice


def provider_checklist(
    advice: Advice, *, provider_id: int, ticks: list[checklist.Tick]
) -> list[checklist.Entry]:
    """A case's checklist for one provider, auto-ticked from that provider's findings and measurements."""
    own = advice.ranked.of_provider(provider_id)
    if not own:
        raise NotFound(_("供应商 %(id)s 没有可评估的套餐", id=provider_id), field="provider_id")
    offers = [a.offer for a in own]
    office_rtts = [a.office_rtt_ms for a in own if a.office_rtt_ms]
    extra = {"office_rtt_ms": min(office_rtts)} if office_rtts else {}
    return checklist.build(
        advice.needs,
        provider=offers[0].provider,
        offers=offers,
        ticks=ticks,
        extra_values=extra,
        measure_first=measure_first_counts(own),
        to_confirm=confirm_counts(own),
    )


def _clean_url(value: Any) -> str | None:
    text = (value or "").strip() if isinstance(value, str) else None
    if not text:
        return None
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc or len(text) > 500:
        raise InvalidInput(
            "证据链接须为 http(s):// 开头、不超过 500 字符的网址"
            " (evidence link must be an http(s) URL up to 500 characters)",
            field="evidence_url",
        )
    return text


def tick_item(
    session: Session,
    *,
    case_id: int,
    item_key: str,
    provider_id: int | None,
    done: bool,
    comment: str,
    evidence_url: str | None,
    actor: Actor,
) -> ChecklistTick:
    """Tick (or untick) a checklist item by hand, recording who, when, why and the evidence link."""
    case = get_case(session, case_id=case_id)
    errors = []
    if item_key not in checklist.item_keys():
        errors.append(FieldError("item_key", _("没有这一核查项：%(key)s", key=item_key)))
    comment = (comment or "").strip()
    if done and not comment:
        errors.append(FieldError("comment", _("手动打勾须写明依据")))
    if len(comment) > 2000:
        errors.append(FieldError("comment", _("说明不超过 %(most)s 字", most=2000)))
    try:
        url = _clean_url(evidence_url)
    except InvalidInput as exc:
        errors.extend(exc.errors)
        url = None
    if provider_id is not None and session.get(Provider, provider_id) is None:
        errors.append(FieldError("provider_id", _("供应商 %(id)s 不存在", id=provider_id)))
    if errors:
        raise InvalidInput(errors)
    tick = session.exec(
        select(ChecklistTick).where(
            ChecklistTick.case_id == case.id,
            ChecklistTick.item_key == item_key,
            ChecklistTick.provider_id == provider_id
            if provider_id is not None
            else col(ChecklistTick.provider_id).is_(None),
        )
    ).first()
    if tick is None:
        tick = ChecklistTick(case_id=case.id, item_key=item_key, provider_id=provider_id)  # type: ignore[arg-type]
        session.add(tick)
    tick.done = done
    tick.comment = comment
    tick.evidence_url = url
    tick.ticked_by_id = actor.id
    tick.ticked_by = actor.name
    tick.ticked_at = clock.now()
    _commit(session)
    return tick
