"""Helpers shared by the CLI commands.

Command modules are imported for every `flask` command, so they import models, services and heavy
libraries inside the command functions, and LazyChoice defers choices that need them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import click

from app.core.limits import MAX_ID

if TYPE_CHECKING:
    from sqlmodel import Session

    from app.core.errors import ServiceError

# A record id argument: anything outside 1..MAX_ID is a usage error, never a database error.
RECORD_ID = click.IntRange(1, MAX_ID)


def cli_session() -> Session:
    """A session whose changes are audited as made from the command line."""
    from sqlmodel import Session

    from app.core.audit import set_actor
    from app.core.db import get_engine

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


class LazyChoice(click.Choice):
    """A click.Choice whose values come from `load()` on first use, so defining a command imports nothing."""

    def __init__(self, load: Callable[[], Iterable[str]], case_sensitive: bool = True) -> None:
        self._load = load
        self._loaded: tuple[str, ...] | None = None
        super().__init__((), case_sensitive=case_sensitive)

    @property
    def choices(self) -> tuple[str, ...]:  # type: ignore[override]
        """The values, loaded once."""
        if self._loaded is None:
            self._loaded = tuple(self._load())
        return self._loaded

    @choices.setter
    def choices(self, _value: Any) -> None:
        """click.Choice.__init__ assigns the (empty) values; the loader supplies them instead."""
