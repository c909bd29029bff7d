"""Where a provider report's sections get their data: a registry of sources beyond the registry itself.

Each source names the module it depends on. A source whose module is not installed yet is "unavailable",
one that returns nothing is "empty", and the report marks both sections as not verified. New producers
(benchmark runs, checklists) plug in here with @source; the report and its snapshot need no other change.
Every loader returns JSON-plain data (str, int, float, bool, None, lists, dicts).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlmodel import Session

logger = logging.getLogger(__name__)

Loader = Callable[[Session, Any], Any]


@dataclass(frozen=True)
class Source:
    """A data source of the provider report; `module` must be importable for it to be available."""

    key: str
    module: str
    load: Loader


SOURCES: dict[str, Source] = {}


def source(key: str, *, module: str) -> Callable[[Loader], Loader]:
    """Register the decorated loader as report source `key`; a duplicate key raises."""

    def decorator(load: Loader) -> Loader:
        if key in SOURCES:
            raise ValueError(f"report source {key!r} is registered twice")
        SOURCES[key] = Source(key, module, load)
        return load

    return decorator


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def plain(value: Any) -> Any:
    """JSON-plain copy of `value` (dates as ISO text, enums as their values)."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(item) for item in value]
    if hasattr(value, "value") and not isinstance(value, (str, int, float, bool)):
        return value.value
    return value


def gather(session: Session, provider: Any) -> dict[str, dict[str, Any]]:
    """Run every source for `provider`: {key: {"status": ok|empty|unavailable|error, "data": ...}}."""
    results: dict[str, dict[str, Any]] = {}
    for key, entry in SOURCES.items():
        if not _module_exists(entry.module):
            results[key] = {"status": "unavailable", "data": None}
            continue
        try:
            data = plain(entry.load(session, provider))
        except Exception as exc:
            logger.exception("report source %s failed for provider %s", key, getattr(provider, "id", "?"))
            results[key] = {"status": "error", "data": None, "error": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        results[key] = {"status": "ok" if data else "empty", "data": data or None}
    return results


# ---------------------------------------------------------------- credential checks (issue 3)
@source("checks", module="app.credentials.checks")
def _checks(session: Session, provider: Any) -> dict[str, Any] | None:
    from app.credentials import checks

    run = checks.latest_check(session, provider_id=provider.id)
    if run is None:
        return None
    return {
        "id": run.id,
        "verdict": run.verdict,
        "checked_on": run.checked_on,
        "created_at": run.created_at,
        "created_by": run.created_by_name,
        "provider_version": run.provider_version,
        "rules_version": run.rules_version,
        "counts": {"blocker": run.blockers, "warning": run.warnings, "info": run.infos},
        "fact_errors": run.fact_errors,
        "findings": [
            checks.finding_dict(stored) for stored in checks.run_findings(session, check_run_id=run.id)
        ],
    }


# ---------------------------------------------------------------- the provider verdict (issue 10)
@source("verdict", module="app.credentials.verdicts")
def _verdict(session: Session, provider: Any) -> dict[str, Any]:
    """The same verdict the provider list and pages show (app.credentials.verdicts)."""
    from app.credentials.verdicts import verdict_of

    verdict = verdict_of(session, provider.id)
    return {**verdict.to_dict(), "items": [item.to_dict() for item in verdict.items]}


# ---------------------------------------------------------------- stored evidence (issue 3)
# Fetches that show something about the provider; tokens and captchas are plumbing, not evidence.
EVIDENCE_PURPOSES = ("footer", "footer_page", "icp_query", "licence_query")
MAX_EVIDENCE = 100


@source("evidence", module="app.credentials.evidence")
def _evidence(session: Session, provider: Any) -> list[dict[str, Any]] | None:
    from app.credentials import evidence

    rows, _total = evidence.list_evidence(
        session, provider_id=provider.id, purposes=EVIDENCE_PURPOSES, per_page=MAX_EVIDENCE
    )
    labels = getattr(evidence, "PURPOSES", {})
    return [
        {
            **evidence.evidence_ref(row),
            "title_zh": labels.get(row.purpose, (row.purpose, row.purpose))[0],
            "title_en": labels.get(row.purpose, (row.purpose, row.purpose))[1],
            "status": row.status,
            "error": row.error_code,
        }
        for row in reversed(rows)  # oldest first, so E-numbers follow the order of fetching
    ]


# ---------------------------------------------------------------- checklist ticks (issue 5)
@source("checklist", module="app.models.cases")
def _checklist(session: Session, provider: Any) -> dict[str, Any] | None:
    from sqlmodel import col, select

    from app.advice import checklist
    from app.models.cases import ChecklistTick, ProcurementCase

    rows = session.exec(
        select(ChecklistTick, ProcurementCase.title)
        .join(ProcurementCase, col(ProcurementCase.id) == ChecklistTick.case_id)
        .where(ChecklistTick.provider_id == provider.id)
        .order_by(col(ChecklistTick.case_id), col(ChecklistTick.item_key))
    ).all()
    if not rows:
        return None
    titles = {item.key: item for item in checklist.items()}
    items = []
    for tick, case_title in rows:
        item = titles.get(tick.item_key)
        note = " · ".join(
            part for part in (case_title, tick.ticked_by, tick.comment, tick.evidence_url) if part
        )
        items.append(
            {
                "text_zh": item.title_zh if item else tick.item_key,
                "text_en": item.title_en if item else tick.item_key,
                "status": checklist.PASSED if tick.done else checklist.OPEN,
                "note": note,
                "case_id": tick.case_id,
                "ticked_at": tick.ticked_at,
            }
        )
    return {"items": items}


# ---------------------------------------------------------------- benchmark runs (issue 4)
@source("measurements", module="app.trials.bench_runs")
def _measurements(session: Session, provider: Any) -> dict[str, Any] | None:
    from sqlmodel import col, select

    from app.models.trials import BenchRun, RunState, TrialServer
    from app.reports.measurements import measurements_from_runs
    from app.trials import bench_runs, bench_uploads, measurements

    # The latest finished run of each suite on each of the provider's trial servers, the uploads the
    # findings read too (bench_uploads.latest_uploads: none that a later executed run replaced) and the runs
    # that count for the offers' figures (app.trials.measurements, as findings and ranking read them),
    # oldest first; each claim is the counting run's.
    rows = session.exec(
        select(BenchRun, TrialServer.name)
        .join(TrialServer, col(TrialServer.id) == BenchRun.trial_server_id)
        .where(BenchRun.provider_id == provider.id, BenchRun.state == RunState.succeeded)
        .order_by(col(BenchRun.id).desc())
    ).all()
    latest: dict[tuple[Any, ...], Any] = {}
    for run, server in rows:
        latest.setdefault((run.trial_server_id, run.suite), (run, server))
    for upload in bench_uploads.latest_uploads(session, provider.id):
        latest[("upload", upload.id)] = (upload, None)
    counting = measurements.counting_runs(session, providers=[provider.id])
    missing = measurements.counting_run_ids(counting) - {run.id for run, _server in latest.values()}
    executed = {run.id: (run, server) for run, server in rows if run.id in missing}
    uploaded = measurements.runs_by_id(session, missing - set(executed))
    for run_id in missing:
        latest[("counts", run_id)] = executed.get(run_id) or (uploaded[run_id], None)
    runs = [
        {
            "run_id": run.id,
            "server": server or run.uploaded_by_name or f"#{run.id}",
            "suite": run.suite,
            "offer_id": run.offer_id,
            "finished_at": plain(run.finished_at),
            "claims": run.claims,
            "comparisons": run.comparisons,
            "samples": [sample.to_dict() for sample in bench_runs.run_samples(session, run_id=run.id)],
        }
        for run, server in sorted(latest.values(), key=lambda pair: pair[0].id)
    ]
    return measurements_from_runs(runs, measurements.run_of_figure(counting))


# ---------------------------------------------------------------- provider disclosure (issue 14)
@source("disclosure", module="app.disclosure.merge")
def _disclosure(session: Session, provider: Any) -> dict[str, Any] | None:
    """What the provider declared in its latest merged questionnaire, when, and what was verified since."""
    from app.disclosure.merge import report_declaration

    return report_declaration(session, provider_id=provider.id)


# ---------------------------------------------------------------- enterprise credit (issue 24)
@source("credit", module="app.credentials.credit")
def _credit(session: Session, provider: Any) -> dict[str, Any] | None:
    """The latest credit record of each public system, and how far the credit item is verified."""
    from app.credentials.credit import report_credit

    return report_credit(session, provider)
