"""Check runs: gather facts, run every vetting rule on a provider, store the verdict and its findings."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from typing import Any

from flask_babel import gettext as _
from pydantic import BaseModel
from sqlalchemy import case
from sqlmodel import Session, col, func, or_, select

from app.core import clock
from app.core.jobs import JobCancelled, background, job_cancelled, report_progress
from app.credentials.facts import gather_facts_with_errors
from app.credentials.watch import record_check_changes
from app.models import Datacenter, Provider
from app.models.checks import CheckRun, StoredFinding
from app.models.latest_runs import POINTER, is_latest_run, latest_run_ids
from app.registry.list_query import parse_list_query
from app.registry.providers import get_provider
from app.vetting.findings import (
    RULES,
    Finding,
    RuleContext,
    Severity,
    Verdict,
    load_rules,
    run_rules,
    verdict,
)
from app.vetting.rules._common import knowledge_version, load_knowledge

FACT_ERROR_RULE = "facts.unavailable"


@dataclass
class Evaluation:
    """The outcome of running the rules once, before it is stored."""

    provider: Provider
    today: date
    findings: list[Finding]
    verdict: Verdict
    fact_names: list[str]
    fact_errors: dict[str, str]
    rule_ids: list[str]
    rules_version: str


def _fact_error_finding(name: str, error: str) -> Finding:
    """A warning that one fact source failed, so the verdict is not taken as complete."""
    return Finding(
        rule_id=FACT_ERROR_RULE,
        severity=Severity.warning,
        message_zh=f"未能取得核查依据“{name}”：{error}。本次结论可能不完整。",
        message_en=f"Could not gather the facts '{name}': {error}. This verdict may be incomplete.",
        how_to_verify_zh="查看应用日志，修复后重新运行核查。",
        how_to_verify_en="Check the application log, fix the cause and run the check again.",
        subject=f"facts:{name}",
        evidence=({"kind": "fact_source", "name": name, "error": error},),
    )


def evaluate(session: Session, *, provider_id: int, today: date | None = None) -> Evaluation:
    """Run every rule on one provider (no network: facts come from stored data) without storing."""
    provider = get_provider(session, provider_id=provider_id)
    facts, fact_errors = gather_facts_with_errors(session, provider)
    return evaluate_loaded(provider, facts, fact_errors, today or clock.business_today())


def evaluate_loaded(
    provider: Provider, facts: dict[str, Any], fact_errors: dict[str, str], today: date
) -> Evaluation:
    """Run every rule on a loaded provider with its gathered facts (what evaluate and batches share)."""
    context = RuleContext(provider=provider, today=today, knowledge=load_knowledge(), facts=facts)
    findings = run_rules(context)
    findings += [_fact_error_finding(name, error) for name, error in sorted(fact_errors.items())]
    return Evaluation(
        provider=provider,
        today=today,
        findings=findings,
        verdict=verdict(findings),
        fact_names=sorted(facts),
        fact_errors=fact_errors,
        rule_ids=sorted(load_rules()),
        rules_version=knowledge_version(),
    )


def finding_row(finding: Finding, *, check_run_id: int, provider_id: int, position: int) -> dict[str, Any]:
    """The stored_finding column values of one finding of a run."""
    entry = RULES.get(finding.rule_id)
    return {
        "check_run_id": check_run_id,
        "provider_id": provider_id,
        "position": position,
        "rule_id": finding.rule_id,
        "red_flag": entry.red_flag if entry else None,
        "severity": finding.severity.value,
        "subject": finding.subject[:80],
        "message_zh": finding.message_zh,
        "message_en": finding.message_en,
        "how_to_verify_zh": finding.how_to_verify_zh,
        "how_to_verify_en": finding.how_to_verify_en,
        "evidence": list(finding.evidence),
    }


def _stored(finding: Finding, *, run: CheckRun, position: int) -> StoredFinding:
    return StoredFinding(
        **finding_row(finding, check_run_id=run.id, provider_id=run.provider_id, position=position)
    )


def run_row(evaluation: Evaluation, *, actor: tuple[int | None, str], job_id: int | None) -> dict[str, Any]:
    """The check_run column values of one evaluation (all but id and created_at)."""
    counts = {severity: 0 for severity in Severity}
    for finding in evaluation.findings:
        counts[finding.severity] += 1
    return {
        "provider_id": evaluation.provider.id,
        "verdict": evaluation.verdict.value,
        "blockers": counts[Severity.blocker],
        "warnings": counts[Severity.warning],
        "infos": counts[Severity.info],
        "checked_on": evaluation.today,
        "provider_version": evaluation.provider.version,
        "rules_version": evaluation.rules_version,
        "rule_ids": evaluation.rule_ids,
        "fact_names": evaluation.fact_names,
        "fact_errors": evaluation.fact_errors,
        "job_id": job_id,
        "created_by_id": actor[0],
        "created_by_name": actor[1],
    }


def session_actor(session: Session, user: Any = None) -> tuple[int | None, str]:
    """Who a stored run is by: the user given, else the session's actor (a job's creator), else system."""
    return (user.id, user.username) if user is not None else session.info.get("actor", (None, "system"))


def store_evaluation(
    session: Session, evaluation: Evaluation, *, user: Any = None, job_id: int | None = None
) -> CheckRun:
    """Store one evaluation as a CheckRun with its findings and commit."""
    run = CheckRun(**run_row(evaluation, actor=session_actor(session, user), job_id=job_id))
    session.add(run)
    session.flush()  # latest_runs' after_insert hook advances provider.latest_check_run_id in this flush
    session.add_all(
        _stored(finding, run=run, position=index) for index, finding in enumerate(evaluation.findings)
    )
    session.commit()
    record_check_changes(session, run)  # what changed since the previous run, as change events
    return run


def run_check(
    session: Session,
    *,
    provider_id: int,
    user: Any = None,
    today: date | None = None,
    job_id: int | None = None,
) -> CheckRun:
    """Run every rule on a provider and store the run (verdict, counts, who, when) with its findings."""
    return store_evaluation(
        session, evaluate(session, provider_id=provider_id, today=today), user=user, job_id=job_id
    )


def latest_check(session: Session, *, provider_id: int) -> CheckRun | None:
    """The provider's most recent check run, if any (its pointer, app.models.latest_runs)."""
    return session.exec(select(CheckRun).where(col(CheckRun.id).in_(latest_run_ids([provider_id])))).first()


def run_findings(session: Session, *, check_run_id: int) -> list[StoredFinding]:
    """The findings of one run, most severe first."""
    return list(
        session.exec(
            select(StoredFinding)
            .where(StoredFinding.check_run_id == check_run_id)
            .order_by(col(StoredFinding.position))
        ).all()
    )


def latest_findings(session: Session, *, provider_id: int) -> list[StoredFinding]:
    """The findings of the provider's most recent run (empty when never checked)."""
    run = latest_check(session, provider_id=provider_id)
    return run_findings(session, check_run_id=run.id) if run else []


def check_history(session: Session, *, provider_id: int, limit: int = 50) -> list[CheckRun]:
    """The provider's check runs, newest first."""
    return list(
        session.exec(
            select(CheckRun)
            .where(CheckRun.provider_id == provider_id)
            .order_by(col(CheckRun.id).desc())
            .limit(limit)
        ).all()
    )


def get_run(session: Session, *, provider_id: int, check_run_id: int) -> CheckRun | None:
    """One run of this provider (None when the id belongs to no run of it)."""
    run = session.get(CheckRun, check_run_id)
    return run if run is not None and run.provider_id == provider_id else None


def finding_dict(stored: StoredFinding) -> dict[str, Any]:
    """A stored finding in the JSON shape of Finding.to_dict, plus its red-flag number."""
    return {
        "rule_id": stored.rule_id,
        "red_flag": stored.red_flag,
        "severity": stored.severity,
        "message_zh": stored.message_zh,
        "message_en": stored.message_en,
        "how_to_verify_zh": stored.how_to_verify_zh,
        "how_to_verify_en": stored.how_to_verify_en,
        "subject": stored.subject,
        "evidence": list(stored.evidence),
    }


def never_checked() -> Any:
    """Providers without a check run (their pointer is empty)."""
    return POINTER.is_(None)


@background("vetting.check", title_zh="资质核查", title_en="Credential check", idempotent=True)
def check_job(session: Session, job: Any, *, provider_id: int) -> dict[str, Any]:
    """Job kind "vetting.check": run_check on the queue; the result names the stored run."""
    report_progress(session, job, done=0, total=1, current="rules")
    run = run_check(session, provider_id=provider_id, job_id=job.id)
    report_progress(session, job, done=1, total=1, current="stored")
    return {
        "check_run_id": run.id,
        "provider_id": run.provider_id,
        "verdict": run.verdict,
        "blockers": run.blockers,
        "warnings": run.warnings,
        "infos": run.infos,
    }


# ---------------------------------------------------------------- overview across providers
SEVERITY_ORDER = {Severity.blocker.value: 0, Severity.warning.value: 1, Severity.info.value: 2}
VERDICT_ORDER = {Verdict.failed.value: 0, Verdict.needs_review.value: 1, Verdict.passed.value: 2}
VIEWS = ("providers", "findings")


class OverviewQuery(BaseModel):
    """Filters of the findings overview: one row per provider (latest run) or per finding."""

    view: str = "providers"
    rule: str | None = None
    severity: str | None = None
    verdict: str | None = None
    province: str | None = None
    q: str | None = None
    page: int = 1
    per_page: int = 20


@dataclass
class OverviewPage:
    """One page of overview rows with the numbers needed for pagination."""

    rows: list[Any]
    total: int
    page: int
    per_page: int
    never_checked: int
    findings_by_run: dict[int, list[StoredFinding]]

    @property
    def pages(self) -> int:
        """Number of pages (at least 1)."""
        return max(1, math.ceil(self.total / self.per_page))


def rule_choices() -> list[str]:
    """Every rule id a finding can carry (registered rules plus the fact-source warning)."""
    return sorted({*load_rules(), FACT_ERROR_RULE})


def parse_overview_query(params: dict[str, Any]) -> OverviewQuery:
    """Validate overview parameters; every bad one is named with what is accepted."""
    allowed = {
        "view": list(VIEWS),
        "rule": rule_choices(),
        "severity": list(SEVERITY_ORDER),
        "verdict": list(VERDICT_ORDER),
    }
    return parse_list_query(OverviewQuery, params, allowed)


def _provider_conditions(query: OverviewQuery) -> list[Any]:
    conditions: list[Any] = []
    if query.province:
        in_datacenter = (
            select(Datacenter.id)
            .where(Datacenter.provider_id == Provider.id, Datacenter.province == query.province)
            .exists()
        )
        conditions.append(or_(Provider.registered_province == query.province, in_datacenter))
    if query.q:
        like = f"%{query.q.strip()}%"
        conditions.append(or_(col(Provider.legal_name).ilike(like), col(Provider.short_name).ilike(like)))
    if query.verdict:
        conditions.append(CheckRun.verdict == query.verdict)
    return conditions


def _finding_conditions(query: OverviewQuery) -> list[Any]:
    conditions: list[Any] = []
    if query.rule:
        conditions.append(StoredFinding.rule_id == query.rule)
    if query.severity:
        conditions.append(StoredFinding.severity == query.severity)
    return conditions


def _page(session: Session, stmt: Any, order: list[Any], query: OverviewQuery) -> tuple[int, list[Any]]:
    total = session.exec(select(func.count()).select_from(stmt.subquery())).one()
    rows = session.exec(
        stmt.order_by(*order).offset((query.page - 1) * query.per_page).limit(query.per_page)
    ).all()
    return total, list(rows)


def findings_overview(session: Session, *, query: OverviewQuery) -> OverviewPage:
    """Latest verdicts (view=providers) or their findings (view=findings), filtered and paged.

    Four statements whatever the number of rows: count, page, the page's findings, never-checked count.
    """
    base = _provider_conditions(query)
    verdict_rank = case(VERDICT_ORDER, value=CheckRun.verdict, else_=9)
    severity_rank = case(SEVERITY_ORDER, value=StoredFinding.severity, else_=9)
    findings_by_run: dict[int, list[StoredFinding]] = {}
    if query.view == "findings":
        stmt = (
            select(StoredFinding, CheckRun, Provider)
            .join(CheckRun, col(CheckRun.id) == StoredFinding.check_run_id)
            .join(Provider, is_latest_run())
            .where(*base, *_finding_conditions(query))
        )
        order = [severity_rank, col(Provider.legal_name), col(Provider.id), col(StoredFinding.position)]
        total, rows = _page(session, stmt, order, query)
    else:
        stmt = select(CheckRun, Provider).join(Provider, is_latest_run()).where(*base)
        finding_filters = _finding_conditions(query)
        if finding_filters:
            stmt = stmt.where(
                select(StoredFinding.id)
                .where(StoredFinding.check_run_id == CheckRun.id, *finding_filters)
                .exists()
            )
        order = [
            verdict_rank,
            col(CheckRun.blockers).desc(),
            col(CheckRun.warnings).desc(),
            col(Provider.legal_name),
        ]
        total, rows = _page(session, stmt, order, query)
        run_ids = [run.id for run, _provider in rows]
        if run_ids:
            for finding in session.exec(
                select(StoredFinding)
                .where(col(StoredFinding.check_run_id).in_(run_ids))
                .order_by(col(StoredFinding.position))
            ).all():
                findings_by_run.setdefault(finding.check_run_id, []).append(finding)
    never = session.exec(select(func.count(col(Provider.id))).where(never_checked())).one()
    return OverviewPage(
        rows=rows,
        total=total,
        page=query.page,
        per_page=query.per_page,
        never_checked=never,
        findings_by_run=findings_by_run,
    )


@background(
    "vetting.check_all",
    title_zh="批量资质核查",
    title_en="Credential check of all providers",
    idempotent=True,
)
def check_all_job(
    session: Session,
    job: Any,
    *,
    only_unchecked: bool = False,
    today: str | None = None,
    provider_ids: list[int] | None = None,
) -> dict[str, Any]:
    """Job kind "vetting.check_all": check every provider (or those never checked, or `provider_ids`, e.g. the
    providers an import wrote) in batches, with progress.

    `today` (YYYY-MM-DD) is the day the rules compare dates with (the daily schedule's period); default today.
    """
    stmt = select(Provider.id).order_by(col(Provider.id))
    if only_unchecked:
        stmt = stmt.where(never_checked())
    if provider_ids is not None:
        stmt = stmt.where(col(Provider.id).in_([int(value) for value in provider_ids]))
    provider_ids = list(session.exec(stmt).all())
    day = date.fromisoformat(today) if today else None
    from app.credentials.check_batch import check_providers  # it builds on this module

    def before_chunk(done: int) -> None:
        if job_cancelled(session, job):
            raise JobCancelled(_("已在核查 %(done)s/%(total)s 家后取消", done=done, total=len(provider_ids)))
        current = f"provider {provider_ids[done]}"
        report_progress(session, job, done=done, total=len(provider_ids), current=current)

    batch = check_providers(session, provider_ids, today=day, job_id=job.id, before_chunk=before_chunk)
    report_progress(session, job, done=len(provider_ids), total=len(provider_ids), current="")
    return {"checked": batch.runs, "verdicts": batch.verdicts}
