"""Trial servers obey the outbound address policy; host-key fetch and connection test run as jobs."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sqlmodel import Session, select

from app.core.config import Settings
from app.core.errors import InvalidInput
from app.models.jobs import Job, JobState
from app.models.trials import RunState, TrialServer
from app.trials import bench_runs
from app.trials import servers as trials
from benchmarks import ssh
from scrapers.addresses import AddressPolicy
from tests.bench_support.sshd import Sshd
from tests.trials.conftest import server_data, set_trial_allow_cidrs

pytestmark = pytest.mark.slow

REFUSED = [
    ("127.0.0.1", "回环地址"),
    ("::1", "回环地址"),
    ("10.0.0.5", "内网地址"),
    ("192.168.1.20", "内网地址"),
    ("169.254.169.254", "链路本地地址"),
    ("fe80::1", "链路本地地址"),
]


def _messages(exc: InvalidInput) -> dict[str, str]:
    return {error.field: error.message for error in exc.errors}


@pytest.fixture
def never_connects(monkeypatch):
    """Fail the test if anything opens an SSH connection."""
    calls: list[str] = []

    def connect(self):
        calls.append(self.target.host)
        raise AssertionError(f"connected to {self.target.host}")

    monkeypatch.setattr(ssh.SSHRunner, "connect", connect)
    return calls


# ---------------------------------------------------------------- refused by default, named field
@pytest.mark.parametrize(("address", "reason"), REFUSED)
def test_non_public_host_is_refused_by_default_naming_the_field(
    session: Session, provider, cipher, trial_server: Sshd, address, reason
):
    with pytest.raises(InvalidInput) as caught:
        trials.create_server(
            session, provider_id=provider.id, data=server_data(trial_server, host=address), cipher=cipher
        )
    messages = _messages(caught.value)
    assert set(messages) == {"host"}
    assert reason in messages["host"] and "GPUVET_TRIAL_ALLOW_CIDRS" in messages["host"]
    assert session.exec(select(TrialServer)).all() == []


def test_a_private_peer_address_follows_the_policy_too(session: Session, provider, cipher, trial_server):
    data = server_data(trial_server, host="93.184.216.34", peer_address="10.0.0.12")
    with pytest.raises(InvalidInput) as caught:
        trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher)
    messages = _messages(caught.value)
    assert set(messages) == {"peer_address"} and "内网地址" in messages["peer_address"]
    intranet = AddressPolicy(allow_cidrs=("10.0.0.0/24",))
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=intranet)
    assert server.peer_address == "10.0.0.12"


def test_update_to_a_refused_address_is_refused_and_changes_nothing(
    session: Session, provider, cipher, policy, trial_server: Sshd
):
    server = trials.create_server(
        session, provider_id=provider.id, data=server_data(trial_server), cipher=cipher, policy=policy
    )
    with pytest.raises(InvalidInput) as caught:
        trials.update_server(
            session, server_id=server.id, data={"host": "10.1.1.1", "version": server.version}, cipher=cipher
        )
    assert set(_messages(caught.value)) == {"host"}
    session.expire_all()
    assert session.get(TrialServer, server.id).host == "127.0.0.1"


def test_allow_listed_cidr_admits_only_what_it_contains(session: Session, provider, cipher, trial_server):
    narrow = AddressPolicy(allow_cidrs=("10.0.0.0/24",))
    data = server_data(trial_server, host="10.0.0.9", peer_address="10.0.0.10")
    assert trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=narrow)
    with pytest.raises(InvalidInput) as caught:
        trials.create_server(
            session,
            provider_id=provider.id,
            data=server_data(trial_server, host="10.0.1.9"),
            cipher=cipher,
            policy=narrow,
        )
    assert set(_messages(caught.value)) == {"host"}


def test_a_name_resolving_to_loopback_is_refused_before_connecting(
    session: Session, provider, cipher, policy, trial_server: Sshd, never_connects
):
    # "localhost" is a name: resolved and checked when saved, and again on connecting, refused there too.
    data = server_data(trial_server, host="localhost")
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)
    with pytest.raises(InvalidInput) as caught:
        trials.fetch_host_key(server, cipher)
    messages = _messages(caught.value)
    assert set(messages) == {"host"} and "回环地址" in messages["host"]
    assert never_connects == []


def test_the_connection_goes_to_the_checked_address(session: Session, provider, cipher, policy, trial_server):
    data = server_data(trial_server, host="localhost")
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)
    target = trials.ssh_target(server, cipher, policy=policy)
    assert target.host in ("127.0.0.1", "::1")  # the resolved, checked address, not the name
    assert trials.fetch_host_key(server, cipher, policy=policy)[1] == trial_server.host_fingerprint


def test_settings_read_trial_allow_cidrs():
    assert Settings(GPUVET_TRIAL_ALLOW_CIDRS="127.0.0.0/8, 10.0.0.0/8").trial_allow_cidrs == (
        "127.0.0.0/8",
        "10.0.0.0/8",
    )
    assert Settings().trial_allow_cidrs == ()
    with pytest.raises(ValidationError, match="CIDR"):
        Settings(GPUVET_TRIAL_ALLOW_CIDRS="10.0.0.0/33")


# ---------------------------------------------------------------- runs check every address
def test_run_on_a_server_no_longer_admitted_fails_before_any_step(
    app, immediate_jobs, session: Session, provider, cipher, policy, trial_server: Sshd
):
    data = server_data(trial_server, host_key_fingerprint=trial_server.host_fingerprint)
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)
    set_trial_allow_cidrs(app, ())  # the admin withdrew loopback after the server was saved
    with app.app_context():
        run = bench_runs.start_run(session, server_id=server.id, suite="quick")
    session.expire_all()
    run = bench_runs.get_run(session, run_id=run.id)
    assert run.state == RunState.failed and run.error_kind == "refused"
    assert run.error.startswith("host: ") and "回环地址" in run.error
    assert {step.status for step in bench_runs.run_steps(session, run_id=run.id)} == {"skipped"}
    assert session.get(Job, run.job_id).state == JobState.failed


# ---------------------------------------------------------------- jobs, not requests
def test_host_key_fetch_and_connection_test_are_jobs(
    login, immediate_jobs, session: Session, provider, cipher, policy, trial_server: Sshd
):
    server = trials.create_server(
        session, provider_id=provider.id, data=server_data(trial_server), cipher=cipher, policy=policy
    )
    client = login("analyst")
    assert client.post(f"/trial-servers/{server.id}/check").status_code == 302  # not pinned yet
    assert session.exec(select(Job).where(Job.kind == trials.CHECK_KIND)).all() == []

    client.post(f"/trial-servers/{server.id}/host-key")
    job = session.exec(select(Job).where(Job.kind == trials.HOST_KEY_KIND)).one()
    assert job.result["fingerprint"] == trial_server.host_fingerprint
    assert job.progress["done"] == job.progress["total"] == 1
    client.post(
        f"/trial-servers/{server.id}/host-key/pin",
        data={"fingerprint": job.result["fingerprint"], "key_type": job.result["key_type"]},
    )
    page = client.get(f"/trial-servers/{server.id}").get_data(as_text=True)
    assert 'id="fetched-key"' not in page and 'id="pinned-fingerprint"' in page

    client.post(f"/trial-servers/{server.id}/check")
    check = session.exec(select(Job).where(Job.kind == trials.CHECK_KIND)).one()
    assert check.state == JobState.succeeded and check.result["uname"].startswith("Linux")
    assert check.result["address"] == trial_server.address
    page = client.get(f"/trial-servers/{server.id}").get_data(as_text=True)
    assert 'id="check-result"' in page and check.result["uname"] in page


def test_refused_host_key_job_fails_naming_the_field(
    app, login, immediate_jobs, session: Session, provider, cipher, policy, trial_server, never_connects
):
    data = server_data(trial_server, host="localhost")
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)
    set_trial_allow_cidrs(app, ())
    client = login("analyst")
    client.post(f"/trial-servers/{server.id}/host-key")
    job = session.exec(select(Job).where(Job.kind == trials.HOST_KEY_KIND)).one()
    assert job.state == JobState.failed and job.error.startswith("host: ") and "回环地址" in job.error
    page = client.get(f"/trial-servers/{server.id}").get_data(as_text=True)
    assert 'id="key-job"' in page and "回环地址" in page
    assert never_connects == []


def test_form_shows_the_refusal_under_the_host_field(app, login, provider, trial_server: Sshd, session):
    set_trial_allow_cidrs(app, ())
    form = server_data(trial_server, port=str(trial_server.port))
    client = login("analyst")
    response = client.post(f"/providers/{provider.id}/trials/new", data=form)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert 'id="f-host-error"' in html and "回环地址" in html and "GPUVET_TRIAL_ALLOW_CIDRS" in html
    assert "loopback address" not in html
    client.get("/lang/en")
    html = client.post(f"/providers/{provider.id}/trials/new", data=form).get_data(as_text=True)
    assert "(loopback address); refused for safety" in html and "回环地址" not in html
    assert session.exec(select(TrialServer)).all() == []


def test_api_create_refuses_a_private_host(app, token_for, provider, trial_server: Sshd):
    set_trial_allow_cidrs(app, ())
    response = app.test_client().post(
        f"/api/v1/providers/{provider.id}/trial-servers",
        json=server_data(trial_server, host="10.2.3.4"),
        headers=token_for("analyst"),
    )
    assert response.status_code == 422
    (error,) = response.get_json()["errors"]
    assert error["field"] == "host" and "内网地址" in error["message"]


def test_a_key_fetched_before_the_server_moved_is_not_offered_for_pinning(
    login, immediate_jobs, session: Session, provider, cipher, policy, trial_server: Sshd
):
    server = trials.create_server(
        session, provider_id=provider.id, data=server_data(trial_server), cipher=cipher, policy=policy
    )
    client = login("analyst")
    client.post(f"/trial-servers/{server.id}/host-key")
    assert 'id="fetched-key"' in client.get(f"/trial-servers/{server.id}").get_data(as_text=True)
    trials.update_server(
        session,
        server_id=server.id,
        data={"port": trial_server.port + 1, "version": server.version},
        cipher=cipher,
        policy=policy,
    )
    page = client.get(f"/trial-servers/{server.id}").get_data(as_text=True)
    assert 'id="fetched-key"' not in page and "获取主机密钥指纹" in page
