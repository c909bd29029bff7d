"""Procurement cases: store questionnaire answers step by step, advise on them, keep checklist ticks."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import urlsplit

import sqlalchemy as sa
from pydantic import ValidationError
from sqlalchemy.orm import selectinload
from sqlmodel import Session, col, select

from app.advice import checklist, questionnaire
from app.advice.answers import (
    SECTIONS,
    Answers,
    WorkloadKind,
    kind_errors,
    validate_answers,
    validate_section,
)
from app.advice.engine import Advice, advise
from app.advice.facts import CheckFacts, FindingFacts, LicenceFacts, OfferFacts, ProviderFacts
from app.advice.knowledge import load
from app.models import AuditEntry, Provider
from app.models.cases import ChecklistTick, ProcurementCase
from app.models.enums import CertificationKind
from app.services.errors import FieldError, InvalidInput, NotFound
from app.services.versions import VersionedKind, check_version, commit_versioned

logger = logging.getLogger(__name__)

MAX_LIST = 200


@dataclass(frozen=True)
class Actor:
    """Who is acting (recorded as owner / ticked_by)."""

    id: int | None
    name: str


# ---------------------------------------------------------------- reading cases
def get_case(session: Session, *, case_id: int) -> ProcurementCase:
    """One case, or NotFound."""
    case = session.get(ProcurementCase, case_id)
    if case is None:
        raise NotFound(f"选型案例 {case_id} 不存在 (case not found)", field="id")
    return case


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


# ---------------------------------------------------------------- writing cases
def _default_title(kind: WorkloadKind) -> str:
    label = load("scenarios")["kinds"][kind.value]["label_zh"]
    return f"{label} {datetime.now().astimezone():%Y-%m-%d}"


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
    case.updated_at = datetime.now(UTC)


def _commit(session: Session, *, case_id: int | None = None, expected: int | None = None) -> None:
    """Commit; a version another writer committed first is a 409."""
    try:
        commit_versioned(session, CASE_VERSIONS, case_id, expected)
    except Exception:
        session.rollback()
        raise


def _provisional(raw: dict[str, Any]) -> Answers:
    """Answers built from whatever sections validate, defaults elsewhere, to run the kind rules on."""
    sections: dict[str, Any] = {}
    for name, model in SECTIONS.items():
        try:
            sections[name] = model.model_validate(raw.get(name) or {})
        except ValidationError:
            sections[name] = model.model_construct()
    return Answers.model_construct(**sections)


def start_case(session: Session, *, workload: dict[str, Any], owner: Actor) -> ProcurementCase:
    """Create a draft case from the questionnaire's first step."""
    section = validate_section("workload", workload)
    errors = kind_errors(_provisional({"workload": _dump(section)}), {"workload"})
    if errors:
        raise InvalidInput(errors)
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
        raise NotFound(f"没有这一步：{step} (unknown step)", field="step")
    expected = _check_version(session, case, version)
    section = validate_section(step, data)
    raw = {**case.answers, step: _dump(section)}
    errors = kind_errors(_provisional(raw), {step})
    if errors:
        raise InvalidInput(errors)
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
    case.answers = answers.model_dump(mode="json", exclude_none=True)
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


# ---------------------------------------------------------------- registry facts
def _finding_sources() -> tuple[Any, Any]:
    """latest_check / latest_findings of the credential-check service, when that service exists."""
    try:
        from app.services import checks
    except ImportError:
        return None, None
    return getattr(checks, "latest_check", None), getattr(checks, "latest_findings", None)


def _red_flags() -> dict[str, int | None]:
    from app.vetting.findings import load_rules

    return {rule_id: rule.red_flag for rule_id, rule in load_rules().items()}


def _provider_facts(
    provider: Provider, today: date, findings_of: Any, check_of: Any, flags: dict, link: str | None
) -> ProviderFacts:
    licences = tuple(
        LicenceFacts.from_record(
            number_raw=licence.number_raw,
            business_items=licence.business_items,
            b11_includes_resource_collab=licence.b11_includes_resource_collab,
            coverage=licence.coverage,
            status=licence.status,
            issued_on=licence.issued_on,
            expires_on=licence.expires_on,
        )
        for licence in provider.licences
    )
    current = [c for c in provider.certifications if c.expires_on is None or c.expires_on >= today]
    iso = any(c.kind == CertificationKind.iso27001 for c in current)
    levels = [c.level for c in current if c.kind == CertificationKind.dengbao and c.level]
    check = findings = None
    if check_of is not None:
        stored = check_of(provider.id)
        if stored is not None:
            check = CheckFacts(at=getattr(stored, "created_at", None), link=link)
    if findings_of is not None:
        findings = tuple(
            FindingFacts(
                rule_id=row.rule_id,
                severity=getattr(row.severity, "value", row.severity),
                message_zh=row.message_zh,
                message_en=row.message_en,
                red_flag=getattr(row, "red_flag", None) or flags.get(row.rule_id),
                subject=getattr(row, "subject", "") or "",
                link=link,
            )
            for row in findings_of(provider.id)
        )
    return ProviderFacts(
        id=provider.id,  # type: ignore[arg-type]
        name=provider.legal_name,
        short_name=provider.short_name,
        status=getattr(provider.status, "value", provider.status),
        licences=licences,
        iso27001=iso,
        dengbao_level=max(levels) if levels else None,
        discloses_network=provider.discloses_network_topology,
        discloses_storage=provider.discloses_storage_config,
        check=check,
        findings=findings or (),
    )


def offer_facts(
    session: Session, *, today: date | None = None, check_link: Callable[[int], str | None] | None = None
) -> list[OfferFacts]:
    """Every offer in the registry with its provider's facts (licences, certifications, findings).

    `check_link(provider_id)` gives the address of the provider's credential-check page, when there is one.
    """
    today = today or date.today()
    providers = session.exec(
        select(Provider).options(
            selectinload(Provider.licences),
            selectinload(Provider.certifications),
            selectinload(Provider.datacenters),
            selectinload(Provider.offers),
        )
    ).all()
    latest_check, latest_findings = _finding_sources()
    flags = _red_flags() if latest_findings is not None else {}
    check_of = (lambda pid: latest_check(session, provider_id=pid)) if latest_check else None
    findings_of = (lambda pid: latest_findings(session, provider_id=pid)) if latest_findings else None
    facts: list[OfferFacts] = []
    for provider in providers:
        if not provider.offers:
            continue
        link = check_link(provider.id) if check_link else None  # type: ignore[arg-type]
        pfacts = _provider_facts(provider, today, findings_of, check_of, flags, link)
        datacenters = {dc.id: dc for dc in provider.datacenters}
        for offer in provider.offers:
            dc = datacenters.get(offer.datacenter_id) if offer.datacenter_id else None
            facts.append(
                OfferFacts(
                    id=offer.id,  # type: ignore[arg-type]
                    provider=pfacts,
                    name=offer.name,
                    offer_kind=getattr(offer.offer_kind, "value", offer.offer_kind),
                    gpu_model=offer.gpu_model,
                    gpus_per_node=offer.gpus_per_node,
                    gpu_memory_gb=offer.gpu_memory_gb,
                    intranet_gbps=offer.intranet_gbps,
                    rdma_type=getattr(offer.rdma_type, "value", offer.rdma_type),
                    rdma_gbps=offer.rdma_gbps,
                    public_mbps=offer.public_mbps,
                    bandwidth_type=getattr(offer.bandwidth_type, "value", offer.bandwidth_type),
                    storage_type=getattr(offer.storage_type, "value", offer.storage_type),
                    storage_capacity_gb=offer.storage_capacity_gb,
                    nominal_iops=offer.nominal_iops,
                    price_gpu_hour_cny=offer.price_gpu_hour_cny,
                    price_month_cny=offer.price_month_cny,
                    datacenter_name=dc.name if dc else None,
                    datacenter_province=dc.province if dc else None,
                    datacenter_city=dc.city if dc else None,
                )
            )
    return facts


# ---------------------------------------------------------------- advice and checklist
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
    """Advice for answers that are not stored (the CLI)."""
    return advise(answers, offer_facts(session, today=today), today=today)


def advise_case(
    session: Session,
    *,
    case_id: int,
    today: date | None = None,
    check_link: Callable[[int], str | None] | None = None,
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
    offers = offer_facts(session, today=today, check_link=check_link)
    return advise(answers_of(case), offers, today=today, ticks=ticks_of(session, case_id=case_id))


def provider_checklist(
    advice: Advice, *, provider_id: int, ticks: list[checklist.Tick]
) -> list[checklist.Entry]:
    """A case's checklist for one provider, auto-ticked from that provider's findings and measurements."""
    offers = [a.offer for a in advice.ranked if a.offer.provider.id == provider_id]
    if not offers:
        raise NotFound(f"供应商 {provider_id} 没有可评估的套餐 (provider has no offers)", field="provider_id")
    office_rtts = [
        a.office_rtt_ms for a in advice.ranked if a.offer.provider.id == provider_id and a.office_rtt_ms
    ]
    extra = {"office_rtt_ms": min(office_rtts)} if office_rtts else {}
    return checklist.build(
        advice.needs, provider=offers[0].provider, offers=offers, ticks=ticks, extra_values=extra
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
        errors.append(FieldError("item_key", f"没有这一核查项：{item_key} (unknown checklist item)"))
    comment = (comment or "").strip()
    if done and not comment:
        errors.append(FieldError("comment", "手动打勾须写明依据 (a comment saying why is required)"))
    if len(comment) > 2000:
        errors.append(FieldError("comment", "说明不超过 2000 字 (at most 2000 characters)"))
    try:
        url = _clean_url(evidence_url)
    except InvalidInput as exc:
        errors.extend(exc.errors)
        url = None
    if provider_id is not None and session.get(Provider, provider_id) is None:
        errors.append(FieldError("provider_id", f"供应商 {provider_id} 不存在 (provider not found)"))
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
    tick.ticked_at = datetime.now(UTC)
    _commit(session)
    return tick
