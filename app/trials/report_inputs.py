"""The provider report's measurements: the latest finished runs and uploads, and the runs that count."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from app.reports.sources import plain, source


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
