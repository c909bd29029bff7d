"""`flask report`: export provider and case reports as PDF from the command line (each export is recorded)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from flask import current_app
from flask.cli import AppGroup

from app.cli.common import RECORD_ID, cli_session, fail
from app.reports.labels import LANGUAGES

if TYPE_CHECKING:
    from app.models.reports import ExportRecord

report_group = AppGroup("report", help="Export vetting and case reports as PDF.")
CLI_AUTHOR_NAME = "cli"
_OUTPUT = click.option(
    "-o",
    "--output",
    "output",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Where to write the PDF.",
)
_LANG = click.option("--lang", type=click.Choice(LANGUAGES), default="zh", show_default=True)


def _write(record: ExportRecord, output: Path) -> None:
    output.write_bytes(record.pdf_bytes)
    click.echo(
        f"{record.number}  {output}  {record.pages} pages  {record.size_bytes} bytes  sha256 {record.sha256}"
    )


def _export(export: Callable[..., ExportRecord], output: Path, lang: str, **target: int) -> None:
    """Export one report with the configured renderer, as the CLI author, and write it to OUTPUT."""
    from app.core.errors import ServiceError
    from app.credentials import report_exports as service
    from app.reports.pdf import renderer_for_settings

    renderer = renderer_for_settings(current_app.config["GPUVET_SETTINGS"])
    author = service.Author(id=None, name=CLI_AUTHOR_NAME)
    with cli_session() as session:
        try:
            record = export(session, language=lang, author=author, renderer=renderer, **target)
        except ServiceError as exc:
            fail(exc)
            return
        _write(record, output)


@report_group.command("provider")
@click.argument("provider_id", type=RECORD_ID)
@_OUTPUT
@_LANG
def provider_command(provider_id: int, output: Path, lang: str) -> None:
    """Export the vetting report of provider PROVIDER_ID to OUTPUT."""
    from app.credentials import report_exports as service

    _export(service.export_provider_report, output, lang, provider_id=provider_id)


@report_group.command("case")
@click.argument("case_id", type=RECORD_ID)
@_OUTPUT
@_LANG
def case_command(case_id: int, output: Path, lang: str) -> None:
    """Export the report of procurement case CASE_ID to OUTPUT."""
    from app.credentials import report_exports as service

    if not service.cases_available():
        click.echo("error: cases are not available yet (case reports need procurement cases)", err=True)
        sys.exit(2)
    _export(service.export_case_report, output, lang, case_id=case_id)


@report_group.command("prepare-font")
def prepare_font_command() -> None:
    """Build the pre-subset report font under instance/ now, so the first export need not wait for it."""
    from app.reports.fonts import ensure_subset
    from app.reports.pdf import font_cache_dir

    settings = current_app.config["GPUVET_SETTINGS"]
    path = ensure_subset(Path(settings.report_font), font_cache_dir(settings))
    if path is None:
        click.echo("error: could not build the font subset; reports use the full font", err=True)
        sys.exit(1)
    click.echo(f"{path}  {path.stat().st_size} bytes")
