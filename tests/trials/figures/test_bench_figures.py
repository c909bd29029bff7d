"""Measured figures (bench_figure): written with the run or upload, rebuilt for older runs, read by advice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from sqlmodel import Session, select

from app.cases import registry_facts
from app.cli.db import alembic_config
from app.models import Offer, Provider
from app.models.bench_figure import FIGURE_KEYS, BenchFigure
from app.models.trials import BenchRun, BenchStep, RunState
from app.trials import bench_figures, bench_uploads
from tests.cases.test_measured_offers import (
    LINK,
    OFFER,
    TODAY,
    at,
    beijing_offers,
    facts_by_name,
    parsed,
    quick_steps,
    store_run,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "bench"
RDMA_OUTPUT = """
---------------------------------------------------------------------------------------
                    RDMA_Write BW Test
 Dual-port       : OFF          Device         : mlx5_0
 Number of qps   : 1            Transport type : IB
 Connection type : RC           Using SRQ      : OFF
---------------------------------------------------------------------------------------
 #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
 65536      5000             180.50             176.25               0.336000
 1048576    5000             190.10             188.40               0.022400
---------------------------------------------------------------------------------------
"""


@pytest.fixture
def offers(session: Session) -> list[Offer]:
    """Two identical offers (1 Gbps intranet, local NVMe, 500k IOPS) of a provider in Beijing."""
    return beijing_offers(session, "示例实测数据有限公司", ["实测套餐", "未测套餐"])


def figures_of(session: Session, run_id: int) -> dict[str, BenchFigure]:
    session.expire_all()
    rows = session.exec(select(BenchFigure).where(BenchFigure.run_id == run_id)).all()
    return {row.figure: row for row in rows}


def test_a_stored_run_writes_its_figures_in_the_same_transaction(session, offers):
    run = store_run(session, offers[0], quick_steps(800), at(3))
    stored = figures_of(session, run.id)
    assert set(stored) == {"intranet_gbps", "rtt_ms", "read_iops", "storage_type"}
    intranet = stored["intranet_gbps"]
    assert (intranet.value_num, intranet.unit, intranet.offer_id) == (0.8, "Gbps", offers[0].id)
    compared = next(c["verdict"] for c in run.comparisons if c["check"] == "bandwidth")
    assert intranet.origin == "executed" and intranet.verdict == compared
    assert stored["storage_type"].value_text and stored["storage_type"].value_num is None
    assert stored["read_iops"].verdict in ("pass", "warn", "fail")
    # the advice reads these rows: the same figures, typed back, with run, link and date
    measured = facts_by_name(session)["实测套餐"].measurements
    assert measured["intranet_gbps"].value == 0.8 and measured["intranet_gbps"].link == LINK(run.id)
    assert isinstance(measured["read_iops"].value, int)
    assert measured["read_iops"].value == round(stored["read_iops"].value_num)


def test_a_rolled_back_run_leaves_no_figures(session, offers):
    before = session.exec(select(sa.func.count()).select_from(BenchFigure)).one()
    run = BenchRun(
        provider_id=offers[0].provider_id, offer_id=offers[0].id, suite="quick", state=RunState.succeeded
    )
    session.add(run)
    session.flush()
    session.add(BenchStep(run_id=run.id, step="iperf3", probe="iperf3", samples=quick_steps(500)["iperf3"]))
    session.flush()
    assert session.exec(select(sa.func.count()).select_from(BenchFigure)).one() == before + 1
    session.rollback()
    assert session.exec(select(sa.func.count()).select_from(BenchFigure)).one() == before


def test_steps_stored_while_running_give_figures_only_once_the_run_succeeded(session, offers):
    run = BenchRun(
        provider_id=offers[0].provider_id, offer_id=offers[0].id, suite="quick", state=RunState.running
    )
    session.add(run)
    session.commit()
    session.add(BenchStep(run_id=run.id, step="iperf3", probe="iperf3", samples=quick_steps(300)["iperf3"]))
    session.commit()
    assert figures_of(session, run.id) == {}
    run.state, run.finished_at = RunState.succeeded, at(1)
    session.add(run)
    session.commit()
    assert figures_of(session, run.id)["intranet_gbps"].value_num == 0.3
    run.state = RunState.failed  # e.g. corrected by hand: a failed run supplies nothing
    session.add(run)
    session.commit()
    assert figures_of(session, run.id) == {}


def test_an_upload_writes_its_figures_marked_uploaded(session, offers):
    raw = (DATA / "iperf3_single.json").read_bytes()
    run = bench_uploads.upload_output(
        session, offer_id=offers[1].id, tool="iperf3", output=raw, path="intranet"
    )
    stored = figures_of(session, run.id)
    assert set(stored) == {"intranet_gbps"}
    assert stored["intranet_gbps"].origin == "uploaded"
    assert stored["intranet_gbps"].measured_at is not None
    measured = facts_by_name(session)["未测套餐"].measurements["intranet_gbps"]
    assert measured.origin == "uploaded" and measured.run_id == run.id


def test_refresh_rebuilds_figures_of_runs_stored_before_the_table(app, session, offers):
    store_run(session, offers[0], quick_steps(800), at(3))
    store_run(session, offers[1], quick_steps(400), at(200))  # stale
    expected = {
        o.name: o.measurements for o in registry_facts.offer_facts(session, today=TODAY, run_link=LINK)
    }
    session.execute(sa.delete(BenchFigure))  # as if the runs were stored before bench_figure existed
    session.commit()
    assert all(not o.measurements for o in registry_facts.offer_facts(session, today=TODAY))
    result = app.test_cli_runner().invoke(args=["bench", "refresh-figures"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"runs": 2, "figures": 8}
    session.expire_all()
    rebuilt = {
        o.name: o.measurements for o in registry_facts.offer_facts(session, today=TODAY, run_link=LINK)
    }
    assert rebuilt == expected and rebuilt["未测套餐"]["intranet_gbps"].value == 0.4


def test_a_fresh_upload_beats_a_stale_run_until_both_are_stale(session, offers):
    executed = store_run(session, offers[0], quick_steps(900), at(120))  # stale at TODAY (90 days)
    raw = (DATA / "iperf3_single.json").read_bytes()
    upload = bench_uploads.upload_output(
        session, offer_id=offers[0].id, tool="iperf3", output=raw, path="intranet"
    )
    by_today = registry_facts.offer_measurements(session, today=upload.finished_at.date())[offers[0].id]
    assert by_today["intranet_gbps"].run_id == upload.id
    # the same rows read a year later: both stale, and the run gpuvet executed is trusted first again,
    # so precedence is decided when reading, never frozen when the rows were written
    later = upload.finished_at.date().replace(year=upload.finished_at.year + 1)
    assert (
        registry_facts.offer_measurements(session, today=later)[offers[0].id]["intranet_gbps"].run_id
        == executed.id
    )


def test_an_executed_run_beats_a_newer_upload_of_the_same_age_band(session, offers):
    executed = store_run(session, offers[0], quick_steps(700), at(5))
    raw = (DATA / "iperf3_single.json").read_bytes()
    bench_uploads.upload_output(session, offer_id=offers[0].id, tool="iperf3", output=raw, path="intranet")
    measured = registry_facts.offer_measurements(session, today=TODAY)[offers[0].id]["intranet_gbps"]
    assert measured.run_id == executed.id and measured.origin == "executed"


def test_measured_rdma_bandwidth_beats_the_claim(session, offers):
    samples = parsed("perftest", RDMA_OUTPUT, step="rdma", path="intranet")
    assert any(sample["metric"] == "rdma_gbps" for sample in samples)
    run = store_run(session, offers[0], {"rdma": samples}, at(2))
    stored = figures_of(session, run.id)["rdma_gbps"]
    assert (stored.value_num, stored.unit) == (188.4, "Gbps")
    measured = facts_by_name(session)["实测套餐"].measurements["rdma_gbps"]
    assert measured.value == 188.4 and measured.run_id == run.id


def test_figure_rows_hold_every_figure_the_advice_reads():
    class Run:
        id, offer_id, provider_id, origin = 1, 2, 3, "executed"
        claims = {"storage_type": "local_nvme", "intranet_gbps": 1}
        comparisons = [{"check": "stability", "verdict": "warn"}]
        created_at = finished_at = at(1)

    samples = [s for rows in quick_steps(500).values() for s in rows]
    rows = {row["figure"]: row for row in bench_figures.figure_rows(Run, samples)}
    assert rows["bandwidth_type"]["value_text"] == "shared" and rows["bandwidth_type"]["verdict"] == "warn"
    assert set(rows) <= set(FIGURE_KEYS)


def test_the_migration_fills_in_figures_of_runs_stored_before_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'before-figures.sqlite3'}"
    config = alembic_config(url)
    command.upgrade(config, "0011")
    engine = sa.create_engine(url)
    try:
        with Session(engine) as session:
            # plain inserts: the models describe the newest schema (later columns), the database is at 0011
            connection = session.connection()
            provider_id = connection.execute(
                sa.insert(Provider.__table__).returning(Provider.__table__.c.id),
                {"legal_name": "示例迁移数据有限公司"},
            ).scalar_one()
            offer_columns = {key: value for key, value in OFFER.items() if key in Offer.__table__.c}
            offer_id = connection.execute(
                sa.insert(Offer.__table__).returning(Offer.__table__.c.id),
                {**offer_columns, "provider_id": provider_id},
            ).scalar_one()
            run_id = (
                session.connection()
                .execute(
                    sa.insert(BenchRun.__table__).returning(BenchRun.__table__.c.id),
                    {
                        "provider_id": provider_id,
                        "offer_id": offer_id,
                        "suite": "quick",
                        "params": {},
                        "state": "succeeded",
                        "claims": {"intranet_gbps": 1},
                        "comparisons": [],
                        "created_at": at(2),
                        "finished_at": at(2),
                    },
                )
                .scalar_one()
            )
            session.connection().execute(
                sa.insert(BenchStep.__table__),
                {
                    "run_id": run_id,
                    "step": "iperf3",
                    "probe": "iperf3",
                    "options": {},
                    "outputs": [],
                    "parse_errors": [],
                    "samples": quick_steps(600)["iperf3"],
                },
            )
            session.commit()
        command.upgrade(config, "0012")
        with engine.connect() as connection:
            rows = connection.execute(sa.select(BenchFigure.__table__)).all()
        assert [(row.run_id, row.figure, row.value_num) for row in rows] == [(run_id, "intranet_gbps", 0.6)]
    finally:
        engine.dispose()
