"""`flask lookup`: official lookups from the command line (record one by hand, with a screenshot)."""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import AppGroup

from app.cli.common import RECORD_ID, cli_session, fail, print_json

lookup_group = AppGroup("lookup", help="Official lookups (ICP filing, telecom licence).")


@lookup_group.command("record")
@click.argument("provider_id", type=RECORD_ID)
@click.option("--kind", type=click.Choice(["icp", "licence"]), required=True, help="Which official system.")
@click.option("--found/--not-found", required=True, help="Whether the official site showed a record.")
@click.option(
    "--screenshot",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="PNG, JPEG or PDF of the official site's result (at most 5 MB; the type is read from the content).",
)
@click.option(
    "--looked-at", required=True, help="When you looked: 'YYYY-MM-DD HH:MM' (display zone) or ISO 8601."
)
@click.option("--by", "username", required=True, help="The analyst who looked (an existing user name).")
@click.option("--query", help="The name searched (default: the provider's legal name).")
@click.option("--holder-name", help="Unit (ICP) or company (licence) name shown.")
@click.option("--number", help="Filing number (ICP) or licence number shown.")
@click.option("--items", help="ICP: site name; licence: business items, separated by 、 or commas.")
@click.option("--nature", help="ICP: the unit's nature, e.g. 企业.")
@click.option("--domain", help="ICP: the site's domain.")
@click.option("--status", help="Licence: 正常 (default), 撤销, 无效, 吊销, 注销 or 过期.")
@click.option("--coverage", help="Licence: coverage.")
@click.option("--issue-date", help="Licence: YYYY-MM-DD.")
@click.option("--expiry-date", help="Licence: YYYY-MM-DD.")
@click.option("--note", help="A note (at most 1000 characters).")
def record_command(
    provider_id: int, kind: str, found: bool, screenshot: Path, username: str, **values: str | None
) -> None:
    """Record by hand what the official site showed for PROVIDER_ID; print the stored lookup as JSON."""
    from flask_babel import gettext as _
    from sqlmodel import select

    from app.api.lookups import lookup_json
    from app.core.audit import set_actor
    from app.core.errors import InvalidInput, ServiceError
    from app.credentials import manual_lookups
    from app.models import User

    with screenshot.open("rb") as handle:
        data = handle.read(manual_lookups.MAX_SCREENSHOT_BYTES + 1)
    with cli_session() as session:
        user = session.exec(select(User).where(User.username == username)).first()
        try:
            if user is None:
                raise InvalidInput(_("用户 %(name)s 不存在", name=username), field="by")
            set_actor(session, user_id=user.id, name=user.username)
            lookup = manual_lookups.record_manual(
                session,
                provider_id=provider_id,
                kind=kind,
                values={**values, "found": "yes" if found else "no"},
                screenshot=data,
                filename=screenshot.name,
                user=user,
            )
        except ServiceError as exc:
            fail(exc)
        print_json(lookup_json(lookup))
