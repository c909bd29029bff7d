"""Check many providers at once: the daily re-check and "check all" in chunks of a constant few statements.

Per chunk: the providers with their records (6 statements), the facts (a few per source, see batch_facts),
the rules in Python, then the runs (and one UPDATE of the providers' latest-run pointers), their findings and
the change events against each provider's previous run in bulk INSERTs and one commit. Every stored run,
finding and event is the one checks.run_check would store for the same provider on the same day
(tests/credentials/checks/test_check_batch.py compares them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from types import SimpleNamespace
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, col, select

from app.core import clock
from app.credentials import watch
from app.credentials.batch_facts import gather_many
from app.credentials.checks import Evaluation, evaluate_loaded, finding_row, run_row, session_actor
from app.models import Provider, latest_runs
from app.models.checks import CheckRun, StoredFinding
from app.registry.providers import with_children
from benchmarks.gc_pause import without_gc

CHUNK = 500


@dataclass
class BatchOutcome:
    """What a batch stored: runs, change events and the verdicts counted."""

    runs: int = 0
    events: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    run_ids: list[int] = field(default_factory=list)


def evaluate_many(session: Session, provider_ids: Sequence[int], today: date) -> list[Evaluation]:
    """Load the providers with their records and facts, and run the rules on each (providers that no longer
    exist are left out)."""
    providers = list(
        session.exec(
            select(Provider)
            .where(col(Provider.id).in_(provider_ids))
            .order_by(col(Provider.id))
            .options(*with_children())
        ).all()
    )
    facts, errors = gather_many(session, providers)
    return [evaluate_loaded(p, facts[p.id], errors[p.id], today) for p in providers]  # type: ignore[index]


def _previous_runs(session: Session, provider_ids: list[int]) -> dict[int, tuple[int, str]]:
    """Each provider's latest stored run: {provider id: (run id, verdict)} (its pointer)."""
    rows = session.exec(
        select(CheckRun.provider_id, CheckRun.id, CheckRun.verdict).where(
            col(CheckRun.id).in_(latest_runs.latest_run_ids(provider_ids))
        )
    ).all()
    return {provider_id: (run_id, verdict) for provider_id, run_id, verdict in rows}


def _findings_of(session: Session, run_ids: list[int]) -> dict[int, list[Any]]:
    """The findings (the columns change events compare) of each run."""
    found: dict[int, list[Any]] = {run_id: [] for run_id in run_ids}
    if run_ids:
        table = StoredFinding.__table__
        columns = [table.c[name] for name in ("check_run_id", "rule_id", "subject", "severity")]
        columns += [table.c.message_zh, table.c.message_en]
        for row in session.execute(sa.select(*columns).where(table.c.check_run_id.in_(run_ids))):
            found[row.check_run_id].append(row)
    return found


def _insert_runs(session: Session, rows: list[dict[str, Any]]) -> list[int]:
    """Insert one run per provider in multi-row statements; their ids in the rows' order (matched by
    provider, so no one-row-at-a-time RETURNING is needed to keep the order)."""
    table = CheckRun.__table__
    statement = sa.insert(table).returning(table.c.id, table.c.provider_id)
    ids = {row.provider_id: row.id for row in session.execute(statement, rows)}
    return [ids[row["provider_id"]] for row in rows]


def store_many(
    session: Session, evaluations: Sequence[Evaluation], *, job_id: int | None = None, user: Any = None
) -> BatchOutcome:
    """Store the evaluations as check runs with their findings and change events; one commit."""
    outcome = BatchOutcome()
    if not evaluations:
        return outcome
    actor = session_actor(session, user)
    previous = _previous_runs(session, [evaluation.provider.id for evaluation in evaluations])  # type: ignore[misc]
    previous_findings = _findings_of(session, [run_id for run_id, _verdict in previous.values()])
    rows = [
        run_row(evaluation, actor=actor, job_id=job_id) | {"created_at": clock.now()}
        for evaluation in evaluations
    ]
    run_ids = _insert_runs(session, rows)
    latest_runs.advance_many(session, [row["provider_id"] for row in rows])  # same transaction, one UPDATE
    findings, events = [], []
    for evaluation, row, run_id in zip(evaluations, rows, run_ids, strict=True):
        provider_id = row["provider_id"]
        current = [
            finding_row(finding, check_run_id=run_id, provider_id=provider_id, position=position)
            for position, finding in enumerate(evaluation.findings)
        ]
        findings += current
        outcome.verdicts[row["verdict"]] = outcome.verdicts.get(row["verdict"], 0) + 1
        if provider_id not in previous:
            continue  # a first run is a snapshot, not a change
        before_id, before = previous[provider_id]
        drafts = watch.finding_changes(
            previous_findings[before_id], [SimpleNamespace(**f) for f in current], before, row["verdict"]
        )
        events += [
            (provider_id, draft, f"run:{run_id}:{draft.key}", run_id, evaluation.today) for draft in drafts
        ]
    if findings:
        session.execute(sa.insert(StoredFinding.__table__), findings)
    session.commit()
    outcome.events = watch.store_events(session, events)
    outcome.runs, outcome.run_ids = len(run_ids), run_ids
    return outcome


def check_providers(
    session: Session,
    provider_ids: Sequence[int],
    *,
    today: date | None = None,
    job_id: int | None = None,
    chunk: int | None = None,
    before_chunk: Callable[[int], None] | None = None,
) -> BatchOutcome:
    """Check every provider in chunks; `before_chunk(done)` runs before each (progress, cancellation)."""
    day, size = today or clock.business_today(), chunk or CHUNK
    total = BatchOutcome()
    for start in range(0, len(provider_ids), size):
        if before_chunk is not None:
            before_chunk(start)
        with without_gc():
            evaluations = evaluate_many(session, provider_ids[start : start + size], day)
            stored = store_many(session, evaluations, job_id=job_id)
        total.runs += stored.runs
        total.events += stored.events
        total.run_ids += stored.run_ids
        for verdict, count in stored.verdicts.items():
            total.verdicts[verdict] = total.verdicts.get(verdict, 0) + count
    return total
