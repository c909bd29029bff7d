"""`flask providers`: export and import the provider registry (JSON or CSV)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from flask.cli import AppGroup

from app.cli.common import LazyChoice, cli_session


def _formats() -> tuple[str, ...]:
    from app.services.transfer import FORMATS

    return FORMATS


providers_group = AppGroup("providers", help="Export and import providers.")


@providers_group.command("export")
@click.option("--format", "fmt", type=LazyChoice(_formats), default="json", show_default=True)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="File to write (default: stdout)."
)
def export_command(fmt: str, output: Path | None) -> None:
    """Write every provider with all nested records as JSON or CSV."""
    from app.services.transfer import export_providers

    with cli_session() as session:
        text = export_providers(session, fmt)
    if output is None:
        click.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8", newline="")
    click.echo(f"exported to {output}", err=True)


@providers_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--format", "fmt", type=LazyChoice(_formats), help="Default: from the file extension.")
@click.option("--dry-run", is_flag=True, help="Check every row and report, write nothing.")
def import_command(file: str, fmt: str | None, dry_run: bool) -> None:
    """Import providers from FILE; any invalid row means nothing is imported."""
    from app.services.transfer import format_for_filename, import_providers

    fmt = fmt or format_for_filename(file)
    if fmt is None:
        raise click.UsageError(
            "cannot tell the format from the file name; pass --format json or --format csv"
        )
    data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    with cli_session() as session:
        report = import_providers(session, data=data, format=fmt, dry_run=dry_run)
    if report.problems:
        for problem in report.problems:
            click.echo(f"error: {problem}", err=True)
        click.echo(
            f"{len(report.problems)} problem(s) in {report.providers} provider(s); nothing imported", err=True
        )
        sys.exit(1)
    if dry_run:
        click.echo(f"dry run: {report.providers} provider(s) valid; nothing written")
    else:
        click.echo(f"imported {report.created} provider(s)")
