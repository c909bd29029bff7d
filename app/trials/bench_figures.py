"""Measured figures of benchmark runs: derived from a run's samples once, when it is stored, read in columns.

A succeeded run linked to an offer yields the figures the ranking reads (intranet / public / RDMA
throughput, bandwidth behaviour, storage type, IOPS, write rate, GPU model and count, RTTs). They are
written to `bench_figure` in the same transaction as the run or its steps (an after-flush hook, so every
way of storing a run counts; only for runs that are, or were until this flush, succeeded, and deleted
runs: a running run's progress saves cost nothing), and rebuilt for older runs by
`flask --app wsgi bench refresh-figures` or the migration that adds the table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from itertools import chain, islice
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy import event, orm
from sqlalchemy.engine import Connection
from sqlalchemy.orm.util import identity_key

from benchmarks.compare import offer_storage_type

MIB_TO_MB = 2**20 / 1e6
INT_FIGURES = frozenset({"read_iops", "gpu_count"})  # figures whose value is a whole number
TEXT_FIGURES = frozenset({"bandwidth_type", "storage_type", "gpu_model"})
BATCH = 500  # runs per statement when rebuilding
SUCCEEDED = "succeeded"  # RunState.succeeded: the only state whose runs supply figures

Figures = dict[str, tuple[Any, str, str]]  # key -> (value, unit, note)


class StoredSample(NamedTuple):
    """What the figures read of a stored sample (lighter than rebuilding a benchmarks Sample)."""

    value: Any
    metadata: dict[str, Any]


Samples = dict[str, list[StoredSample]]  # by metric

# The sample metrics the figures below are read from.
FIGURE_METRICS = frozenset(
    {
        "throughput",
        "storage_class",
        "read_iops",
        "write_effective_bandwidth",
        "gpu",
        "gpu_count",
        "rtt_avg",
        "rdma_gbps",
    }
)


def run_figures(stored: Iterable[dict[str, Any]], claims: dict[str, Any] | None, comparisons: Any) -> Figures:
    """The figures the ranking reads (ranking.FIGURES vocabulary) from one run's samples and comparisons."""
    samples: Samples = {}
    for data in stored:
        if data["metric"] in FIGURE_METRICS:  # a run holds many more samples than the figures read
            samples.setdefault(data["metric"], []).append(
                StoredSample(data["value"], data.get("metadata") or {})
            )
    figures: Figures = {}
    _throughput_figures(samples, figures)
    _rdma_figures(samples, figures)
    _storage_figures(samples, claims or {}, figures)
    _gpu_figures(samples, figures)
    _rtt_figures(samples, figures)
    _bandwidth_type(comparisons or [], figures)
    return figures


def _of(samples: Samples, metric: str, **metadata: Any) -> list[StoredSample]:
    if not metadata:
        return samples.get(metric, [])
    return [
        sample
        for sample in samples.get(metric, ())
        if all(sample.metadata.get(key) == value for key, value in metadata.items())
    ]


THROUGHPUT_PATHS = (("intranet", "intranet_gbps", 1000.0, "Gbps"), ("public", "public_mbps", 1.0, "Mbps"))


def _throughput_figures(samples: Samples, figures: Figures) -> None:
    """The best single throughput test of each path (stability repeats are judged separately)."""
    for path, key, scale, unit in THROUGHPUT_PATHS:
        tests = [
            sample
            for sample in _of(samples, "throughput", path=path)
            if sample.metadata.get("purpose", "throughput") == "throughput"
        ]
        if tests:
            top = max(tests, key=lambda sample: float(sample.value))
            note = f"iperf3 {top.metadata.get('step', '')}, {top.metadata.get('streams') or 1} stream(s)"
            figures[key] = (round(float(top.value) / scale, 3), unit, note)


def _rdma_figures(samples: Samples, figures: Figures) -> None:
    """The best RDMA bandwidth perftest measured (benchmarks.probes.rdma.RDMA_FIGURE, Gbit/s)."""
    tests = _of(samples, "rdma_gbps")
    if tests:
        top = max(tests, key=lambda sample: float(sample.value))
        tool = top.metadata.get("tool") or top.metadata.get("test") or "perftest"
        figures["rdma_gbps"] = (round(float(top.value), 3), "Gbps", f"{tool}")


def _storage_figures(samples: Samples, claims: dict[str, Any], figures: Figures) -> None:
    detected = _of(samples, "storage_class")
    kind = offer_storage_type(str(detected[0].value), claims.get("storage_type")) if detected else None
    if kind is not None:
        figures["storage_type"] = (kind, "", str(detected[0].metadata.get("reason", "")))
    iops = _of(samples, "read_iops")
    if iops:
        figures["read_iops"] = (
            round(sum(float(s.value) for s in iops) / len(iops)),
            "IOPS",
            "fio 4k randread",
        )
    writes = _of(samples, "write_effective_bandwidth")
    if writes:
        mib = sum(float(s.value) for s in writes) / len(writes)
        figures["write_mb_s"] = (round(mib * MIB_TO_MB, 1), "MB/s", "fio 1 MiB writes with fsync")


def _gpu_figures(samples: Samples, figures: Figures) -> None:
    names = sorted({str(sample.value) for sample in _of(samples, "gpu")})
    if names:
        figures["gpu_model"] = (", ".join(names), "", "nvidia-smi")
    counts = [s for s in _of(samples, "gpu_count") if s.metadata.get("nvidia_smi") != "not installed"]
    if counts:  # a server without nvidia-smi measured nothing about its GPUs (the run's comparison says so)
        note = str(counts[0].metadata.get("nvidia_smi") or "nvidia-smi")
        figures["gpu_count"] = (int(float(counts[0].value)), "GPUs", note)


RTT_PATHS = (
    ("gpuvet->target", "rtt_ms", "ping from the gpuvet host"),
    ("target->peer", "intranet_rtt_ms", "ping from the target to its peer"),
)


def _rtt_figures(samples: Samples, figures: Figures) -> None:
    for path, key, note in RTT_PATHS:
        found = _of(samples, "rtt_avg", path=path)
        if found:
            figures[key] = (round(float(found[0].value), 2), "ms", note)


def _bandwidth_type(comparisons: list[dict[str, Any]], figures: Figures) -> None:
    """Steady repeated throughput behaves as dedicated; large swings behave like shared bandwidth."""
    for comparison in comparisons:
        if comparison.get("check") == "stability" and comparison.get("verdict") in ("pass", "warn", "fail"):
            steady = comparison["verdict"] == "pass"
            note = "steady under repeated tests" if steady else "behaves like shared bandwidth"
            figures["bandwidth_type"] = ("dedicated" if steady else "shared", "", note)


# ---------------------------------------------------------------- verdicts
# The comparison checks (benchmarks.compare, compare_cluster) that hold each figure against the claim.
FIGURE_CHECKS = {
    "storage_type": ("storage_type",),
    "read_iops": ("iops",),
    "write_mb_s": ("write_throughput", "write_rate"),
    "gpu_model": ("gpu_model",),
    "gpu_count": ("gpu_count",),
    "bandwidth_type": ("stability",),
    "rtt_ms": ("ping",),
    "rdma_gbps": ("rdma",),
}
VERDICT_ORDER = ("fail", "warn", "pass", "info")


def figure_verdict(key: str, comparisons: list[dict[str, Any]], claims: dict[str, Any]) -> str | None:
    """The worst verdict of the run's comparisons about this figure (None: nothing compared it)."""
    if key in ("intranet_gbps", "public_mbps"):
        claim = claims.get(key)
        nominal = claim * 1000 if key == "intranet_gbps" and claim else claim
        found = [
            c["verdict"]
            for c in comparisons
            if c.get("check") == "bandwidth" and nominal and c.get("claimed") == nominal
        ]
    else:
        checks = FIGURE_CHECKS.get(key, ())
        found = [c.get("verdict") for c in comparisons if c.get("check") in checks]
    ranked = [verdict for verdict in VERDICT_ORDER if verdict in found]
    return ranked[0] if ranked else None


# ---------------------------------------------------------------- writing
RUN_COLUMNS = (
    "id",
    "offer_id",
    "provider_id",
    "claims",
    "comparisons",
    "origin",
    "created_at",
    "finished_at",
)


def _tables() -> tuple[Any, Any, Any]:
    from app.models.bench_figure import BenchFigure
    from app.models.trials import BenchRun, BenchStep

    return BenchRun.__table__, BenchStep.__table__, BenchFigure.__table__


def figure_rows(run: Any, samples: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The bench_figure rows of one succeeded run (its columns as RUN_COLUMNS) and its samples."""
    claims, comparisons = run.claims or {}, run.comparisons or []
    rows = []
    for key, (value, unit, note) in run_figures(samples, claims, comparisons).items():
        text = key in TEXT_FIGURES
        rows.append(
            {
                "run_id": run.id,
                "offer_id": run.offer_id,
                "provider_id": run.provider_id,
                "figure": key,
                "value_num": None if text else float(value),
                "value_text": str(value)[:200] if text else None,
                "unit": unit,
                "note": note[:200],
                "measured_at": run.finished_at or run.created_at,
                "origin": run.origin or "executed",
                "verdict": figure_verdict(key, comparisons, claims),
            }
        )
    return rows


def _batches(values: Iterable[int]) -> Iterator[list[int]]:
    iterator = iter(values)
    while batch := list(islice(iterator, BATCH)):
        yield batch


def rebuild(connection: Connection, run_ids: Iterable[int] | None = None) -> int:
    """Rewrite the figures of `run_ids` (None: of every run) from their samples; returns rows written."""
    runs, steps, figures = _tables()
    if run_ids is None:
        connection.execute(sa.delete(figures))
        ids = [row.id for row in connection.execute(sa.select(runs.c.id).order_by(runs.c.id))]
    else:
        ids = sorted(set(run_ids))
    written = 0
    for batch in _batches(ids):
        if run_ids is not None:
            connection.execute(sa.delete(figures).where(figures.c.run_id.in_(batch)))
        succeeded = sa.and_(runs.c.state == SUCCEEDED, runs.c.offer_id.is_not(None))
        stored = list(
            connection.execute(
                sa.select(*(runs.c[name] for name in RUN_COLUMNS)).where(runs.c.id.in_(batch), succeeded)
            )
        )
        if not stored:
            continue
        samples: dict[int, list[dict[str, Any]]] = {}
        step_rows = sa.select(steps.c.run_id, steps.c.samples).where(
            steps.c.run_id.in_([run.id for run in stored])
        )
        for run_id, step_samples in connection.execute(
            step_rows.order_by(steps.c.run_id, steps.c.position, steps.c.id)
        ):
            samples.setdefault(run_id, []).extend(step_samples or [])
        rows = [row for run in stored for row in figure_rows(run, samples.get(run.id, []))]
        if rows:
            connection.execute(sa.insert(figures), rows)
            written += len(rows)
    return written


def refresh_after_flush(session: Any) -> None:
    """After a flush that wrote runs or steps that may hold figures: their figures again, same connection."""
    run_ids = runs_to_refresh(session)
    if run_ids:
        rebuild(session.connection(), run_ids)


def _after_flush(session: orm.Session, _context: object) -> None:
    """Keep the figures of runs (and steps) written in this flush in line, in the same transaction."""
    refresh_after_flush(session)


event.listen(orm.Session, "after_flush", _after_flush)


def runs_to_refresh(session: Any) -> set[int]:
    """The runs flushed (themselves or their steps) whose figures may have changed.

    A run's figures change only when it is succeeded, leaves succeeded, or is deleted: the steps a running
    run saves on every progress event cost no statement. Where the state cannot be told without one (not
    loaded in this session), the run is rebuilt, as the rebuild itself reads it.
    """
    from app.models.trials import BenchRun, BenchStep

    runs: dict[int, bool] = {}  # run id -> whether its figures are rebuilt
    for run in session.deleted:
        if isinstance(run, BenchRun) and run.id is not None:
            runs[run.id] = True
    for run in chain(session.new, session.dirty):
        if isinstance(run, BenchRun) and run.id is not None and run.id not in runs:
            runs[run.id] = _may_hold_figures(run, new=run in session.new)
    for step in chain(session.new, session.dirty, session.deleted):
        if isinstance(step, BenchStep) and step.run_id is not None and step.run_id not in runs:
            loaded = session.identity_map.get(identity_key(BenchRun, step.run_id))
            runs[step.run_id] = loaded is None or _may_hold_figures(loaded, new=False)
    return {run_id for run_id, refresh in runs.items() if refresh}


def _may_hold_figures(run: Any, *, new: bool) -> bool:
    """Whether a run is succeeded or was before this flush (attribute history; no statement is run)."""
    history = sa.inspect(run).attrs.state.history
    states = {*history.added, *history.unchanged, *history.deleted}
    if SUCCEEDED in states or not states:  # succeeded now or before; or the state is not loaded
        return True
    return not new and bool(history.added) and not history.deleted  # changed from a state never loaded


# ---------------------------------------------------------------- reading
READ_COLUMNS = (
    "offer_id",
    "figure",
    "value_num",
    "value_text",
    "unit",
    "note",
    "run_id",
    "origin",
    "verdict",
)


def figures_statement(run_ids: Any, dialect: Any) -> Any:
    """The figure rows of the runs `run_ids` selects, by offer, in plain columns.

    The time comes last, as stored (SQLite: text, parsed once per run by `time_reader`). Which run's figure
    wins is decided by the reader (ordering by it in SQL makes SQLite sort three times slower). Within an
    offer the figures come in the order they were written, whichever plan the database picks (a read of a
    few providers must list them as a read of all does).
    """
    figures = _tables()[2]
    at = figures.c.measured_at
    raw_at = sa.type_coerce(at, sa.String) if dialect.name == "sqlite" else at
    columns = (figures.c[name] for name in READ_COLUMNS)
    statement = sa.select(*columns, raw_at).where(figures.c.run_id.in_(run_ids))
    return statement.order_by(figures.c.offer_id, figures.c.id)


def time_reader(dialect: Any) -> Callable[[Any], datetime]:
    """Parse a stored measured_at as SQLAlchemy would, once per distinct value (figures of a run share it)."""
    process = sa.DateTime(timezone=True).dialect_impl(dialect).result_processor(dialect, None)
    parsed: dict[Any, datetime] = {}

    def read(value: Any) -> datetime:
        at = parsed.get(value)
        if at is None:
            at = parsed[value] = process(value) if process is not None else value
        return at

    return read


def typed_value(key: str, number: float | None, text: str | None) -> Any:
    """A stored figure's value typed back: text figures as str, whole numbers as int, others float."""
    if key in TEXT_FIGURES:
        return text
    return int(number) if key in INT_FIGURES else float(number)  # type: ignore[arg-type]


def refresh_all(session: Any) -> dict[str, int]:
    """Rebuild every run's figures (runs stored before the table, or after a change to the extraction)."""
    figures = _tables()[2]
    written = rebuild(session.connection())
    runs = session.execute(sa.select(sa.func.count(sa.distinct(figures.c.run_id)))).scalar_one()
    session.commit()
    return {"runs": int(runs), "figures": written}
