"""Migrations build exactly the models' schema on SQLite and PostgreSQL, from an empty database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import SQLModel

from app.cli.db import alembic_config
from tests.conftest import missing_tool, postgres_url, private_postgres_database


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_database(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """An empty database of each backend (PostgreSQL: a private throw-away database)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'migrations.sqlite3'}"
        return
    url = postgres_url()
    if not url:
        missing_tool("GPUVET_TEST_POSTGRES_URL is not set")
    with private_postgres_database(url) as private_url:
        yield private_url


def _differences(url: str) -> list:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(connection, opts={"compare_type": True})
            return compare_metadata(context, SQLModel.metadata)
    finally:
        engine.dispose()


def test_upgrade_from_empty_matches_models(empty_database: str) -> None:
    command.upgrade(alembic_config(empty_database), "head")
    assert _differences(empty_database) == []


def test_downgrade_to_base_and_back(empty_database: str) -> None:
    config = alembic_config(empty_database)
    command.upgrade(config, "head")
    command.downgrade(config, "base")
    engine = sa.create_engine(empty_database)
    try:
        remaining = set(sa.inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()
    assert remaining == set()
    command.upgrade(config, "head")
    assert _differences(empty_database) == []
