"""The measurement that counts: per offer and figure, the one run (executed by gpuvet or uploaded by an
analyst) whose figure is believed.

Red flags (the "benchmarks" fact), the ranking and its checklist (offer facts), the report's measurements
and the per-item verification all read this one choice, so none of them rests on another run of an offer
than the others do. The rule, among each offer's latest RUNS_PER_OFFER succeeded runs: fresh before stale
(measured within advice's stale_after_days of the day asked about), then executed before uploaded, then
newest (time, then run id). One statement over the bench_figure columns: no sample JSON is decoded.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from datetime import date, datetime, timedelta
from itertools import groupby
from operator import itemgetter
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlmodel import Session, col, select

from app.advice.knowledge import assumptions
from app.core import clock
from app.core.clock import aware
from app.models import Offer
from app.models.bench_figure import FIGURE_KEYS
from app.models.trials import BenchRun, RunOrigin, RunState, TrialServer
from app.trials.bench_figures import FIGURE_CHECKS, figures_statement, time_reader, typed_value

RUNS_PER_OFFER = 3  # the latest successful runs of an offer that may supply its figures
BANDWIDTH_FIGURES = {"intranet": "intranet_gbps", "public": "public_mbps"}  # a throughput test's path
CHECK_FIGURES = {check: figure for figure, checks in FIGURE_CHECKS.items() for check in checks}
# Where each row of figures_statement holds the run id, its origin and its time.
RUN_ID, ORIGIN, AT = 6, 7, -1

Providers = Collection[int] | None  # the providers whose offers to read (None: every provider)


class Counted(NamedTuple):
    """The figure that counts for an offer: value, unit, note, and the run that measured it (its id,
    origin, time and verdict on the offer's claim)."""

    value: Any
    unit: str
    note: str
    run_id: int
    origin: str
    at: datetime
    verdict: str | None


Counting = dict[int, dict[str, Counted]]  # offer id -> figure -> the figure that counts


def stale_before(today: date) -> date:
    """The first day whose measurements are still fresh on `today` (advice's stale_after_days)."""
    return today - timedelta(days=int(assumptions()["evidence"]["stale_after_days"]["value"]))


def recent_run_ids(providers: Providers = None) -> Any:
    """Ids of the latest RUNS_PER_OFFER successful runs of every offer (of `providers` only, when given)."""
    when = sa.func.coalesce(col(BenchRun.finished_at), col(BenchRun.created_at))
    numbered = select(
        col(BenchRun.id).label("id"),
        sa.func.row_number()
        .over(partition_by=col(BenchRun.offer_id), order_by=(when.desc(), col(BenchRun.id).desc()))
        .label("n"),
    ).where(BenchRun.state == RunState.succeeded, col(BenchRun.offer_id).is_not(None))
    if providers is not None:  # the offers' providers (a run's offer belongs to the run's provider)
        offers = select(col(Offer.id)).where(col(Offer.provider_id).in_(sorted(providers)))
        numbered = numbered.where(col(BenchRun.offer_id).in_(offers))
    ranked = numbered.subquery()
    return select(ranked.c.id).where(ranked.c.n <= RUNS_PER_OFFER)


def _preference(row: Any, fresh_from: date) -> tuple[bool, bool, datetime, int]:
    """Fresh before stale; within an age band a run gpuvet executed before an uploaded one; then newest."""
    at = row[AT]
    return (
        at.date() >= fresh_from,
        row[ORIGIN] != RunOrigin.uploaded.value,
        at.replace(tzinfo=None),
        row[RUN_ID],
    )


def counting_runs(
    session: Session,
    *,
    today: date | None = None,
    providers: Providers = None,
    make: Callable[..., Any] = Counted,
) -> Counting:
    """Per offer id (of `providers` only, when given) and figure: the figure that counts on `today`, as
    `make(value, unit, note, run_id, origin, at, verdict)` gives it (a Counted; the ranking makes its
    Measurement at once, as it reads every offer)."""
    fresh_from = stale_before(today or clock.business_today())
    connection = session.connection()
    read_time = time_reader(connection.dialect)
    statement = figures_statement(recent_run_ids(providers), connection.dialect)
    rows = [(*row[:-1], read_time(row[-1])) for row in connection.execute(statement)]
    counting: Counting = {}
    executed = RunOrigin.executed.value
    for offer_id, group in groupby(rows, key=itemgetter(0)):
        offer_rows = list(group)
        first_run = offer_rows[0][RUN_ID]
        if any(row[RUN_ID] != first_run for row in offer_rows):  # several runs: the most trusted one first
            offer_rows.sort(key=lambda row: _preference(row, fresh_from), reverse=True)
        figures: dict[str, Any] = {}
        for _offer, key, number, text, unit, note, run_id, origin, verdict, at in offer_rows:
            if key not in figures:
                value = typed_value(key, number, text)
                figures[key] = make(value, unit, note, run_id, origin or executed, at, verdict)
        counting[offer_id] = figures
    return counting


def counting_run_ids(counting: Counting) -> set[int]:
    """Every run that counts for at least one figure."""
    return {counted.run_id for figures in counting.values() for counted in figures.values()}


def run_of_figure(counting: Counting) -> dict[tuple[int, str], int]:
    """(offer id, figure) -> the id of the run that counts for it."""
    return {
        (offer_id, figure): counted.run_id
        for offer_id, figures in counting.items()
        for figure, counted in figures.items()
    }


def figures_by_run(counting: Counting) -> dict[int, list[str]]:
    """Run id -> the figures it is the measurement that counts for (of any offer), in FIGURE_KEYS order."""
    found: dict[int, set[str]] = {}
    for figures in counting.values():
        for figure, counted in figures.items():
            found.setdefault(counted.run_id, set()).add(figure)
    order = {key: rank for rank, key in enumerate(FIGURE_KEYS)}
    return {
        run_id: sorted(keys, key=lambda key: order.get(key, len(order))) for run_id, keys in found.items()
    }


# ---------------------------------------------------------------- stored comparisons
def figure_of(comparison: dict[str, Any], claims: dict[str, Any] | None) -> str | None:
    """The figure a stored comparison holds against the offer's claim (None: no figure stands for it).

    A throughput test names its path; older ones did not, and the nominal they were compared with tells
    the path apart, as bench_figures.figure_verdict reads it."""
    check = comparison.get("check")
    if check != "bandwidth":
        return CHECK_FIGURES.get(str(check))
    path = (comparison.get("evidence") or {}).get("path")
    if path in BANDWIDTH_FIGURES:
        return BANDWIDTH_FIGURES[path]
    claims, claimed = claims or {}, comparison.get("claimed")
    intranet, public = claims.get("intranet_gbps"), claims.get("public_mbps")
    if claimed is not None and intranet and claimed == intranet * 1000:
        return "intranet_gbps"
    if claimed is not None and public and claimed == public:
        return "public_mbps"
    return None


def comparisons_that_count(run: Any, counting: Counting) -> list[dict[str, Any]]:
    """The run's comparisons, less those about a figure of its offer that another run counts for."""
    counted = counting.get(run.offer_id) if run.offer_id is not None else None
    comparisons = list(run.comparisons or [])
    if not counted:
        return comparisons
    kept = []
    for comparison in comparisons:
        figure = figure_of(comparison, run.claims)
        owner = counted.get(figure) if figure else None
        if owner is None or owner.run_id == run.id:
            kept.append(comparison)
    return kept


def runs_by_id(session: Session, run_ids: Iterable[int]) -> dict[int, BenchRun]:
    """The runs of `run_ids`, by id (one statement; none without ids)."""
    ids = sorted(set(run_ids))
    if not ids:
        return {}
    return {run.id: run for run in session.exec(select(BenchRun).where(col(BenchRun.id).in_(ids))).all()}  # type: ignore[misc]


# ---------------------------------------------------------------- the "benchmarks" fact the red flags read
def fact_entries(
    session: Session, candidates: dict[int, list[tuple[BenchRun, Any]]], *, today: date | None = None
) -> dict[int, list[dict[str, Any]]]:
    """The "benchmarks" fact's runs per provider id: the candidates given (each trial server's latest run,
    then the latest uploads, as (run, trial server or None)) and the runs that count not among them, each
    with only the comparisons no other run counts for; a run left with none of its comparisons is left out.
    """
    counting = counting_runs(session, today=today, providers=list(candidates))
    present = {run.id for pairs in candidates.values() for run, _server in pairs}
    added = _runs_with_servers(session, counting_run_ids(counting) - present)
    entries: dict[int, list[dict[str, Any]]] = {}
    for provider_id, pairs in candidates.items():
        own = [*pairs, *(pair for pair in added if pair[0].provider_id == provider_id)]
        entries[provider_id] = []
        for run, server in own:
            comparisons = comparisons_that_count(run, counting)
            if comparisons or not run.comparisons:
                entries[provider_id].append(fact_entry(run, server, comparisons))
    return entries


def _runs_with_servers(session: Session, run_ids: set[int]) -> list[tuple[BenchRun, Any]]:
    """The runs of `run_ids` with their trial server (None for uploads), newest first; no statement without
    ids."""
    if not run_ids:
        return []
    statement = (
        select(BenchRun, TrialServer)
        .outerjoin(TrialServer, col(TrialServer.id) == BenchRun.trial_server_id)
        .where(col(BenchRun.id).in_(sorted(run_ids)))
        .order_by(col(BenchRun.id).desc())
    )
    return [(run, server) for run, server in session.exec(statement).all()]


def fact_entry(run: BenchRun, server: Any, comparisons: list[dict[str, Any]]) -> dict[str, Any]:
    """One run as the "benchmarks" fact lists it: an uploaded output with its provenance, or a trial
    server's run."""
    if run.origin == RunOrigin.uploaded.value:
        return {
            "run_id": run.id,
            "origin": RunOrigin.uploaded.value,
            "uploaded_by": run.uploaded_by_name,
            "raw_sha256": run.raw_sha256,
            "tool": run.params.get("tool"),
            "trial_server_id": None,
            "trial_server": None,
            "offer_id": run.offer_id,
            "suite": run.suite,
            "finished_at": aware(run.finished_at).isoformat() if run.finished_at else None,
            "comparisons": comparisons,
        }
    return {
        "run_id": run.id,
        "trial_server_id": server.id if server is not None else run.trial_server_id,
        "trial_server": server.name if server is not None else None,
        "offer_id": run.offer_id,
        "suite": run.suite,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "comparisons": comparisons,
    }
