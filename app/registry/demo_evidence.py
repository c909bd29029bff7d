"""Demo evidence: what a newcomer should see filled after `demo load` (verdicts, charts, the dashboard).

On top of the fictional demo providers: a benchmark run built from the real tool outputs recorded under
tests/data/bench (origin "demo", its provenance shown on the run page), a finished peak-hour campaign
from recorded samples, yesterday's and today's daily re-check (so change events exist), the expiry watch,
a saved procurement case and a PDF report export. Every part is idempotent (found by its demo marker and
skipped when already there) and independent: one that fails is reported and the others still load.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from sqlmodel import Session, col, select

from app.core import clock
from app.credentials import check_batch
from app.models import Offer, Provider
from app.models.trials import BenchRun, BenchStep, RunState, TrialServer
from benchmarks.compare import compare
from benchmarks.probes import load_probes
from benchmarks.probes.base import RawOutput
from benchmarks.sample import Sample
from benchmarks.suites import ProbeResult, parse_outputs, suite_steps

logger = logging.getLogger(__name__)

DEMO = "demo"  # the origin of demo runs and campaigns, the name of their author
RECORDINGS = Path(__file__).resolve().parents[2] / "tests" / "data" / "bench"
DEMO_PROVIDER = "虚构共享带宽有限公司"  # sells shared bandwidth: the run and the campaign show why it matters
DEMO_SERVER = "示例试用机 H800（演示数据）"
DEMO_HOST = "192.0.2.80"  # TEST-NET-1 (RFC 5737): documentation only, never reachable
DEMO_CASE_TITLE = "示例采购：视觉模型单机微调（演示数据）"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "answers"

# The quick suite's steps as the runner would have recorded them: (recording, label, parser, metadata).
QUICK_RECORDINGS: dict[str, tuple[str, str, str, dict[str, Any]]] = {
    "inventory": ("inventory_standin_gpu.txt", "inventory", "inventory", {}),
    "ping": ("ping_ok.txt", "ping intranet", "ping", {"path": "intranet", "count": 5}),
    "iperf3": (
        "iperf3_single.json",
        "iperf3 intranet",
        "iperf3",
        {"path": "intranet", "purpose": "throughput", "repeat": 0, "parallel": False, "reverse": False},
    ),
    "fio_randread": (
        "fio_randread.json",
        "fio randread",
        "fio",
        {"mode": "randread", "storage_path": "/data"},
    ),
    "disk_type": ("disk_virtio_ext4.txt", "lsblk + findmnt", "disk", {"storage_path": "/data"}),
}


@dataclass
class DemoEvidence:
    """What one load added (ids), what was already there, and the parts that failed with why."""

    added: dict[str, Any] = field(default_factory=dict)
    present: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def _demo_provider(session: Session) -> Provider | None:
    return session.exec(select(Provider).where(Provider.legal_name == DEMO_PROVIDER)).first()


def demo_server(session: Session, provider: Provider) -> TrialServer:
    """The demo trial server of the provider's H800 offer (made once; its address is a documentation one)."""
    server = session.exec(
        select(TrialServer).where(TrialServer.provider_id == provider.id, TrialServer.name == DEMO_SERVER)
    ).first()
    if server is not None:
        return server
    offer = session.exec(
        select(Offer).where(Offer.provider_id == provider.id).order_by(col(Offer.id))
    ).first()
    server = TrialServer(
        provider_id=provider.id,
        offer_id=offer.id if offer else None,
        name=DEMO_SERVER,
        host=DEMO_HOST,
        secret_encrypted="-",  # nothing to log in with: tests against it cannot start
        notes="演示数据：文档保留地址，无法连接。Demo data: a documentation address, never reachable.",
        created_by_name=DEMO,
    )
    session.add(server)
    session.commit()
    return server


def _step(position: int, name: str, probe: str, options: dict[str, Any]) -> tuple[BenchStep, list[Sample]]:
    """One step of the run from its recording, parsed the way the suite runner parses."""
    recording, label, parser, metadata = QUICK_RECORDINGS[name]
    source = f"tests/data/bench/{recording}"
    output = RawOutput(
        label=label,
        role="target",
        host=DEMO_HOST,
        argv=(),
        exit_code=0,
        stdout=(RECORDINGS / recording).read_text(encoding="utf-8"),
        stderr="",
        duration=1.0,
        parser=parser,
        metadata={**metadata, "recording": source},
    )
    result = ProbeResult(step=name, probe=probe, options=options, outputs=[output], duration=1.0)
    load_probes()  # registers the parsers
    parse_outputs(result)
    step = BenchStep(
        position=position,
        step=name,
        probe=probe,
        options=options,
        status="failed" if result.parse_errors else "ok",
        duration=1.0,
        started_at=clock.now(),
        outputs=[output.to_dict()],
        samples=[sample.to_dict() for sample in result.samples],
        parse_errors=result.parse_errors,
    )
    return step, result.samples


def add_demo_run(session: Session, server: TrialServer) -> BenchRun:
    """A finished quick-suite run on the demo server, every step from a recorded real tool output."""
    from app.trials.bench_runs import claims_of, thresholds

    offer = session.get(Offer, server.offer_id) if server.offer_id else None
    claims = claims_of(offer)
    built = [
        _step(position, step.name, step.probe, dict(step.options))
        for position, step in enumerate(suite_steps("quick"))
    ]
    now = clock.now()
    run = BenchRun(
        trial_server_id=server.id,
        provider_id=server.provider_id,
        offer_id=server.offer_id,
        origin=DEMO,
        suite="quick",
        params={},
        state=RunState.succeeded,
        host=server.host,
        claims=dataclasses.asdict(claims),
        comparisons=[
            c.to_dict()
            for c in compare(
                claims, [s for _step, samples in built for s in samples], thresholds=thresholds()
            )
        ],
        created_by_name=DEMO,
        created_at=now - timedelta(minutes=3),
        started_at=now - timedelta(minutes=3),
        finished_at=now,
    )
    session.add(run)
    session.flush()
    for step, _samples in built:
        step.run_id = run.id
        session.add(step)
    session.commit()
    return run


def _campaign(session: Session, server: TrialServer) -> tuple[int, bool]:
    """The finished demo campaign of the server (campaigns.demo_campaign, recorded samples), made once."""
    from app.models.campaigns import BenchCampaign
    from app.trials import campaigns

    found = session.exec(
        select(BenchCampaign).where(BenchCampaign.trial_server_id == server.id, BenchCampaign.origin == DEMO)
    ).first()
    if found is not None:
        return found.id, False
    return campaigns.demo_campaign(session, server_id=server.id).id, True


def _case(session: Session) -> tuple[int, bool]:
    """A saved procurement case from the shipped single-node training example, made once."""
    from app.cases import cases
    from app.models.cases import ProcurementCase

    found = session.exec(select(ProcurementCase).where(ProcurementCase.title == DEMO_CASE_TITLE)).first()
    if found is not None:
        return found.id, False
    answers = json.loads((EXAMPLES / "single_node_training.json").read_text(encoding="utf-8"))
    case = cases.create_case(session, answers=answers, owner=cases.Actor(None, DEMO), title=DEMO_CASE_TITLE)
    return case.id, True


def _decision(session: Session, today: date) -> tuple[int, bool]:
    """Three quotes for the demo case and one approved decision (decision #1 on a fresh load), made once."""
    from app.cases.demo_decision import load_demo_decision

    case_id, _created = _case(session)
    return load_demo_decision(session, case_id=case_id, today=today)


def _export(session: Session, provider: Provider, renderer: Callable[[], Any]) -> tuple[str, bool]:
    """The provider's report exported to PDF by the demo author, made once."""
    from app.credentials import report_exports as reports
    from app.models.reports import ExportRecord

    found = session.exec(
        select(ExportRecord).where(ExportRecord.provider_id == provider.id, ExportRecord.created_by == DEMO)
    ).first()
    if found is not None:
        return found.number, False
    author = reports.Author(None, DEMO)
    record = reports.export_provider_report(
        session, provider_id=provider.id, language="zh", author=author, renderer=renderer()
    )
    return record.number, True


def _run(session: Session, server: TrialServer) -> tuple[int, bool]:
    found = session.exec(
        select(BenchRun).where(BenchRun.trial_server_id == server.id, BenchRun.origin == DEMO)
    ).first()
    return (found.id, False) if found is not None else (add_demo_run(session, server).id, True)


def _checks(session: Session, provider_ids: list[int], today: date) -> tuple[str, bool]:
    """Today's daily re-check and expiry watch, as the schedule runs them: the changes the new evidence
    brought since yesterday's become change events."""
    from app.credentials import watch

    batch = check_batch.check_providers(session, provider_ids, today=today)
    events = batch.events + watch.watch_expiry(session, today=today)
    return f"{batch.runs} check runs, {events} change events", True


def _checks_before(session: Session, provider_ids: list[int], today: date) -> tuple[str, bool]:
    """Yesterday's daily re-check, before the demo evidence existed."""
    yesterday = today - timedelta(days=1)
    return f"{check_batch.check_providers(session, provider_ids, today=yesterday).runs} check runs", True


def _part(outcome: DemoEvidence, name: str, make: Callable[[], tuple[Any, bool]], session: Session) -> None:
    """Run one part; a failure is recorded (and rolled back), never raised, so the others still load."""
    try:
        value, created = make()
    except Exception as exc:  # a demo part must not stop the rest of the demo
        logger.exception("demo evidence part %s failed", name)
        session.rollback()
        outcome.failed[name] = f"{type(exc).__name__}: {exc}"[:300]
        return
    if created:
        outcome.added[name] = value
    else:
        outcome.present.append(name)


def load_demo_evidence(
    session: Session, *, today: date | None = None, renderer: Callable[[], Any] | None = None
) -> DemoEvidence:
    """Add the demo evidence to the loaded demo providers (see the module docstring); returns what it did.

    `renderer` gives the PDF renderer for the report export (None: no export).
    """
    outcome = DemoEvidence()
    provider = _demo_provider(session)
    if provider is None:
        outcome.failed["providers"] = f"{DEMO_PROVIDER} is not registered: load the demo providers first"
        return outcome
    today = today or clock.business_today()
    actor = session.info.get("actor")
    session.info["actor"] = (None, DEMO)
    try:
        provider_ids = list(session.exec(select(Provider.id).order_by(col(Provider.id))).all())
        server = demo_server(session, provider)
        fresh = _demo_run_id(session, server) is None  # checks around the new evidence, once
        if fresh:
            _part(outcome, "checks_before", lambda: _checks_before(session, provider_ids, today), session)
        _part(outcome, "benchmark_run", lambda: _run(session, server), session)
        _part(outcome, "campaign", lambda: _campaign(session, server), session)
        if fresh:
            _part(outcome, "checks", lambda: _checks(session, provider_ids, today), session)
        _part(outcome, "case", lambda: _case(session), session)
        _part(outcome, "decision", lambda: _decision(session, today), session)
        if renderer is not None:
            _part(outcome, "report", lambda: _export(session, provider, renderer), session)
    finally:
        session.info.pop("actor", None)
        if actor is not None:
            session.info["actor"] = actor
    return outcome


def _demo_run_id(session: Session, server: TrialServer) -> int | None:
    return session.exec(
        select(BenchRun.id).where(BenchRun.trial_server_id == server.id, BenchRun.origin == DEMO)
    ).first()
