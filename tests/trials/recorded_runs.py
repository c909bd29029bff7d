"""Real quick runs executed once per backend and test session, their rows restored into each test's database.

Tests that only read finished runs (pages, comparisons, figures) restore these rows instead of paying a real
run (~5 s of sshd, ping, iperf3 and fio) each; a test may change its restored copy freely, the next test
gets the rows as recorded. Tests whose subject is running (timing, progress, the shaped link) run their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from sqlmodel import Session, SQLModel

from app import create_app
from app.core.config import Settings
from app.models.trials import RunState
from app.registry.providers import create_provider
from app.trials import bench_runs
from app.trials import servers as trials
from app.trials.server_addresses import address_policy
from app.trials.servers import cipher_from_settings
from tests.bench_support.sshd import Sshd
from tests.conftest import _empty_tables

# The recorded runs' offer sells a 500 Mbit/s public link (a loopback iperf3 measures many Gbit/s).
SOLD = {"gpu_model": "H800", "gpus_per_node": 8, "public_mbps": 500, "storage_type": "local_nvme"}
RUNS = 2
# Move a table's id sequence past the restored ids (a test's own rows are numbered after them).
SET_SEQUENCE = """SELECT setval(pg_get_serial_sequence('"{table}"', 'id'), MAX(id)) FROM "{table}\""""


@dataclass(frozen=True)
class Recording:
    """The rows of every table after the runs (parents first), and the ids the tests look up."""

    rows: dict[str, list[dict[str, Any]]]
    provider_id: int
    server_id: int
    run_ids: tuple[int, ...]


def _deferred(table: sa.Table) -> list[str]:
    """Columns of a foreign key that closes a cycle (use_alter): set after every table is filled."""
    return [
        column.name
        for column in table.columns
        if any(key.use_alter or key.constraint.use_alter for key in column.foreign_keys)
    ]


def snapshot(engine: sa.Engine) -> dict[str, list[dict[str, Any]]]:
    """Every row of every model table, parents first."""
    with engine.connect() as connection:
        found = {
            table.name: [dict(row) for row in connection.execute(sa.select(table)).mappings()]
            for table in SQLModel.metadata.sorted_tables
        }
    return {name: rows for name, rows in found.items() if rows}


def restore(engine: sa.Engine, rows: dict[str, list[dict[str, Any]]]) -> None:
    """Insert recorded rows into an emptied database (ids kept; PostgreSQL sequences moved past them)."""
    tables = [table for table in SQLModel.metadata.sorted_tables if table.name in rows]
    with engine.begin() as connection:
        for table in tables:
            later = _deferred(table)
            connection.execute(
                sa.insert(table), [{**row, **dict.fromkeys(later)} for row in rows[table.name]]
            )
        for table in tables:
            for name in _deferred(table):
                for row in rows[table.name]:
                    if row[name] is not None:
                        key = sa.and_(*(column == row[column.name] for column in table.primary_key))
                        connection.execute(sa.update(table).where(key).values({name: row[name]}))
        if engine.dialect.name == "postgresql":
            for table in tables:
                if "id" in table.c and table.c.id.autoincrement:
                    connection.execute(sa.text(SET_SEQUENCE.format(table=table.name)))


def record(database_url: str, sshd: Sshd, folder: Path) -> Recording:
    """Execute RUNS quick runs on a pinned server of a SOLD offer, then keep the database's rows."""
    settings = Settings(GPUVET_INSTANCE_PATH=folder / "instance", DATABASE_URL=database_url)
    settings = settings.model_copy(update={"trial_allow_cidrs": ("127.0.0.0/8",)})
    app = create_app(settings, TESTING=True)
    engine = app.extensions["gpuvet.engine"]
    _empty_tables(engine)
    cipher, policy = cipher_from_settings(settings), address_policy(settings)
    from tests.trials.conftest import quick_params, server_data

    try:
        with app.app_context(), Session(engine, expire_on_commit=False) as session:
            provider = create_provider(session, data={"legal_name": "示例链路算力有限公司", "offers": [SOLD]})
            data = server_data(sshd, offer_id=provider.offers[0].id)
            server = trials.create_server(
                session, provider_id=provider.id, data=data, cipher=cipher, policy=policy
            )
            trials.pin_host_key(
                session, server_id=server.id, fingerprint=sshd.host_fingerprint, key_type="ssh-ed25519"
            )
            run_ids = []
            for _ in range(RUNS):
                run = bench_runs.create_run(
                    session, server_id=server.id, suite="quick", params=quick_params(folder)
                )
                done = bench_runs.execute_run(session, run_id=run.id, cipher=cipher, policy=policy)
                assert done.state == RunState.succeeded, done.error
                run_ids.append(done.id)
            ids = (provider.id, server.id, tuple(run_ids))
        return Recording(snapshot(engine), *ids)
    finally:
        _empty_tables(engine)
        engine.dispose()


@pytest.fixture(scope="session")
def recorded_runs(
    database_url: str, trial_server: Sshd, tmp_path_factory: pytest.TempPathFactory
) -> Recording:
    """Two real quick runs of one server (its offer sells 500 Mbit/s), executed once per backend."""
    return record(database_url, trial_server, tmp_path_factory.mktemp("recorded-runs"))


@pytest.fixture
def restored_runs(app, recorded_runs: Recording) -> Recording:
    """The recorded runs' rows in this test's fresh database (ask for it before fixtures that add rows)."""
    restore(app.extensions["gpuvet.engine"], recorded_runs.rows)
    return recorded_runs
