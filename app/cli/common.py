"""Helpers shared by the CLI commands."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from sqlmodel import Session

from app.db import get_engine
from app.services.audit import set_actor
from app.services.errors import ServiceError


def cli_session() -> Session:
    """A session whose changes are audited as made from the command line."""
    session = Session(get_engine(), expire_on_commit=False)
    set_actor(session, user_id=None, name="cli")
    return session


def print_json(data: Any) -> None:
    """Print JSON with Chinese kept readable."""
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def fail(exc: ServiceError) -> None:
    """Print a service error's field messages to stderr and exit 1."""
    for error in exc.errors:
        click.echo(f"error: {error.field or '-'}: {error.message}", err=True)
    sys.exit(1)
