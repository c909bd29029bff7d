"""Peak-hour campaigns for real: the stability suite over the shaped namespace link (sshd and iperf3 on
the far side), windows started by the periodic tick under an injected clock.

The link runs at 200 Mbit/s; for the evening-peak window the test turns it down with `tc qdisc change`
(the provider's shared uplink filling up) and back up for the night window, which a real worker process
(Huey consumer, periodic tick, clock injected with GPUVET_TEST_NOW) runs: red flag 12. An unchanged
link is not flagged. A campaign cancelled while its window's run measures stops that run through the
job's cancellation.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sqlmodel import Session, col, select

from app.core import clock as localtime
from app.core import jobs
from app.models.campaigns import BenchCampaign, CampaignWindow
from app.models.checks import CheckRun, StoredFinding
from app.models.jobs import Job, JobState
from app.models.trials import BenchRun, BenchStep, RunState, TrialServer
from app.notify import schedules
from app.registry.providers import create_provider
from app.trials import campaign_reads, campaigns, server_addresses
from app.trials import servers as trials
from tests.bench_support.netns import ShapedLink
from tests.bench_support.sshd import Sshd, free_port
from tests.core.jobs.fixtures import immediate_jobs  # noqa: F401 - fixture
from tests.core.jobs.test_worker_process import worker

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)]

RATE, PEAK_RATE = 200, 50
SHANGHAI = localtime._zone("Asia/Shanghai")
PLANNED = datetime(2026, 12, 1, 19, 0, tzinfo=SHANGHAI)
PEAK = datetime(2026, 12, 1, 20, 0, 30, tzinfo=SHANGHAI)  # inside 20:00-23:00
OFFPEAK = datetime(2026, 12, 2, 3, 0, 30, tzinfo=SHANGHAI)  # inside 03:00-06:00 the next night
ALLOW = "10.200.0.0/16"  # the test namespaces' addresses (refused by default)
DEADLINE_S = 60


def params(repeats: int = 2) -> dict[str, object]:
    """One-second throughput tests, a tenth of a second apart."""
    return {
        "stability_repeats": repeats,
        "stability_interval_s": 0.1,
        "stability_test_seconds": 1,
        "iperf3_port": free_port(),
        "command_grace_s": 20,
    }


@pytest.fixture
def link_server(app, session: Session, shaped_server: Sshd) -> TrialServer:
    """A trial server behind the shaped link, host key pinned, sold as dedicated 200 Mbit/s."""
    settings = app.config["GPUVET_SETTINGS"]
    app.config["GPUVET_SETTINGS"] = settings.model_copy(update={"trial_allow_cidrs": (ALLOW,)})
    offer = {"gpu_model": "H800", "gpus_per_node": 8, "public_mbps": RATE, "bandwidth_type": "dedicated"}
    provider = create_provider(session, data={"legal_name": "示例晚高峰算力有限公司", "offers": [offer]})
    server = trials.create_server(
        session,
        provider_id=provider.id,
        data={
            "name": "高峰试用机",
            "host": shaped_server.address,
            "port": shaped_server.port,
            "username": "root",
            "auth_method": "key",
            "private_key": shaped_server.user_key_text,
            "offer_id": provider.offers[0].id,
        },
        cipher=trials.cipher_from_settings(app.config["GPUVET_SETTINGS"]),
        policy=server_addresses.address_policy(app.config["GPUVET_SETTINGS"]),
    )
    yield trials.pin_host_key(session, server_id=server.id, fingerprint=shaped_server.host_fingerprint)
    app.config["GPUVET_SETTINGS"] = settings


@contextmanager
def inline_jobs(app) -> Iterator[None]:
    """Jobs run inside enqueue (Huey immediate mode) until the block ends, then on the real queue again."""
    app.config["JOBS_IMMEDIATE"] = True
    app.extensions.pop("gpuvet.huey", None)
    try:
        yield
    finally:
        app.config["JOBS_IMMEDIATE"] = False
        app.extensions.pop("gpuvet.huey", None)


def fresh(app, model, row_id: int):
    with Session(app.extensions["gpuvet.engine"]) as session:
        return session.get(model, row_id)


def wait_until(done: Callable[[], bool], log: Path | None = None) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if done():
            return
        time.sleep(0.2)
    tail = log.read_text()[-4000:] if log is not None and log.exists() else ""
    pytest.fail(f"not done after {DEADLINE_S} s; worker log:\n{tail}")


def idle(app) -> bool:
    """No job queued or running (the window's job has re-checked the provider too)."""
    with Session(app.extensions["gpuvet.engine"]) as session:
        busy = session.exec(select(Job).where(col(Job.state).in_((JobState.queued, JobState.running))))
        return busy.first() is None


def window_states(app, campaign_id: int) -> list[tuple[str, str]]:
    with Session(app.extensions["gpuvet.engine"]) as session:
        return [(w.kind, w.state) for w in campaign_reads.windows_of(session, campaign_id=campaign_id)]


def peak_findings(session: Session, provider_id: int) -> list[StoredFinding]:
    """The "sags at peak" findings of the provider's latest check run."""
    latest = session.exec(
        select(CheckRun).where(CheckRun.provider_id == provider_id).order_by(CheckRun.id.desc())
    ).first()
    return list(
        session.exec(
            select(StoredFinding).where(
                StoredFinding.check_run_id == latest.id, StoredFinding.rule_id == "benchmarks.sags_at_peak"
            )
        ).all()
    )


def test_a_link_that_sags_at_the_evening_peak_is_flagged(
    app, session: Session, link_server: TrialServer, shaped_link: ShapedLink, database_url, tmp_path
):
    campaign = campaigns.create_campaign(
        session, server_id=link_server.id, days=1, params=params(), now=PLANNED
    )
    log = tmp_path / "worker.log"
    env = {"GPUVET_SCHEDULES": "1", "GPUVET_TRIAL_ALLOW_CIDRS": ALLOW}
    try:
        shaped_link.set_rate(PEAK_RATE)  # the evening peak: the shared uplink fills up
        with inline_jobs(app), app.app_context():  # this process ticks at 20:00 and runs the job itself
            schedules.tick(session, PEAK)
        assert window_states(app, campaign.id)[0] == ("peak", "done")
        shaped_link.set_rate(RATE)  # three in the morning: the full rate again; a worker process goes on
        with worker(app, database_url, log, extra_env=env | {"GPUVET_TEST_NOW": OFFPEAK.isoformat()}):
            wait_until(lambda: fresh(app, BenchCampaign, campaign.id).state != "active" and idle(app), log)
    finally:
        shaped_link.set_rate(RATE)

    finished = fresh(app, BenchCampaign, campaign.id)
    assert finished.state == "finished" and window_states(app, campaign.id) == [
        ("peak", "done"),
        ("offpeak", "done"),
    ]
    result = finished.result
    assert result["peak"]["count"] == result["offpeak"]["count"] == 2
    assert result["peak"]["median"] < 0.4 * RATE and result["offpeak"]["median"] > 0.8 * RATE, result
    assert result["verdict"] == "fail" and result["red_flag"] == 12
    assert {row["hour"] for row in result["by_hour"]} == {20, 3}
    runs = session.exec(select(BenchRun).where(BenchRun.trial_server_id == link_server.id)).all()
    assert [run.state for run in runs] == [RunState.succeeded, RunState.succeeded]
    [finding] = peak_findings(session, link_server.provider_id)
    assert finding.red_flag == 12 and finding.evidence[0]["campaign_id"] == campaign.id


@pytest.mark.usefixtures("immediate_jobs")
def test_an_unchanged_link_is_not_flagged(
    app, session: Session, link_server: TrialServer, shaped_link: ShapedLink
):
    assert shaped_link.rate_mbit == RATE
    campaign = campaigns.create_campaign(
        session, server_id=link_server.id, days=1, params=params(), now=PLANNED
    )
    with app.app_context():  # jobs run inline: each tick measures its window
        schedules.tick(session, PEAK)
        schedules.tick(session, PEAK + timedelta(minutes=1))  # the same window again: nothing new
        schedules.tick(session, OFFPEAK)
    session.expire_all()
    finished = session.get(BenchCampaign, campaign.id)
    assert finished.state == "finished", window_states(app, campaign.id)
    result = finished.result
    assert result["verdict"] == "pass" and result["share"] > 0.8, result
    assert len(session.exec(select(BenchRun)).all()) == 2
    assert peak_findings(session, link_server.provider_id) == []


def test_cancelling_stops_the_run_that_is_measuring(app, session: Session, link_server: TrialServer):
    campaign = campaigns.create_campaign(
        session, server_id=link_server.id, days=2, params=params(repeats=30), now=PLANNED
    )
    with app.app_context():  # the real queue, no worker: the window's job waits
        [job] = campaigns.tick(session, PEAK)
    engine = app.extensions["gpuvet.engine"]

    def work() -> None:
        with app.app_context():
            jobs.execute_job(engine, job.id, heartbeat_s=0.5)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    run_id = fresh(app, CampaignWindow, job.params["window_id"]).run_id

    def measuring() -> bool:
        with Session(engine) as fresh_session:
            step = fresh_session.exec(
                select(BenchStep).where(BenchStep.run_id == run_id, BenchStep.step == "stability")
            ).one()
            return step.status == "running"

    wait_until(measuring)
    campaigns.cancel_campaign(session, campaign_id=campaign.id)
    thread.join(timeout=DEADLINE_S)
    assert not thread.is_alive()
    assert fresh(app, BenchRun, run_id).state == RunState.cancelled
    assert fresh(app, Job, job.id).state == JobState.cancelled
    assert [state for _kind, state in window_states(app, campaign.id)] == ["cancelled"] * 4
    assert fresh(app, BenchCampaign, campaign.id).state == "cancelled"
