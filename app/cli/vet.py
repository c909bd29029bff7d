"""`flask vet`: credential checks from the command line."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from app.cli.common import print_json
from app.vetting.identifiers import identify

vet_group = AppGroup("vet", help="Credential vetting tools.")


@vet_group.command("identify")
@click.argument("texts", nargs=-1, required=True)
def identify_command(texts: tuple[str, ...]) -> None:
    """Parse licence, filing and credit-code numbers; print one JSON object per TEXT."""
    print_json([identify(text).to_dict() for text in texts])
