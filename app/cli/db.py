"""`flask db`: Alembic migrations against the configured database."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click
from flask import current_app
from flask.cli import AppGroup

from app.core.config import PROJECT_ROOT

if TYPE_CHECKING:
    from alembic.config import Config

db_group = AppGroup("db", help="Database migrations (Alembic).")


def alembic_config(url: str) -> Config:
    """Alembic configuration pointing at migrations/ and the given database."""
    from alembic.config import Config

    config = Config(str(PROJECT_ROOT / "migrations" / "alembic.ini"))
    config.set_main_option("script_location", str(PROJECT_ROOT / "migrations"))
    config.attributes["database_url"] = url
    return config


def _url() -> str:
    """The configured database URL; a SQLite file is created 0600 before Alembic opens it."""
    from app.core.db import private_sqlite_file

    url = current_app.config["GPUVET_SETTINGS"].resolved_database_url()
    private_sqlite_file(url)
    return url


@db_group.command("upgrade")
@click.argument("revision", default="head")
def upgrade(revision: str) -> None:
    """Apply migrations up to REVISION (default: head)."""
    from alembic import command

    command.upgrade(alembic_config(_url()), revision)


@db_group.command("downgrade")
@click.argument("revision")
def downgrade(revision: str) -> None:
    """Revert migrations down to REVISION."""
    from alembic import command

    command.downgrade(alembic_config(_url()), revision)


@db_group.command("current")
def current() -> None:
    """Show the applied revision."""
    from alembic import command

    command.current(alembic_config(_url()), verbose=True)


@db_group.command("revision")
@click.option("-m", "--message", required=True)
def revision(message: str) -> None:
    """Autogenerate a new migration from the models."""
    from alembic import command

    command.revision(alembic_config(_url()), message=message, autogenerate=True)
