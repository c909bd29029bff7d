"""Schedules: due periods in Asia/Shanghai, claimed once, and run by a real worker under an injected clock."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlmodel import Session, func, select

from app.core import clock as localtime
from app.models.checks import CheckRun
from app.models.jobs import Job, JobState
from app.models.watch import ChangeEvent, ScheduleRun
from app.notify import schedules
from app.registry.providers import create_provider
from tests.core.jobs.test_worker_process import DEADLINE_S, worker
from tests.credentials.test_change_events import LICENCE, TODAY

DAILY, WEEKLY, PRUNE = schedules.SCHEDULES
# 2026-12-02 04:00 in Shanghai (a Wednesday): the daily 03:00 is due for the 2nd, the weekly for Monday 30 Nov
WEDNESDAY_4AM = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)


def local(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=localtime._zone("Asia/Shanghai"))


@pytest.mark.parametrize(
    ("now", "daily", "weekly"),
    [
        ("2026-12-02 04:00", "2026-12-02", "2026-11-30"),
        ("2026-12-02 02:59", "2026-12-01", "2026-11-30"),  # before 03:00: yesterday's is the latest due
        ("2026-11-30 03:59", "2026-11-30", "2026-11-23"),  # Monday before 04:00: last week's
        ("2026-11-30 04:00", "2026-11-30", "2026-11-30"),
    ],
)
def test_latest_due_period_in_local_time(now: str, daily: str, weekly: str):
    assert DAILY.latest_due(local(now)).isoformat() == daily
    assert WEEKLY.latest_due(local(now)).isoformat() == weekly


def test_a_period_is_started_once(app, session: Session):
    with app.app_context():
        first = schedules.tick(session, WEDNESDAY_4AM)
        assert sorted(job.kind for job in first) == ["notify.prune", "watch.daily", "watch.footers"]
        assert schedules.tick(session, WEDNESDAY_4AM + timedelta(minutes=1)) == []
        following = schedules.tick(session, WEDNESDAY_4AM + timedelta(days=1))
        assert [(job.kind, job.params) for job in following] == [
            ("watch.daily", {"period": "2026-12-03"}),
            ("notify.prune", {"period": "2026-12-03"}),
        ]
    periods = session.exec(select(ScheduleRun.schedule, ScheduleRun.period).order_by(ScheduleRun.id)).all()
    assert periods == [
        ("daily_checks", "2026-12-02"),
        ("weekly_footers", "2026-11-30"),
        ("notify_prune", "2026-12-02"),
        ("daily_checks", "2026-12-03"),
        ("notify_prune", "2026-12-03"),
    ]


def _count(app, model, *where) -> int:
    with Session(app.extensions["gpuvet.engine"]) as fresh:
        return fresh.exec(select(func.count()).select_from(model).where(*where)).one()


def _wait(app, log: Path, done) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if done():
            return
        time.sleep(0.2)
    pytest.fail(f"the schedule did not finish in {DEADLINE_S} s; worker log:\n{log.read_text()[-4000:]}")


def _ticks(log: Path) -> int:
    """How many schedule ticks the worker log shows as executed (one per worker start here)."""
    return (
        len(re.findall(rf"{re.escape(schedules.TASK_NAME)}: \S+ executed", log.read_text()))
        if log.exists()
        else 0
    )


@pytest.mark.slow
def test_a_real_worker_runs_the_daily_schedule_once_per_day(app, session: Session, database_url, tmp_path):
    expiring = {**LICENCE, "expires_on": (TODAY + timedelta(days=20)).isoformat()}
    for name in ("示例日检算力有限公司", "示例周检算力有限公司"):
        create_provider(session, data={"legal_name": name, "licences": [expiring]})
    log = tmp_path / "worker.log"

    def run_worker_at(now: datetime, ticks: int) -> None:
        clock = {"GPUVET_SCHEDULES": "1", "GPUVET_TEST_NOW": now.isoformat()}
        with worker(app, database_url, log, extra_env=clock):
            _wait(
                app,
                log,
                lambda: _ticks(log) >= ticks and not _count(app, Job, Job.state.in_(("queued", "running"))),
            )

    run_worker_at(WEDNESDAY_4AM, ticks=1)
    assert _count(app, CheckRun) == 2  # both providers re-checked for the 2nd
    assert _count(app, ChangeEvent, ChangeEvent.kind == "expiring") == 2  # 19 days left on the 2nd: once each
    assert _count(app, Job, Job.kind == "watch.daily", Job.state == JobState.succeeded) == 1

    run_worker_at(WEDNESDAY_4AM + timedelta(hours=2), ticks=2)  # restarted the same day: nothing again
    assert _count(app, CheckRun) == 2 and _count(app, Job, Job.kind == "watch.daily") == 1

    run_worker_at(WEDNESDAY_4AM + timedelta(days=14), ticks=3)  # two weeks on: 5 days left, new period
    assert _count(app, CheckRun) == 4
    assert _count(app, ChangeEvent, ChangeEvent.kind == "expiring") == 4  # the 7-day threshold, once each
    assert _count(app, ScheduleRun, ScheduleRun.schedule == "weekly_footers") == 2


@pytest.mark.parametrize(
    ("url", "reserved"),
    [
        ("https://xinghe-compute.example/", True),
        ("http://shop.test", True),
        ("https://www.example.com/about", True),
        ("https://www.aliyun.com/", False),
        ("https://example.com.cn/", False),
        (None, False),
    ],
)
def test_reserved_documentation_domains_are_never_scraped(url, reserved):
    assert schedules.reserved_domain(url) is reserved


def test_next_run_of_each_schedule():
    wednesday = local("2026-12-02 04:00")
    assert schedules.next_due(DAILY, wednesday).isoformat() == "2026-12-03T03:00:00+08:00"
    assert schedules.next_due(WEEKLY, wednesday).isoformat() == "2026-12-07T04:00:00+08:00"
    assert schedules.next_due(PRUNE, local("2026-12-02 02:00")).isoformat() == "2026-12-02T02:30:00+08:00"


def test_the_jobs_page_lists_the_schedules_at_the_times_in_force(app, session, login):
    with app.app_context():
        schedules.tick(session, WEDNESDAY_4AM)
    viewer = login("viewer")
    html = viewer.get("/jobs").get_data(as_text=True)
    daily = re.search(r'id="schedule-daily_checks">(.*?)</tr>', html, re.S).group(1)
    assert "每日复核与到期提醒" in daily and "每天 03:00" in daily
    assert re.search(r'schedule-next">\d{4}-\d\d-\d\d 03:00 UTC\+8<', daily)
    last = daily.split('class="schedule-last">')[1]  # when its latest run started, and that run's job
    job_id = session.exec(select(ScheduleRun.job_id).where(ScheduleRun.schedule == "daily_checks")).one()
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC\+8", last) and f'href="/jobs/{job_id}"' in last
    assert "排队中" in last
    assert "尚未运行" not in daily
    weekly = re.search(r'id="schedule-weekly_footers">(.*?)</tr>', html, re.S).group(1)
    assert "每周 周一 04:00" in weekly
    assert 'id="schedule-notify_prune"' in html

    admin = login("admin")
    assert admin.post("/admin/settings/schedule_daily_at", data={"value": "5:15"}).status_code == 302
    html = viewer.get("/jobs").get_data(as_text=True)
    daily = re.search(r'id="schedule-daily_checks">(.*?)</tr>', html, re.S).group(1)
    assert "每天 05:15" in daily and re.search(r'schedule-next">\d{4}-\d\d-\d\d 05:15 UTC\+8<', daily)
    with app.app_context():
        assert [s.at.strftime("%H:%M") for s in schedules.schedules()][:2] == ["05:15", "04:00"]
    viewer.get("/lang/en")
    english = viewer.get("/jobs").get_data(as_text=True)
    assert "Daily at 05:15" in english and "Every Monday at 04:00" in english
