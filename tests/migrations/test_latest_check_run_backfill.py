"""Migration 0014 points every provider at its newest check run (NULL when never checked), both backends."""

from __future__ import annotations

from datetime import UTC, date, datetime

import sqlalchemy as sa
from alembic import command

from app.cli.db import alembic_config
from tests.migrations.test_migrations import empty_database  # noqa: F401 - the fixture, both backends

NOW = datetime(2026, 12, 1, 8, tzinfo=UTC)


def _provider_row(number: int) -> dict:
    return {"id": number, "legal_name": f"回填算力{number}有限公司", "status": "active"}


def _run_row(provider_id: int) -> dict:
    return {
        "provider_id": provider_id,
        "verdict": "pass",
        "blockers": 0,
        "warnings": 0,
        "infos": 0,
        "checked_on": date(2026, 12, 1),
        "provider_version": 1,
        "rules_version": "t",
        "rule_ids": [],
        "fact_names": [],
        "fact_errors": {},
        "created_by_name": "t",
        "created_at": NOW,
    }


def test_0014_backfills_each_providers_newest_run(empty_database: str) -> None:  # noqa: F811
    config = alembic_config(empty_database)
    command.upgrade(config, "0013")
    engine = sa.create_engine(empty_database)
    try:
        with engine.begin() as connection:
            tables = sa.MetaData()
            provider = sa.Table("provider", tables, autoload_with=connection)
            check_run = sa.Table("check_run", tables, autoload_with=connection)
            stamps = {"version": 1, "created_at": NOW, "updated_at": NOW}
            connection.execute(sa.insert(provider), [_provider_row(n) | stamps for n in (1, 2, 3)])
            for provider_id in (1, 2, 1, 2, 1):  # interleaved: the newest id of each, not the last inserted
                connection.execute(sa.insert(check_run), _run_row(provider_id))
            newest = dict(
                connection.execute(
                    sa.select(check_run.c.provider_id, sa.func.max(check_run.c.id)).group_by(
                        check_run.c.provider_id
                    )
                ).all()
            )
        command.upgrade(config, "0014")
        with engine.connect() as connection:
            pointers = dict(connection.execute(sa.text("SELECT id, latest_check_run_id FROM provider")).all())
            keys = sa.inspect(connection).get_foreign_keys("provider")
        assert pointers == {1: newest[1], 2: newest[2], 3: None}
        assert newest[1] > newest[2]
        pointer_key = next(key for key in keys if key["constrained_columns"] == ["latest_check_run_id"])
        assert pointer_key["referred_table"] == "check_run"
        assert pointer_key["options"].get("ondelete") == "SET NULL"

        command.downgrade(config, "0013")
        with engine.connect() as connection:
            columns = {column["name"] for column in sa.inspect(connection).get_columns("provider")}
        assert "latest_check_run_id" not in columns and "legal_name" in columns
    finally:
        engine.dispose()
