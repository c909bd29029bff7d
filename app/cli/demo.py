"""`flask demo`: load the fictional demo providers and the demo evidence (runs, campaign, case, report)."""

from __future__ import annotations

import time
from typing import Any

import click
from flask import current_app
from flask.cli import AppGroup

from app.cli.common import cli_session, fail

demo_group = AppGroup("demo", help="Demo data.")


def _renderer() -> Any:
    from app.reports.pdf import renderer_for_settings

    return renderer_for_settings(current_app.config["GPUVET_SETTINGS"])


def _evidence(session: Any, *, report: bool) -> None:
    """Load the demo evidence and say what was added, what was there, and which part failed with why."""
    from app.registry.demo_evidence import load_demo_evidence

    outcome = load_demo_evidence(session, renderer=_renderer if report else None)
    for name, value in outcome.added.items():
        click.echo(f"  demo {name.replace('_', ' ')}: {value}")
    if outcome.present:
        click.echo(f"  already there: {', '.join(outcome.present)}")
    for name, error in outcome.failed.items():
        click.echo(f"warning: demo {name.replace('_', ' ')} not loaded: {error}", err=True)


@demo_group.command("load")
@click.option("--if-empty", is_flag=True, help="Do nothing when any provider exists.")
@click.option(
    "--no-evidence", is_flag=True, help="Only the providers: no checks, runs, campaign, case or report."
)
@click.option("--no-report", is_flag=True, help="Everything but the PDF report export.")
def load_command(if_empty: bool, no_evidence: bool, no_report: bool) -> None:
    """Load the clearly fictional demo providers (every red flag represented) and the demo evidence."""
    from app.core.errors import ServiceError
    from app.registry import demo

    started = time.perf_counter()
    with cli_session() as session:
        if if_empty and demo.has_providers(session):
            click.echo("providers already present; demo data not loaded (--if-empty)")
            return
        try:
            count = demo.load_demo(session)
        except ServiceError as exc:
            fail(exc)
        click.echo(f"loaded {count} demo providers")
        if not no_evidence:
            _evidence(session, report=not no_report)
    click.echo(f"demo loaded in {time.perf_counter() - started:.1f} s")


@demo_group.command("evidence")
@click.option("--no-report", is_flag=True, help="Everything but the PDF report export.")
def evidence_command(no_report: bool) -> None:
    """Add the demo evidence to demo providers loaded before (what is already there is kept, not doubled)."""
    with cli_session() as session:
        _evidence(session, report=not no_report)
