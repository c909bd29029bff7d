"""Facts for many providers at once: a few statements per source instead of a few per provider.

Each batch source mirrors one per-provider fact source of app.credentials.facts and builds its value with the
same helper, so a batch gives the very facts a one-by-one check gathers. A batch source answers
{provider id: value or None} for the providers it is sure about; every provider it leaves out, every
provider of a source without a batch form (a plugin's, say) and every provider of a batch that raised is
gathered by the per-provider source, so errors are reported per provider exactly as in a single check.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any

import sqlalchemy as sa
from sqlalchemy import func
from sqlmodel import Session, col, select

from app.credentials import credit, lookups
from app.credentials.evidence import FOOTER_HOME, FOOTER_PAGE, footer_fact_of
from app.credentials.facts import load_fact_sources
from app.models import Provider
from app.models.evidence import Evidence, Lookup, LookupKind, LookupState
from app.models.trials import BenchRun, RunState, TrialServer
from app.trials import bench_uploads, measurements

logger = logging.getLogger(__name__)

BatchSource = Callable[[Session, Sequence[Provider]], dict[int, Any]]


def _latest_ids(model: Any, partition: Any, order: Sequence[Any], *where: Any) -> Any:
    """A subquery of the id of the first row of each partition in `order` (one window function)."""
    rank = func.row_number().over(partition_by=partition, order_by=list(order)).label("rank")
    ranked = select(model.id, rank).where(*where).subquery()
    return select(ranked.c.id).where(ranked.c.rank == 1)


def _latest_per_provider(model: Any, ids: Sequence[int], order: Sequence[Any], *where: Any) -> Any:
    """A subquery of the id of each of these providers' first `model` row in `order` (among `where`)."""
    return _latest_ids(model, model.provider_id, order, col(model.provider_id).in_(ids), *where)


def _rows(model: Any, *, leave_out: tuple[str, ...] = ()) -> Any:
    """A plain select of the model's columns: rows read like the model's objects (same attribute names and
    values) at a fraction of the cost of building ORM objects, and the sources' builders take either."""
    return sa.select(*(column for column in model.__table__.c if column.key not in leave_out))


def _evidence() -> Any:
    return _rows(Evidence, leave_out=("body",))  # as the sources read it: without the stored bytes


def footer_batch(session: Session, providers: Sequence[Provider]) -> dict[int, Any]:
    """The "footer" fact of each provider: its latest home-page scrape and the pages that scrape followed."""
    ids = [provider.id for provider in providers]
    order = (col(Evidence.fetched_at).desc(), col(Evidence.id).desc())
    latest = _latest_per_provider(Evidence, ids, order, Evidence.purpose == FOOTER_HOME)
    homes = session.execute(_evidence().where(Evidence.__table__.c.id.in_(latest))).all()
    children: dict[int, list[Evidence]] = {}
    if homes:
        table = Evidence.__table__
        pages = session.execute(
            _evidence()
            .where(table.c.parent_id.in_([home.id for home in homes]), table.c.purpose == FOOTER_PAGE)
            .order_by(table.c.id)
        ).all()
        for page in pages:
            children.setdefault(page.parent_id, []).append(page)  # type: ignore[arg-type]
    facts: dict[int, Any] = dict.fromkeys(ids)
    for home in homes:
        facts[home.provider_id] = footer_fact_of([home, *children.get(home.id, [])])  # type: ignore[index]
    return facts


def _latest_lookups(
    session: Session, ids: list[int], kind: LookupKind, state: LookupState, order: Sequence[Any]
) -> dict[int, Lookup]:
    latest = _latest_per_provider(Lookup, ids, order, Lookup.kind == kind, Lookup.state == state)
    return {
        row.provider_id: row
        for row in session.execute(_rows(Lookup).where(Lookup.__table__.c.id.in_(latest)))
    }


def lookup_batch(kind: LookupKind) -> BatchSource:
    """The batch form of lookups.lookup_facts for one kind: latest automatic lookup, else latest manual."""

    def batch(session: Session, providers: Sequence[Provider]) -> dict[int, Any]:
        ids = [provider.id for provider in providers]
        order = (col(Lookup.completed_at).desc(), col(Lookup.id).desc())
        completed = _latest_lookups(session, ids, kind, LookupState.completed, order)
        manual = _latest_lookups(session, ids, kind, LookupState.manual, (col(Lookup.id).desc(),))
        chosen = {provider_id: completed.get(provider_id) or manual.get(provider_id) for provider_id in ids}
        wanted = {lookup.result_evidence_id for lookup in chosen.values() if lookup is not None}
        wanted.discard(None)
        results = {}
        if wanted:
            statement = _evidence().where(Evidence.__table__.c.id.in_(wanted))
            results = {row.id: row for row in session.execute(statement)}
        facts: dict[int, Any] = {}
        for provider_id, lookup in chosen.items():
            if lookup is None:
                facts[provider_id] = None
            elif lookup.result_evidence_id is None:
                facts[provider_id] = lookups.lookup_fact_of(lookup, None)
            elif lookup.result_evidence_id in results:
                facts[provider_id] = lookups.lookup_fact_of(lookup, results[lookup.result_evidence_id])
            # else: left out, so the provider's own source reports the missing evidence
        return facts

    return batch


def benchmarks_batch(session: Session, providers: Sequence[Provider]) -> dict[int, Any]:
    """The "benchmarks" fact: each trial server's latest finished run, then the latest uploads, then the runs
    that count (app.trials.measurements)."""
    ids = [provider.id for provider in providers]
    servers = session.exec(
        select(TrialServer).where(col(TrialServer.provider_id).in_(ids)).order_by(col(TrialServer.id))
    ).all()
    server_runs: dict[int, BenchRun] = {}
    if servers:
        latest = _latest_ids(
            BenchRun,
            BenchRun.trial_server_id,
            (col(BenchRun.id).desc(),),
            col(BenchRun.trial_server_id).in_([server.id for server in servers]),
            BenchRun.state == RunState.succeeded,
        )
        for run in session.exec(select(BenchRun).where(col(BenchRun.id).in_(latest))).all():
            server_runs[run.trial_server_id] = run  # type: ignore[index]
    finished: dict[int, list[BenchRun]] = {}
    for run in session.exec(
        select(BenchRun)
        .where(col(BenchRun.provider_id).in_(ids), BenchRun.state == RunState.succeeded)
        .order_by(col(BenchRun.id).desc())
    ).all():
        finished.setdefault(run.provider_id, []).append(run)
    candidates: dict[int, list[tuple[BenchRun, Any]]] = {provider_id: [] for provider_id in ids}
    for server in servers:
        run = server_runs.get(server.id)  # type: ignore[arg-type]
        if run is not None:
            candidates[server.provider_id].append((run, server))
    for provider_id, runs in finished.items():
        candidates[provider_id] += [(run, None) for run in bench_uploads.pick_latest_uploads(runs)]
    entries = measurements.fact_entries(session, candidates)
    return {provider_id: {"runs": runs} if runs else None for provider_id, runs in entries.items()}


def disclosure_batch(session: Session, providers: Sequence[Provider]) -> dict[int, Any]:
    """The "disclosure" fact: the latest reviewed questionnaire's answers (disclosure_merge)."""
    from app.disclosure.merge import topic_findings
    from app.models.disclosure import Invitation, InvitationStatus

    ids = [provider.id for provider in providers]
    order = (col(Invitation.submitted_at).desc(), col(Invitation.id).desc())
    reviewed = Invitation.status == InvitationStatus.reviewed.value
    latest = _latest_per_provider(Invitation, ids, order, reviewed)
    facts: dict[int, Any] = dict.fromkeys(ids)
    for invitation in session.exec(select(Invitation).where(col(Invitation.id).in_(latest))).all():
        facts[invitation.provider_id] = topic_findings(invitation)
    return facts


def campaigns_batch(session: Session, providers: Sequence[Provider]) -> dict[int, Any]:
    """The "peak_campaigns" fact is None without a finished campaign; the few with one ask their source."""
    from app.models.campaigns import BenchCampaign, CampaignState

    ids = [provider.id for provider in providers]
    having = session.exec(
        select(BenchCampaign.provider_id)
        .where(col(BenchCampaign.provider_id).in_(ids), BenchCampaign.state == CampaignState.finished)
        .distinct()
    ).all()
    return dict.fromkeys(set(ids) - set(having))


BATCH_SOURCES: dict[str, BatchSource] = {
    "disclosure": disclosure_batch,  # disclosure_merge.disclosure_fact
    "peak_campaigns": campaigns_batch,  # campaign_reads.campaigns_fact
    "footer": footer_batch,  # evidence.footer_facts
    "icp_lookup": lookup_batch(LookupKind.icp),  # lookups.lookup_facts
    "licence_lookup": lookup_batch(LookupKind.licence),
    "benchmarks": benchmarks_batch,  # bench_runs.benchmarks_fact
    "credit": credit.credit_batch,  # credit.credit_facts
}


def _batch_values(
    session: Session, name: str, providers: Sequence[Provider], savepoints: bool
) -> dict[int, Any]:
    """The batch form's values of source `name`, or {} when it has none or it failed."""
    batch = BATCH_SOURCES.get(name)
    if batch is None:
        return {}
    try:
        with session.begin_nested() if savepoints else nullcontext():
            return batch(session, providers)
    except Exception:  # the per-provider sources run instead and report their errors one by one
        logger.exception("batch fact source %s failed; gathering it provider by provider", name)
        return {}


def gather_many(
    session: Session, providers: Sequence[Provider]
) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, str]]]:
    """Facts and fact errors of every provider, as gather_facts_with_errors gives them one by one."""
    facts: dict[int, dict[str, Any]] = {provider.id: {} for provider in providers}  # type: ignore[misc]
    errors: dict[int, dict[str, str]] = {provider.id: {} for provider in providers}  # type: ignore[misc]
    # On PostgreSQL a failed statement aborts the transaction: each source runs in a savepoint there.
    savepoints = session.get_bind().dialect.name == "postgresql"
    for name, source in sorted(load_fact_sources().items()):
        known = _batch_values(session, name, providers, savepoints)
        for provider in providers:
            if provider.id in known:
                value = known[provider.id]
            else:
                try:
                    with session.begin_nested() if savepoints else nullcontext():
                        value = source(session, provider)
                except Exception as exc:  # as in gather_facts_with_errors: one broken source stops nothing
                    logger.exception("fact source %s failed for provider %s", name, provider.id)
                    errors[provider.id][name] = f"{type(exc).__name__}: {exc}"[:500]  # type: ignore[index]
                    continue
            if value is not None:
                facts[provider.id][name] = value  # type: ignore[index]
    return facts, errors
