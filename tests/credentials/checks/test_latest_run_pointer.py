"""provider.latest_check_run_id follows every writer of check runs, only forwards, and the dashboard, the
provider list filters and the findings overview read the same figures through it as from the runs."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime, timedelta

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from app.core import clock as localtime
from app.credentials import check_batch, checks
from app.models import Provider, latest_runs
from app.models.checks import CheckRun
from app.registry import dashboard, providers
from tests.web.conftest import provider_data

NOW = datetime.now(UTC)
DAY = date(2026, 12, 1)
STALE_DAYS = 30


def _provider(session: Session, name: str) -> int:
    return providers.create_provider(session, data=provider_data(legal_name=name, uscc=None)).id


def _direct_run(session: Session, provider_id: int, verdict: str, days_ago: float) -> int:
    """A run added through the session without the checks service (as tests and fixtures do)."""
    at = NOW - timedelta(days=days_ago)
    run = CheckRun(
        provider_id=provider_id, verdict=verdict, checked_on=at.date(), rules_version="t", created_at=at
    )
    session.add(run)
    session.commit()
    return run.id


def _pointers(session: Session) -> dict[int, int | None]:
    session.expire_all()
    return dict(session.exec(select(Provider.id, Provider.latest_check_run_id)).all())


def _newest_runs(session: Session) -> dict[int, CheckRun]:
    """Each provider's newest run, read from every run in Python (what the pointer must agree with)."""
    newest: dict[int, CheckRun] = {}
    for run in session.exec(select(CheckRun)).all():
        if run.provider_id not in newest or run.id > newest[run.provider_id].id:
            newest[run.provider_id] = run
    return newest


def test_a_single_check_and_a_batch_recheck_advance_the_pointer(session: Session):
    first, second, third = (_provider(session, f"指针算力{n}有限公司") for n in "一二三")
    assert set(_pointers(session).values()) == {None}
    single = checks.run_check(session, provider_id=first, today=DAY)
    assert _pointers(session) == {first: single.id, second: None, third: None}

    batch = check_batch.check_providers(session, [first, second, third], today=DAY, chunk=2)
    assert _pointers(session) == dict(zip([first, second, third], batch.run_ids, strict=True))
    assert min(batch.run_ids) > single.id

    again = checks.run_check(session, provider_id=second, today=DAY)
    assert _pointers(session)[second] == again.id


def test_an_older_run_never_replaces_a_newer_one(session: Session):
    provider_id = _provider(session, "单向算力有限公司")
    older = _direct_run(session, provider_id, "fail", 2)
    newer = _direct_run(session, provider_id, "pass", 1)
    assert _pointers(session)[provider_id] == newer  # runs added through a session move it too

    latest_runs.advance(session, provider_id=provider_id, run_id=older)
    session.commit()
    assert _pointers(session)[provider_id] == newer
    latest_runs.advance_many(session, [provider_id])  # the newest it sees is the newer run
    session.commit()
    assert _pointers(session)[provider_id] == newer


def _insert_run(connection: sa.Connection, provider_id: int) -> int:
    row = {"provider_id": provider_id, "verdict": "pass", "checked_on": DAY, "rules_version": "t"}
    row |= {"rule_ids": [], "fact_names": [], "fact_errors": {}, "blockers": 0, "warnings": 0, "infos": 0}
    row |= {"provider_version": 1, "created_by_name": "t", "created_at": NOW}
    return connection.execute(
        sa.insert(CheckRun.__table__).returning(CheckRun.__table__.c.id), row
    ).scalar_one()


def _wait_for_lock_wait(engine: sa.Engine) -> None:
    """Until another connection of this database waits for a row lock (at most 10 s)."""
    waiting = sa.text(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + 10
    with engine.connect() as probe:
        while probe.execute(waiting).scalar_one() == 0:
            assert time.monotonic() < deadline, "the older writer never waited for the newer one's lock"
            time.sleep(0.02)


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)  # SQLite has one writer at a time
@pytest.mark.parametrize("bulk", [False, True], ids=["single", "batch"])
def test_a_concurrent_older_writer_waits_and_leaves_the_newer_run(app, session: Session, bulk: bool):
    provider_id = _provider(session, "并发算力有限公司")
    engine = app.extensions["gpuvet.engine"]
    with engine.connect() as older, engine.connect() as newer:
        older_id = _insert_run(older, provider_id)
        newer_id = _insert_run(newer, provider_id)
        assert older_id < newer_id
        latest_runs.advance(newer, provider_id=provider_id, run_id=newer_id)  # holds the provider row

        def move_older() -> None:
            if bulk:  # its snapshot cannot see the newer run: the newest it sees is its own
                latest_runs.advance_many(older, [provider_id])
            else:
                latest_runs.advance(older, provider_id=provider_id, run_id=older_id)

        with ThreadPoolExecutor(max_workers=1) as pool:
            moving = pool.submit(move_older)
            _wait_for_lock_wait(engine)
            newer.commit()
            moving.result(timeout=10)
        older.commit()
    assert _pointers(session)[provider_id] == newer_id


def test_deleting_runs_leaves_no_dangling_pointer(session: Session):
    kept_provider, gone_provider = (
        _provider(session, "删除算力有限公司"),
        _provider(session, "注销算力有限公司"),
    )
    kept = _direct_run(session, kept_provider, "needs_review", 3)
    deleted = _direct_run(session, kept_provider, "pass", 1)
    _direct_run(session, gone_provider, "fail", 1)

    session.execute(sa.delete(CheckRun).where(CheckRun.id == deleted))
    assert _pointers(session)[kept_provider] is None  # the foreign key clears it within the statement
    latest_runs.recompute(session, [kept_provider])
    session.commit()
    assert _pointers(session)[kept_provider] == kept

    providers.delete_provider(session, provider_id=gone_provider)
    assert _pointers(session) == {kept_provider: kept}


def test_dashboard_lists_and_overview_agree_with_the_runs(session: Session):
    """Runs from every writer (single check, batch, direct inserts, a deletion): the figures read through the
    pointer equal those counted from each provider's newest run."""
    ids = [_provider(session, f"对照算力{n}有限公司") for n in range(7)]
    _direct_run(session, ids[0], "fail", 50)
    _direct_run(session, ids[0], "pass", 40)  # stale pass
    _direct_run(session, ids[1], "pass", 2)
    _direct_run(session, ids[1], "fail", 1)
    doomed = _direct_run(session, ids[2], "fail", 1)
    _direct_run(session, ids[2], "needs_review", 45)  # newer id, older date: the newest id counts
    checks.run_check(session, provider_id=ids[3], today=DAY)
    check_batch.check_providers(session, ids[4:6], today=DAY)
    session.execute(sa.delete(CheckRun).where(CheckRun.id == doomed))
    latest_runs.recompute(session, [ids[2]])
    session.commit()  # ids[6] never checked

    newest = _newest_runs(session)
    cutoff = dashboard.stale_cutoff(STALE_DAYS)
    expected_levels = {pid: newest[pid].verdict if pid in newest else "unchecked" for pid in ids}
    stale = {pid for pid, run in newest.items() if localtime.aware(run.created_at) < cutoff}
    assert stale == {ids[0], ids[2]}

    board = dashboard.dashboard(session, stale_days=STALE_DAYS)
    assert board.providers == len(ids)
    for level in dashboard.VERDICT_LEVELS:
        chosen = {pid for pid, found in expected_levels.items() if found == level}
        assert board.verdicts[level] == len(chosen), level
        listed = session.exec(select(Provider.id).where(dashboard.verdict_condition(level))).all()
        assert set(listed) == chosen, level
    assert board.stale == len(stale) and board.never_checked == 1
    assert (
        set(session.exec(select(Provider.id).where(dashboard.checked_condition("stale", STALE_DAYS))).all())
        == stale
    )
    assert set(
        session.exec(select(Provider.id).where(dashboard.checked_condition("never", STALE_DAYS))).all()
    ) == {ids[6]}

    overview = checks.findings_overview(session, query=checks.OverviewQuery(per_page=100))
    assert {run.id for run, _provider in overview.rows} == {run.id for run in newest.values()}
    assert overview.total == len(newest) and overview.never_checked == 1
