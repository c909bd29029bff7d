"""Job pages tell the truth: a succeeded job whose work failed, an import with problems, no worker."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from sqlmodel import Session

import tests.core.jobs.kinds  # noqa: F401 - registers the test kinds
from app.core import jobs
from app.models.jobs import Job, JobState
from app.registry.import_jobs import start_import

STALLED_ZH = "后台任务程序似乎没有运行：任务已排队"
STALLED_EN = "No worker seems to be running"


def _both(client, job_id: int) -> tuple[str, dict]:
    return client.get(f"/jobs/{job_id}").get_data(as_text=True), client.get(f"/jobs/{job_id}.json").get_json()


def _english(client) -> None:
    assert client.get("/lang/en?next=/jobs").status_code in (302, 303)


def test_a_job_whose_work_failed_is_not_shown_as_done(app, session, login, immediate_jobs):
    with app.app_context():
        job = jobs.enqueue(session, kind="test.did_not_succeed", params={"reason": "端口拒绝连接"})
    assert job.state == JobState.succeeded
    client = login("viewer")
    html, data = _both(client, job.id)
    assert data["state_label"] == "已完成：未成功" and data["colour"] == "danger"
    assert data["outcome"] == "failed" and data["outcome_message"] == "原因：端口拒绝连接"
    assert "已完成：未成功" in html and "text-bg-danger" in html and "原因：端口拒绝连接" in html
    assert ">已完成<" not in html and "text-bg-success" not in html
    assert "已完成：未成功" in client.get("/jobs").get_data(as_text=True)
    _english(client)
    html, data = _both(client, job.id)
    assert data["state_label"] == "Finished: did not succeed"
    assert data["outcome_message"] == "reason: 端口拒绝连接"
    assert "Finished: did not succeed" in html and ">Done<" not in html


def test_a_plain_succeeded_job_is_still_done(app, session, login, immediate_jobs):
    with app.app_context():
        job = jobs.enqueue(session, kind="test.echo", params={"x": 1})
    html, data = _both(login("viewer"), job.id)
    assert "text-bg-success" in html
    assert data["state_label"] == "已完成" and data["colour"] == "success" and data["outcome"] == "ok"
    assert data["outcome_message"] == "" and not data["stalled"]


def test_an_import_with_problems_is_finished_with_problems(app, session, login, immediate_jobs):
    document = json.dumps({"providers": [{"legal_name": ""}]}, ensure_ascii=False).encode()
    with app.app_context():
        job = start_import(session, data=document, filename="bad.json", format="json", dry_run=False)
    assert job.state == JobState.succeeded, job.error
    assert job.result["outcome"] == "problems" and job.result["created"] == 0
    client = login("viewer")
    html, data = _both(client, job.id)
    assert data["state_label"] == "完成，发现问题" and data["colour"] == "warning"
    assert "未写入任何供应商" in data["outcome_message"] and "完成，发现问题" in html
    _english(client)
    html, data = _both(client, job.id)
    assert data["state_label"] == "Finished with problems"
    assert "nothing was written" in data["outcome_message"]
    assert "Finished with problems" in html


def _queued(app, session, age: timedelta) -> Job:
    job = Job(kind="test.echo", params={}, created_by_name="ana", created_at=datetime.now(UTC) - age)
    session.add(job)
    session.commit()
    return job


def test_a_job_queued_over_a_minute_says_no_worker_is_running(app, session, login):
    job = _queued(app, session, timedelta(minutes=3, seconds=5))
    client = login("viewer")
    html, data = _both(client, job.id)
    assert data["state"] == "queued" and data["stalled"] is True
    assert data["stalled_message"].startswith(STALLED_ZH) and "3 分钟" in data["stalled_message"]
    assert "flask --app wsgi worker" in data["stalled_message"] and STALLED_ZH in html
    _english(client)
    html, data = _both(client, job.id)
    assert data["stalled_message"].startswith(STALLED_EN) and "3 minute" in data["stalled_message"]
    assert STALLED_EN in html


def test_a_freshly_queued_job_does_not_warn(app, session, login):
    job = _queued(app, session, timedelta(seconds=5))
    client = login("viewer")
    html, data = _both(client, job.id)
    assert data["stalled"] is False and data["stalled_message"] == ""
    assert STALLED_ZH not in html
    _english(client)
    html, data = _both(client, job.id)
    assert data["stalled"] is False and STALLED_EN not in html


def test_a_running_job_never_counts_as_stalled(app, session, login):
    job = _queued(app, session, timedelta(minutes=10))
    job.state = JobState.running
    session.add(job)
    session.commit()
    assert _both(login("viewer"), job.id)[1]["stalled"] is False
    with Session(app.extensions["gpuvet.engine"]) as other:
        assert other.get(Job, job.id).state == JobState.running


def test_a_benchmark_run_that_did_not_finish_is_not_a_success(app, session, monkeypatch):
    from types import SimpleNamespace

    from app.models.trials import RunState
    from app.trials import bench_runs

    stopped = SimpleNamespace(id=5, state=RunState.cancelled, comparisons=[])
    monkeypatch.setattr(bench_runs, "execute_run", lambda *args, **kwargs: stopped)
    with app.app_context():
        result = bench_runs.run_bench_job(session, Job(id=1, kind="bench.run", params={}), run_id=5)
    assert result["outcome"] == "failed" and "已取消" in result["outcome_message_zh"]
    stopped.state = RunState.succeeded
    with app.app_context():
        result = bench_runs.run_bench_job(session, Job(id=1, kind="bench.run", params={}), run_id=5)
    assert "outcome" not in result


def test_a_failed_lookup_step_is_not_a_success(session, monkeypatch):
    from types import SimpleNamespace

    from app.credentials import lookups
    from app.models.evidence import LookupState

    failed = SimpleNamespace(
        id=3, state=LookupState.failed, message="查询失败 (lookup failed)", captcha_extra=None
    )
    monkeypatch.setattr(lookups, "get_lookup", lambda session, lookup_id: failed)
    monkeypatch.setattr(lookups, "_Step", lambda *args, **kwargs: SimpleNamespace(new_captcha=lambda: None))
    result = lookups.run_step(session, lookup_id=3, step="captcha", client=None, settings=None)
    assert result["outcome"] == "failed" and "lookup failed" in result["outcome_message_en"]
