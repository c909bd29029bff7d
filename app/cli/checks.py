"""`flask vet check` (run the vetting rules from the command line) and `flask worker` (the job worker)."""

from __future__ import annotations

from datetime import datetime

import click
from flask import current_app
from flask.cli import AppGroup, with_appcontext

from app.cli.common import RECORD_ID, cli_session, fail, print_json
from app.cli.vet import vet_group


@vet_group.command("check")
@click.argument("provider_id", type=RECORD_ID)
@click.option("--dry-run", is_flag=True, help="Print the findings without storing a check run.")
@click.option(
    "--today", type=click.DateTime(formats=["%Y-%m-%d"]), help="Check as of this date (YYYY-MM-DD)."
)
def check_command(provider_id: int, dry_run: bool, today: datetime | None) -> None:
    """Run every vetting rule on PROVIDER_ID (no network) and print the verdict and findings as JSON."""
    from app.core.errors import ServiceError
    from app.credentials import checks
    from app.credentials.verdicts import verdict_of

    day = today.date() if today else None
    with cli_session() as session:
        try:
            if dry_run:
                evaluation = checks.evaluate(session, provider_id=provider_id, today=day)
                print_json(
                    {
                        "provider_id": provider_id,
                        "verdict": evaluation.verdict.value,
                        "check_run_id": None,
                        "findings": [finding.to_dict() for finding in evaluation.findings],
                    }
                )
                return
            run = checks.run_check(session, provider_id=provider_id, today=day)
            stored = checks.run_findings(session, check_run_id=run.id)
            shown = verdict_of(session, provider_id).to_dict()  # as the pages and reports show it
        except ServiceError as exc:
            fail(exc)
    print_json(
        {
            "provider_id": provider_id,
            "verdict": run.verdict,
            "verdict_label_zh": shown["label_zh"],
            "verdict_label_en": shown["label_en"],
            "unverified": shown["unverified"],
            "check_run_id": run.id,
            "findings": [checks.finding_dict(finding) for finding in stored],
        }
    )


@click.group("worker", cls=AppGroup, invoke_without_command=True)
@click.option("--workers", type=click.IntRange(1, 64), help="Worker threads (default GPUVET_JOBS_WORKERS).")
@with_appcontext
def worker_group(workers: int | None) -> None:
    """Run the background job worker (Huey consumer); stop with Ctrl-C (waits for running jobs)."""
    from app.worker import configure_logging, run_worker

    if click.get_current_context().invoked_subcommand is None:
        configure_logging()
        run_worker(current_app._get_current_object(), workers=workers)  # type: ignore[attr-defined]


@worker_group.command("recover")
def recover_command() -> None:
    """Mark jobs of stopped workers interrupted (or queue them again) and re-queue lost ones, once."""
    from datetime import timedelta

    from app.core.db import get_engine
    from app.core.jobs import recover_jobs

    app = current_app._get_current_object()  # type: ignore[attr-defined]
    stale = timedelta(seconds=app.config["GPUVET_SETTINGS"].jobs_heartbeat_s * 4)
    print_json(recover_jobs(get_engine(app), app=app, stale_after=stale))
