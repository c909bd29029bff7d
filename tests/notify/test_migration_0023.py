"""Migration 0023 keeps what existing users had (watching nothing unless they chose watch-all), so only
users created after it watch everything by default; both backends."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

from app.cli.db import alembic_config
from tests.migrations.test_migrations import empty_database  # noqa: F401 - the fixture, both backends

NOW = datetime(2026, 12, 1, 8, tzinfo=UTC)


def _user(number: int) -> dict:
    return {"id": number, "username": f"user{number}", "password_hash": "x", "role": "viewer"}


def test_0023_stores_watch_nothing_for_users_without_settings(empty_database: str) -> None:  # noqa: F811
    config = alembic_config(empty_database)
    command.upgrade(config, "0022")
    engine = sa.create_engine(empty_database)
    try:
        with engine.begin() as connection:
            tables = sa.MetaData()
            user = sa.Table("user", tables, autoload_with=connection)
            settings = sa.Table("notify_settings", tables, autoload_with=connection)
            connection.execute(
                sa.insert(user), [_user(n) | {"active": True, "created_at": NOW} for n in (1, 2, 3)]
            )
            connection.execute(  # user 2 chose watch-all before: kept as it is
                sa.insert(settings),
                {"user_id": 2, "watch_all": True, "email_enabled": False, "updated_at": NOW},
            )
        command.upgrade(config, "0023")
        with engine.connect() as connection:
            rows = connection.execute(
                sa.text("SELECT user_id, watch_all, email_enabled FROM notify_settings ORDER BY user_id")
            ).all()
            assert [(user_id, bool(all_), bool(mail)) for user_id, all_, mail in rows] == [
                (1, False, False),
                (2, True, False),
                (3, False, False),
            ]
            assert connection.execute(sa.text("SELECT count(*) FROM runtime_setting")).scalar() == 0
        command.downgrade(config, "0022")
        with engine.connect() as connection:
            assert "runtime_setting" not in sa.inspect(connection).get_table_names()
    finally:
        engine.dispose()
