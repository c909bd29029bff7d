"""`demo load` fills what a newcomer sees: verdicts, a demo run, a campaign, events, a case and a report."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

from sqlmodel import Session, func, select

from app.models import Provider, User
from app.models.campaigns import BenchCampaign
from app.models.cases import ProcurementCase
from app.models.checks import CheckRun, StoredFinding
from app.models.decisions import Decision
from app.models.jobs import Job, JobState
from app.models.quotes import Quote
from app.models.reports import ExportRecord
from app.models.trials import BenchRun, BenchStep
from app.models.watch import ChangeEvent
from app.notify import schedules
from app.registry.demo_evidence import DEMO, DEMO_PROVIDER, load_demo_evidence
from tests.core.jobs.fixtures import immediate_jobs  # noqa: F401 - fixture
from tests.reports.conftest import renderer  # noqa: F401 - fixture: one renderer for the run

TABLES = (
    CheckRun,
    StoredFinding,
    ChangeEvent,
    BenchRun,
    BenchStep,
    BenchCampaign,
    ProcurementCase,
    ExportRecord,
)


def _counts(session: Session) -> dict[str, int]:
    return {model.__name__: session.exec(select(func.count()).select_from(model)).one() for model in TABLES}


def _load(app, *options: str):
    result = app.test_cli_runner().invoke(args=["demo", "load", *options])
    assert result.exit_code == 0, result.output
    return result


def test_demo_load_stores_a_demo_run_campaign_checks_case_and_report_once(
    app,
    login,
    session: Session,
    renderer,  # noqa: F811 - the fixture
):
    loaded = _load(app, "--no-report")  # the report below, by the shared renderer (one font subset)
    assert "loaded 18 demo providers" in loaded.stdout and "demo loaded in" in loaded.stdout
    assert "warning" not in loaded.output, loaded.output
    with app.app_context():
        reported = load_demo_evidence(session, renderer=lambda: renderer)
    assert list(reported.added) == ["report"] and not reported.failed, reported
    provider = session.exec(select(Provider).where(Provider.legal_name == DEMO_PROVIDER)).one()
    run = session.exec(select(BenchRun).where(BenchRun.provider_id == provider.id)).one()
    assert run.origin == DEMO and run.state == "succeeded" and run.suite == "quick"
    steps = session.exec(select(BenchStep).where(BenchStep.run_id == run.id)).all()
    assert len(steps) == 5 and all(step.status == "ok" and step.samples for step in steps)
    assert {c["check"]: c["verdict"] for c in run.comparisons}["bandwidth"] == "fail"  # 46 of 100 Gbit/s
    campaign = session.exec(select(BenchCampaign).where(BenchCampaign.provider_id == provider.id)).one()
    assert campaign.origin == DEMO and campaign.state == "finished"

    total = session.exec(select(func.count()).select_from(Provider)).one()
    latest = session.exec(
        select(CheckRun).where(CheckRun.provider_id == provider.id).order_by(CheckRun.id.desc())
    ).first()
    assert session.exec(select(func.count()).select_from(CheckRun)).one() == 2 * total  # yesterday, today
    assert latest.verdict == "fail" and latest.created_by_name == DEMO
    rules = set(
        session.exec(select(StoredFinding.rule_id).where(StoredFinding.check_run_id == latest.id)).all()
    )
    assert {"benchmarks.bandwidth_below_claim", "benchmarks.sags_at_peak"} <= rules
    kinds = set(session.exec(select(ChangeEvent.kind).where(ChangeEvent.provider_id == provider.id)).all())
    assert {"verdict_changed", "finding_added"} <= kinds
    assert session.exec(select(ChangeEvent).where(ChangeEvent.kind == "expired")).first() is not None

    assert session.exec(select(ProcurementCase).where(ProcurementCase.owner_name == DEMO)).one().answers
    export = session.exec(select(ExportRecord)).one()
    assert (
        export.provider_id == provider.id and export.created_by == DEMO and export.pdf_bytes[:5] == b"%PDF-"
    )
    _the_demo_decision_is_number_one(session)


def _the_demo_decision_is_number_one(session: Session) -> None:
    """Decision #1: the demo case's three quotes compared, proposed and approved by two different people."""
    case = session.exec(select(ProcurementCase).where(ProcurementCase.owner_name == DEMO)).one()
    decision = session.exec(select(Decision)).one()
    assert decision.id == 1 and decision.case_id == case.id and decision.state == "approved"
    quotes = session.exec(select(Quote).where(Quote.case_id == case.id)).all()
    assert len({quote.provider_id for quote in quotes}) == 3 and decision.quote_ids
    assert decision.proposed_by_name == "demo-analyst" and decision.decided_by_name == "demo-approver"
    assert decision.proposed_by_id != decision.decided_by_id
    canonical = json.dumps(decision.snapshot, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert hashlib.sha256(canonical.encode()).hexdigest() == decision.snapshot_sha256
    assert session.get(Provider, decision.provider_ids[0]).status == "approved"
    accounts = session.exec(select(User).where(User.username.in_(["demo-analyst", "demo-approver"]))).all()
    assert len(accounts) == 2 and not any(user.active for user in accounts)  # nobody can log in as them


def test_the_first_schedules_after_a_demo_load_succeed(app, immediate_jobs, session: Session):  # noqa: F811
    _load(app, "--no-report")
    with app.app_context():
        started = schedules.tick(session, datetime(2026, 12, 2, 4, 30, tzinfo=UTC))
    assert sorted(job.kind for job in started) == ["notify.prune", "watch.daily", "watch.footers"]
    jobs = session.exec(select(Job.kind, Job.state, Job.error)).all()
    assert all(state == JobState.succeeded for _kind, state, _error in jobs), jobs
