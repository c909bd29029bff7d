"""`flask vet footer URL_OR_FILE`: the numbers and company name a website (or a saved page) shows."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from flask import current_app

from app.cli.common import print_json
from app.cli.vet import vet_group

if TYPE_CHECKING:
    from scrapers import footer


def _page_summary(page: footer.PageOutcome) -> dict:
    result = page.result
    return {
        "url": page.url,
        "final_url": result.final_url if result is not None else None,
        "status": result.status if result is not None else None,
        "sha256": result.sha256 if result is not None else None,
        "error": str(page.error) if page.error else None,
    }


@vet_group.command("footer")
@click.argument("target")
def footer_command(target: str) -> None:
    """Print {"identifiers": [...], "company_name": ...} for a URL (home + linked pages) or a saved FILE."""
    from app.credentials.evidence import http_client
    from scrapers import footer
    from scrapers.http import FetchError

    if target.startswith(("http://", "https://")):
        with http_client(current_app.config["GPUVET_SETTINGS"]) as client:
            site = footer.scrape_site(target, client.fetch)
        home = site.pages[0]
        if home.footer is None:
            click.echo(f"error: url: {home.error}", err=True)
            sys.exit(1)
        print_json({**site.merged.to_dict(), "pages": [_page_summary(page) for page in site.pages]})
        return
    path = Path(target)
    if not path.is_file():
        message = f"{target} 不是文件，也不是 http(s) 网址 (not a file or http(s) URL)"
        click.echo(f"error: target: {message}", err=True)
        sys.exit(2)
    try:
        result = footer.parse(path.read_bytes())
    except (footer.ParseError, FetchError) as exc:
        click.echo(f"error: file: {exc}", err=True)
        sys.exit(1)
    print_json(result.to_dict())
