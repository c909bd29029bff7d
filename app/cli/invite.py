"""`flask invite PROVIDER_ID`: create a disclosure invitation and print {id, url, expires_at} as JSON."""

from __future__ import annotations

import click
from flask.cli import with_appcontext

from app.cli.common import RECORD_ID, cli_session, fail, print_json
from app.core.errors import ServiceError


@click.command("invite")
@with_appcontext
@click.argument("provider_id", type=RECORD_ID)
@click.option("--email", help="E-mail the link to this address (when SMTP is configured).")
@click.option("--expires-days", type=click.IntRange(1, 365), help="Link lifetime (default: the setting, 14).")
def invite(provider_id: int, email: str | None, expires_days: int | None) -> None:
    """Invite provider PROVIDER_ID to fill in the disclosure questionnaire; prints the link once."""
    from app.disclosure import invitations

    data: dict[str, object] = {"provider_id": provider_id}
    if email:
        data["email"] = email
    if expires_days:
        data["expires_in_days"] = expires_days
    with cli_session() as session:
        try:
            created = invitations.create(session, data=data, actor_name="cli")
        except ServiceError as exc:
            fail(exc)
        print_json(created.as_dict())
    if created.url.startswith("/"):
        click.echo("note: set GPUVET_PUBLIC_URL to print the full address of the link", err=True)


COMMANDS = (invite,)
