"""`flask demo`: load the fictional demo providers."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from app.cli.common import cli_session, fail

demo_group = AppGroup("demo", help="Demo data.")


@demo_group.command("load")
@click.option("--if-empty", is_flag=True, help="Do nothing when any provider exists.")
def load_command(if_empty: bool) -> None:
    """Load the clearly fictional demo providers (every red flag represented)."""
    from app.services import demo
    from app.services.errors import ServiceError

    with cli_session() as session:
        if if_empty and demo.has_providers(session):
            click.echo("providers already present; demo data not loaded (--if-empty)")
            return
        try:
            count = demo.load_demo(session)
        except ServiceError as exc:
            fail(exc)
    click.echo(f"loaded {count} demo providers")
