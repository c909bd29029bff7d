"""The run page, its polling JSON and its job agree at every moment of a real run: queued, claimed by a
worker (the run row not yet touched), in the middle of its steps, and finished."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from sqlmodel import Session

from app.core import jobs
from app.models.jobs import Job
from app.models.trials import RunState
from app.trials import bench_runs, bench_uploads
from benchmarks.suites import Progress
from tests.bench_support.sshd import Sshd
from tests.benchmarks.conftest import DATA
from tests.trials.conftest import quick_params
from tests.trials.test_run_page_language import sold_server

pytestmark = pytest.mark.slow

STATE_WORDS = {"queued": "排队中", "running": "运行中", "succeeded": "已完成"}


def snapshot(client, run_id: int, job_id: int) -> dict[str, Any]:
    """What a person sees at one moment: the run page, the JSON it polls and the job's own JSON."""
    html = client.get(f"/bench-runs/{run_id}").get_data(as_text=True)
    soup = BeautifulSoup(html, "html.parser")
    polled = client.get(f"/bench-runs/{run_id}/status.json")
    assert polled.status_code == 200 and polled.headers["Cache-Control"] == "no-store"
    box = soup.select_one(f"#job-{job_id}")
    return {
        "badge": soup.select_one("#run-state"),
        "steps": {row["data-step"]: row["data-status"] for row in soup.select("#steps tr[data-step]")},
        "box": box,
        "json": polled.get_json(),
        "job": client.get(f"/jobs/{job_id}.json").get_json(),
    }


def assert_agree(seen: dict[str, Any], state: str) -> None:
    """The badge, the job box, the polled run and job states and the step rows all say the same."""
    polled, run = seen["json"], seen["json"]["run"]
    assert seen["badge"]["data-state"] == state and seen["badge"].get_text(strip=True) == STATE_WORDS[state]
    assert run["state"] == state and polled["state"] == seen["job"]["state"] == state
    assert run["state_label"] == STATE_WORDS[state]
    assert {step["step"]: step["status"] for step in run["steps"]} == seen["steps"]
    if seen["box"] is not None:
        assert seen["box"].select_one(".job-state").get_text(strip=True) == STATE_WORDS[state]


def test_run_page_follows_its_job_while_it_runs(
    app, login, session: Session, trial_server: Sshd, cipher, policy, tmp_path: Path
):
    server = sold_server(session, trial_server, cipher, policy)
    run = bench_runs.create_run(session, server_id=server.id, suite="quick", params=quick_params(tmp_path))
    with app.app_context():  # on the real queue (no worker): the job waits, queued
        job = jobs.enqueue(session, kind=bench_runs.BENCH_KIND, params={"run_id": run.id})
    run.job_id = job.id
    session.add(run)
    session.commit()
    client = login("viewer")

    queued = snapshot(client, run.id, job.id)
    assert_agree(queued, "queued")
    assert queued["box"]["data-job-url"] == f"/bench-runs/{run.id}/status.json"  # one poll for both

    # A worker claims the job; the run row still says queued until the run starts: the page follows the job.
    assert jobs._claim(session.get_bind(), job.id, jobs.worker_id())
    session.refresh(job)
    assert session.get(type(run), run.id).state == RunState.queued
    claimed = snapshot(client, run.id, job.id)
    assert_agree(claimed, "running")
    assert set(claimed["steps"].values()) == {"pending"}

    middle: list[dict[str, Any]] = []

    def look(progress: Progress) -> None:
        if progress.event == "finished" and progress.done == 3:
            middle.append(snapshot(client, run.id, job.id))

    bench_runs.execute_run(session, run_id=run.id, cipher=cipher, job=job, echo=look, policy=policy)
    assert len(middle) == 1
    seen = middle[0]
    assert_agree(seen, "running")
    assert seen["job"]["progress"]["done"] == 3 and seen["job"]["progress"]["total"] == 5
    assert seen["json"]["run"]["done"] == 3 and seen["json"]["run"]["total"] == 5
    statuses = list(seen["steps"].values())
    assert "pending" not in statuses[:3] and statuses[3:] == ["pending", "pending"]
    assert seen["box"].select_one(".job-current").get_text(strip=True).startswith("[3/5]")
    assert seen["json"]["progress"]["current"].startswith("[3/5]")
    assert "fio_randread" not in seen["json"]["progress"]["current"]  # the step's label, not its code

    with app.app_context():
        jobs._finish(session.get_bind(), job.id, state="succeeded", result={"run_id": run.id})
    session.expire_all()
    assert session.get(Job, job.id).state == "succeeded"
    done = snapshot(client, run.id, job.id)
    assert_agree(done, "succeeded")
    assert done["json"]["final"] is True and done["json"]["run"]["finished"] is True
    assert done["box"] is None  # a finished run shows its results, not a job box


def test_a_run_without_a_job_polls_as_final(login, session: Session, offer):
    raw = (DATA / "iperf3_single.json").read_bytes()
    run = bench_uploads.upload_output(session, offer_id=offer.id, tool="iperf3", output=raw, path="public")
    polled = login("viewer").get(f"/bench-runs/{run.id}/status.json").get_json()
    assert polled["final"] is True and polled["run"]["state"] == "succeeded"
    assert polled["run"]["state_label"] == "已完成" and polled["run"]["steps"][0]["status_label"] == "成功"
    assert login("viewer", "another").get("/bench-runs/999999/status.json").status_code == 404
