"""`flask providers`: export and import the provider registry (JSON or CSV)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from flask.cli import AppGroup

from app.cli.common import LazyChoice, cli_session


def _formats() -> tuple[str, ...]:
    from app.registry.transfer.formats import FORMATS

    return FORMATS


providers_group = AppGroup("providers", help="Export and import providers.")


@providers_group.command("export")
@click.option("--format", "fmt", type=LazyChoice(_formats), default="json", show_default=True)
@click.option(
    "--headers",
    type=click.Choice(["en", "zh"]),
    default="en",
    show_default=True,
    help="CSV column headers in English or Chinese (import reads either).",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="File to write (default: stdout)."
)
def export_command(fmt: str, headers: str, output: Path | None) -> None:
    """Write every provider with all nested records as JSON or CSV."""
    from app.registry.transfer.export import export_providers

    with cli_session() as session:
        text = export_providers(session, fmt, headers=headers)
    if output is None:
        click.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8", newline="")
    click.echo(f"exported to {output}", err=True)


@providers_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--format", "fmt", type=LazyChoice(_formats), help="Default: from the file extension.")
@click.option("--apply", "apply", is_flag=True, help="Write the changes (all or nothing). Default: preview.")
@click.option("--dry-run", is_flag=True, hidden=True, help="Preview only (the default; for old scripts).")
def import_command(file: str, fmt: str | None, apply: bool, dry_run: bool) -> None:
    """Preview importing FILE as JSON on stdout: per provider new/update/unchanged and per field old -> new.

    Providers are matched by credit code (or by the file's id) and updated; the rest are created. With
    --apply the previewed changes are written in one transaction; any refused row means nothing is written.
    Exits 1 when a row is refused.
    """
    from app.registry.transfer.formats import format_for_filename
    from app.registry.transfer.importing import import_providers

    if apply and dry_run:
        raise click.UsageError("--apply and --dry-run exclude each other")
    fmt = fmt or format_for_filename(file)
    if fmt is None:
        raise click.UsageError("cannot tell the format from the file name; pass --format json or csv")
    data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    with cli_session() as session:
        report = import_providers(session, data=data, format=fmt, dry_run=not apply)
    click.echo(json.dumps(report.as_dict(), ensure_ascii=False, indent=2, default=str))
    for problem in report.problems:
        click.echo(f"error: {problem}", err=True)
    if report.problems:
        sys.exit(1)
    if apply:
        click.echo(f"applied: {report.created} created, {report.updated} updated", err=True)
    else:
        click.echo(
            f"preview: {report.new} new, {report.updated} to update, {report.unchanged} unchanged;"
            " nothing written (add --apply to write)",
            err=True,
        )
