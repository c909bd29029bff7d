"""Trial servers and benchmark runs on the real database, against a real sshd (loopback)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet
from sqlmodel import Session, select

from app.core import jobs
from app.core.errors import Conflict, InvalidInput
from app.credentials import checks, facts
from app.models import AuditEntry
from app.models.jobs import Job, JobState
from app.models.trials import BenchRun, BenchStep, RunState, TrialServer
from app.trials import bench_runs
from app.trials import servers as trials
from app.vetting.findings import RuleContext
from app.vetting.rules.benchmarks import shared_bandwidth, storage_not_nvme
from tests.bench_support.sshd import Sshd
from tests.trials.conftest import quick_params, server_data
from tests.trials.recorded_runs import Recording

pytestmark = pytest.mark.slow


def field_errors(exc: InvalidInput) -> set[str]:
    """Names of the fields an InvalidInput complains about."""
    return {error.field for error in exc.errors}


# ---------------------------------------------------------------- registry and secrets
def test_secret_is_encrypted_at_rest_and_never_audited(
    session: Session, provider, offer, cipher, policy, trial_server
):
    server = trials.create_server(
        session,
        provider_id=provider.id,
        data=server_data(trial_server, offer_id=offer.id),
        cipher=cipher,
        policy=policy,
    )
    raw = session.execute(
        sa.text("SELECT secret_encrypted FROM trial_server WHERE id = :id"), {"id": server.id}
    )
    stored = raw.scalar_one()
    assert "PRIVATE KEY" not in stored and stored != trial_server.user_key_text
    assert cipher.decrypt(stored.encode()).decode() == trial_server.user_key_text
    with pytest.raises(InvalidInput, match="加密密钥已更换"):
        trials.ssh_target(server, Fernet(Fernet.generate_key()))
    trail = session.exec(select(AuditEntry).where(AuditEntry.entity == "trial_server")).all()
    assert trail and all("secret_encrypted" not in entry.changes for entry in trail)
    public = trials.server_public(server)
    assert "PRIVATE" not in str(public) and public["auth_method"] == "key"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"host": "not a host!"}, "host"),
        ({"port": 70000}, "port"),
        ({"username": "root; rm -rf /"}, "username"),
        ({"private_key": ""}, "private_key"),
        ({"private_key": "-----BEGIN OPENSSH PRIVATE KEY-----\ngarbage\n-----END"}, "private_key"),
        ({"auth_method": "password", "private_key": None}, "password"),
        ({"host_key_fingerprint": "MD5:aa:bb"}, "host_key_fingerprint"),
        ({"offer_id": 999999}, "offer_id"),
        ({"colour": "blue"}, "colour"),
    ],
)
def test_bad_input_names_the_field(session: Session, provider, cipher, policy, trial_server, change, field):
    with pytest.raises(InvalidInput) as caught:
        trials.create_server(
            session,
            provider_id=provider.id,
            data=server_data(trial_server, **change),
            cipher=cipher,
            policy=policy,
        )
    assert field in field_errors(caught.value)
    assert session.exec(select(TrialServer)).all() == []


def test_update_keeps_blank_secrets_and_unpins_a_moved_server(
    session: Session, provider, cipher, policy, trial_server
):
    data = server_data(trial_server, host_key_fingerprint=trial_server.host_fingerprint)
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)
    assert server.host_key_pinned_at is not None
    renamed = trials.update_server(
        session,
        server_id=server.id,
        data={"name": "改名", "private_key": "", "version": server.version},
        cipher=cipher,
        policy=policy,
    )
    assert renamed.name == "改名" and renamed.host_key_fingerprint == trial_server.host_fingerprint
    assert trials.ssh_target(renamed, cipher, policy=policy).private_key == trial_server.user_key_text
    moved = trials.update_server(
        session,
        server_id=server.id,
        data={"port": 2200, "version": renamed.version},
        cipher=cipher,
        policy=policy,
    )
    assert moved.host_key_fingerprint is None  # a different endpoint must be confirmed again
    switched = trials.update_server(
        session,
        server_id=server.id,
        data={"auth_method": "password", "password": "s3cret", "version": moved.version},
        cipher=cipher,
        policy=policy,
    )
    target = trials.ssh_target(switched, cipher, policy=policy, pinned=False)
    assert (target.password, target.private_key) == ("s3cret", None)


def test_peer_must_be_another_server_of_the_provider(
    session: Session, provider, cipher, policy, trial_server
):
    first = trials.create_server(
        session, provider_id=provider.id, data=server_data(trial_server), cipher=cipher, policy=policy
    )
    with pytest.raises(InvalidInput) as caught:
        trials.update_server(
            session,
            server_id=first.id,
            data={"peer_id": first.id, "version": first.version},
            cipher=cipher,
            policy=policy,
        )
    assert field_errors(caught.value) == {"peer_id"}
    second = trials.create_server(
        session,
        provider_id=provider.id,
        data=server_data(trial_server, name="B", peer_id=first.id),
        cipher=cipher,
        policy=policy,
    )
    assert second.peer_id == first.id


# ---------------------------------------------------------------- host keys
def test_host_key_is_fetched_for_confirmation_then_pinned(
    session: Session, provider, cipher, policy, trial_server
):
    server = trials.create_server(
        session, provider_id=provider.id, data=server_data(trial_server), cipher=cipher, policy=policy
    )
    with pytest.raises(InvalidInput) as caught:
        bench_runs.start_run(session, server_id=server.id, suite="quick")
    assert field_errors(caught.value) == {"host_key_fingerprint"}
    key_type, fingerprint = trials.fetch_host_key(server, cipher, policy=policy)
    assert (key_type, fingerprint) == ("ssh-ed25519", trial_server.host_fingerprint)
    pinned = trials.pin_host_key(session, server_id=server.id, fingerprint=f"256 {fingerprint} x (ED25519)")
    assert pinned.host_key_fingerprint == trial_server.host_fingerprint


def test_fetching_from_a_closed_port_is_a_field_error(
    session: Session, provider, cipher, policy, trial_server
):
    data = server_data(trial_server, port=1)
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)
    with pytest.raises(InvalidInput, match="拒绝连接：该端口没有 SSH 服务在监听"):
        trials.fetch_host_key(server, cipher, policy=policy)


# ---------------------------------------------------------------- runs
@pytest.fixture
def pinned(session: Session, provider, offer, cipher, policy, trial_server: Sshd) -> TrialServer:
    """A trial server for the provider's offer, host key pinned."""
    data = server_data(trial_server, offer_id=offer.id, host_key_fingerprint=trial_server.host_fingerprint)
    return trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)


def test_quick_run_on_the_queue_stores_everything_and_raises_red_flag_12(
    immediate_jobs, session: Session, provider, pinned: TrialServer, tmp_path: Path
):
    with immediate_jobs.app_context():
        run = bench_runs.start_run(session, server_id=pinned.id, suite="quick", params=quick_params(tmp_path))
    session.expire_all()
    run = bench_runs.get_run(session, run_id=run.id)
    job = session.get(Job, run.job_id)
    assert job.state == JobState.succeeded and job.result["run_id"] == run.id
    assert job.progress == {"done": 5, "total": 5, "current": "succeeded"}
    assert run.state == RunState.succeeded and run.finished_at and run.host == "127.0.0.1"
    assert run.claims["storage_type"] == "local_nvme" and run.claims["public_mbps"] == 1000

    steps = bench_runs.run_steps(session, run_id=run.id)
    assert [step.step for step in steps] == ["inventory", "ping", "iperf3", "fio_randread", "disk_type"]
    assert {step.status for step in steps} == {"ok"}
    iperf3 = next(output for output in steps[2].outputs if output["parser"] == "iperf3")
    assert iperf3["stdout"].lstrip().startswith("{") and iperf3["exit_code"] == 0
    assert any(sample["metric"] == "throughput" for sample in steps[2].samples)

    verdicts = {c["check"]: c["verdict"] for c in run.comparisons}
    assert verdicts["storage_type"] == "fail"  # this machine's disk is virtio, the offer says NVMe
    assert verdicts["gpu_count"] == verdicts["gpu_model"] == "pass"  # the stand-in prints 8 x H800
    fact = facts.gather_facts(session, provider)["benchmarks"]
    assert fact["runs"][0]["run_id"] == run.id
    context = RuleContext(
        provider=provider, today=run.finished_at.date(), knowledge={}, facts={"benchmarks": fact}
    )
    flagged = list(storage_not_nvme(context))
    assert len(flagged) == 1 and "not local NVMe" in flagged[0].message_en
    assert flagged[0].evidence[0]["run_id"] == run.id
    assert list(shared_bandwidth(context)) == []  # quick suite: no stability series
    evaluation = checks.evaluate(session, provider_id=provider.id)
    assert "benchmarks.storage_not_nvme" in {finding.rule_id for finding in evaluation.findings}


def test_wrong_password_gives_a_failed_run_and_job(
    immediate_jobs, session: Session, pinned: TrialServer, cipher, policy
):
    trials.update_server(
        session,
        server_id=pinned.id,
        data={"auth_method": "password", "password": "wrong", "version": pinned.version},
        cipher=cipher,
        policy=policy,
    )
    with immediate_jobs.app_context():
        run = bench_runs.start_run(session, server_id=pinned.id, suite="quick")
    session.expire_all()
    run = bench_runs.get_run(session, run_id=run.id)
    assert run.state == RunState.failed and run.error_kind == "auth_failed"
    assert "拒绝登录：用户名、密码或私钥不对" in run.error
    assert {step.status for step in bench_runs.run_steps(session, run_id=run.id)} == {"skipped"}
    job = session.get(Job, run.job_id)
    assert job.state == JobState.failed and "拒绝登录" in job.error


def test_interrupted_run_keeps_its_partial_results(immediate_jobs, session: Session, pinned: TrialServer):
    with immediate_jobs.app_context():
        run = bench_runs.create_run(session, server_id=pinned.id, suite="quick")
        job = jobs.Job(kind=bench_runs.BENCH_KIND, params={"run_id": run.id}, state=JobState.running)
        session.add(job)
        session.commit()
    run.job_id, run.state = job.id, RunState.running
    first = bench_runs.run_steps(session, run_id=run.id)[0]
    first.status, first.outputs = "ok", [{"label": "inventory", "stdout": "### uname\nLinux\n"}]
    session.add_all([run, first])
    session.commit()
    # the worker died: recovery marks the job interrupted
    job.state, job.error = JobState.interrupted, "the worker running this job stopped"
    session.add(job)
    session.commit()
    refreshed = bench_runs.get_run(session, run_id=run.id)
    assert refreshed.state == RunState.interrupted and "worker" in refreshed.error
    steps = bench_runs.run_steps(session, run_id=run.id)
    assert steps[0].status == "ok" and steps[0].outputs[0]["stdout"].startswith("### uname")
    assert {step.status for step in steps[1:]} == {"interrupted"}


def test_one_run_at_a_time_per_server_and_cancel(session: Session, pinned: TrialServer, app):
    app.config["JOBS_IMMEDIATE"] = False  # queued, nobody runs it
    app.extensions.pop("gpuvet.huey", None)
    with app.app_context():
        run = bench_runs.start_run(session, server_id=pinned.id, suite="quick")
        with pytest.raises(Conflict):
            bench_runs.start_run(session, server_id=pinned.id, suite="standard")
        cancelled = bench_runs.cancel_run(session, run_id=run.id)
    assert cancelled.state == RunState.cancelled
    with pytest.raises(Conflict):
        bench_runs.cancel_run(session, run_id=run.id)


@pytest.mark.parametrize(
    ("suite", "params", "field"),
    [
        ("marathon", {}, "suite"),
        ("quick", {"iperf3_seconds": 0}, "params.iperf3_seconds"),
        ("quick", {"x": 1}, "params.x"),
    ],
)
def test_bad_run_requests_name_the_field(session: Session, pinned: TrialServer, suite, params, field):
    with pytest.raises(InvalidInput) as caught:
        bench_runs.create_run(session, server_id=pinned.id, suite=suite, params=params)
    assert field_errors(caught.value) == {field}
    assert session.exec(select(BenchRun)).all() == [] and session.exec(select(BenchStep)).all() == []


def test_foreground_run_and_comparison_of_two_runs(
    restored_runs: Recording, session: Session, pinned: TrialServer, cipher, policy, tmp_path: Path
):
    """A run executed in the foreground, compared with a real run of the same machine recorded earlier
    (the recording runs two back to back on one server: a finished run does not block the next)."""
    events = []
    run = bench_runs.create_run(session, server_id=pinned.id, suite="quick", params=quick_params(tmp_path))
    done = bench_runs.execute_run(session, run_id=run.id, cipher=cipher, policy=policy, echo=events.append)
    assert done.state == RunState.succeeded
    ids = [restored_runs.run_ids[-1], done.id]
    assert events[-1].event == "done"
    rows = {row["metric"]: row for row in bench_runs.compare_runs(session, run_ids=ids)}
    assert len(rows["read_iops"]["values"]) == 2 and all(rows["read_iops"]["values"])
    assert rows["storage_class"]["values"][0] == rows["storage_class"]["values"][1]
