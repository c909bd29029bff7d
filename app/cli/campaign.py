"""`flask bench campaign`: plan a peak-hour campaign on a trial server (its windows start on the tick)."""

from __future__ import annotations

import click

from app.cli.bench import _params, bench_group
from app.cli.common import RECORD_ID, cli_session, fail, print_json
from app.core.errors import ServiceError


@bench_group.command("campaign")
@click.argument("server_id", type=RECORD_ID)
@click.option("--days", required=True, help="How many days (1-14).")
@click.option("--peak", default="20:00-23:00", show_default=True, help="Peak window, local HH:MM-HH:MM.")
@click.option("--offpeak", default="03:00-06:00", show_default=True, help="Off-peak window, local time.")
@click.option("--param", "pairs", multiple=True, metavar="NAME=VALUE", help="A suite parameter (repeatable).")
def campaign_command(server_id: int, days: str, peak: str, offpeak: str, pairs: tuple[str, ...]) -> None:
    """Plan the stability suite on SERVER_ID in each peak and off-peak window; prints the campaign as JSON."""
    from app.trials import campaign_reads, campaigns

    with cli_session() as session:
        try:
            campaign = campaigns.create_campaign(
                session, server_id=server_id, days=days, peak=peak, offpeak=offpeak, params=_params(pairs)
            )
        except ServiceError as exc:
            fail(exc)
        print_json(campaign_reads.campaign_public(session, campaign))
