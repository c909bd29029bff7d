"""Migrations build exactly the models' schema on SQLite and PostgreSQL, from an empty database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlmodel import Session, SQLModel

from app.cli.db import alembic_config
from app.models import Provider, registry_version
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


def _registry_triggers(engine: sa.Engine) -> set[tuple[str, str]]:
    """(table, trigger) of every registry_version trigger in the database."""
    if engine.dialect.name == "postgresql":
        query = sa.text(
            "SELECT c.relname, t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE t.tgname LIKE :prefix"
        )
    else:
        query = sa.text(
            "SELECT tbl_name, name FROM sqlite_master WHERE type = 'trigger' AND name LIKE :prefix"
        )
    with engine.connect() as connection:
        return {(table, name) for table, name in connection.execute(query, {"prefix": "registry_changed%"})}


def test_the_head_schema_has_every_registry_trigger_and_moves_the_counter(empty_database: str) -> None:
    # SQLite's batch mode rebuilds a table without its triggers: a later revision that alters a watched
    # table this way must create them again, or kept advice would go stale
    command.upgrade(alembic_config(empty_database), "head")
    engine = sa.create_engine(empty_database)
    try:
        expected = set(registry_version.WATCHED)
        per_table = 1 if engine.dialect.name == "postgresql" else 3
        found = _registry_triggers(engine)
        assert {table for table, _name in found} == expected and len(found) == per_table * len(expected)
        with Session(engine) as session:
            session.add(Provider(legal_name="示例迁移算力有限公司"))
            session.commit()
        with engine.connect() as connection:
            assert connection.exec_driver_sql("SELECT n FROM registry_version").scalar_one() == 1
            stamps = connection.exec_driver_sql("SELECT provider_id, n FROM provider_version").all()
            assert [tuple(row) for row in stamps] == [(1, 1)]
    finally:
        engine.dispose()


def test_0016_stamps_every_existing_provider_so_tables_kept_before_it_are_read_again(
    empty_database: str,
) -> None:
    config = alembic_config(empty_database)
    command.upgrade(config, "0015")
    engine = sa.create_engine(empty_database)
    try:
        with engine.begin() as connection:
            for name in ("示例甲算力有限公司", "示例乙算力有限公司"):
                connection.execute(
                    sa.text(
                        "INSERT INTO provider (legal_name, status, created_at, updated_at, "
                        "version) VALUES (:name, 'candidate', :at, :at, 1)"
                    ),
                    {"name": name, "at": "2026-12-01 00:00:00"},
                )
        command.upgrade(config, "0016")
        with engine.connect() as connection:
            counted = connection.exec_driver_sql("SELECT n FROM registry_version").scalar_one()
            stamps = connection.exec_driver_sql("SELECT provider_id, n FROM provider_version").all()
        assert counted >= 1 and sorted(tuple(row) for row in stamps) == [(1, counted), (2, counted)]
        command.downgrade(config, "0015")  # the counter-only triggers again: writes still move it
        with engine.begin() as connection:
            connection.execute(sa.text("UPDATE provider SET short_name = 'x' WHERE id = 1"))
        with engine.connect() as connection:
            assert connection.exec_driver_sql("SELECT n FROM registry_version").scalar_one() > counted
    finally:
        engine.dispose()
