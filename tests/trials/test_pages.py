"""Trial-server pages: register, confirm the host key, run on the queue, see results, compare."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlmodel import Session, select

from app.models.jobs import Job, JobState
from app.models.trials import BenchRun, TrialServer
from app.trials import servers as trials
from tests.bench_support.sshd import Sshd
from tests.trials.conftest import quick_params, server_data
from tests.trials.recorded_runs import Recording

pytestmark = pytest.mark.slow


def test_tab_lists_servers_and_runs(login, provider):
    page = login("viewer").get(f"/providers/{provider.id}/trials")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "试用测试" in html and "尚未登记试用服务器" in html
    assert "add-server" not in html  # viewers cannot add


def test_register_confirm_key_run_and_read_results(
    login, immediate_jobs, session: Session, provider, offer, trial_server: Sshd, tmp_path: Path
):
    client = login("analyst")
    form = server_data(trial_server, offer_id=str(offer.id), port=str(trial_server.port))
    created = client.post(f"/providers/{provider.id}/trials/new", data=form)
    assert created.status_code == 302
    server = session.exec(select(TrialServer)).one()
    assert created.headers["Location"].endswith(f"/trial-servers/{server.id}")

    page = client.get(f"/trial-servers/{server.id}").get_data(as_text=True)
    assert "未确认" in page and "PRIVATE KEY" not in page

    queued = client.post(f"/trial-servers/{server.id}/host-key")
    assert queued.status_code == 302  # a job, not SSH inside the request
    job = session.exec(select(Job).where(Job.kind == trials.HOST_KEY_KIND)).one()
    assert job.params == {"server_id": server.id, "_locale": "zh"} and job.state == JobState.succeeded
    fetched = client.get(queued.headers["Location"]).get_data(as_text=True)
    assert trial_server.host_fingerprint in fetched and 'id="fetched-key"' in fetched
    pin = client.post(
        f"/trial-servers/{server.id}/host-key/pin",
        data={"fingerprint": trial_server.host_fingerprint, "key_type": "ssh-ed25519"},
    )
    assert pin.status_code == 302
    assert trial_server.host_fingerprint in client.get(f"/trial-servers/{server.id}").get_data(as_text=True)

    params = quick_params(tmp_path)
    started = client.post(
        f"/trial-servers/{server.id}/runs",
        data={
            "suite": "quick",
            "iperf3_seconds": "1",
            "fio_seconds": "1",
            "storage_path": params["storage_path"],
        },
    )
    assert started.status_code == 302
    run = session.exec(select(BenchRun)).one()
    assert started.headers["Location"].endswith(f"/bench-runs/{run.id}")

    html = client.get(f"/bench-runs/{run.id}").get_data(as_text=True)
    assert "已完成" in html
    assert re.search(r'data-check="storage_type">.*?data-verdict="fail"', html, re.S)
    assert "<svg" in html  # throughput chart
    assert 'data-step="iperf3" data-status="ok"' in html
    assert "&#34;sum_received&#34;" in html  # raw output kept verbatim (HTML-escaped)

    tab = client.get(f"/providers/{provider.id}/trials").get_data(as_text=True)
    assert f'data-run="{run.id}"' in tab


def test_two_runs_are_compared_and_the_tab_lists_the_newest(restored_runs: Recording, login):
    """Two real quick runs of one server (recorded once per backend): their comparison and the tab."""
    client = login("viewer")
    first, second = restored_runs.run_ids
    compare = client.get(f"/bench-runs/compare?a={first}&b={second}")
    assert compare.status_code == 200
    assert 'data-metric="read_iops"' in compare.get_data(as_text=True)
    tab = client.get(f"/providers/{restored_runs.provider_id}/trials").get_data(as_text=True)
    assert f'data-run="{second}"' in tab


def test_bad_form_input_is_shown_under_the_field(login, provider, trial_server: Sshd, session: Session):
    client = login("analyst")
    form = server_data(trial_server, host="bad host!", port="99999", private_key="not a key")
    response = client.post(f"/providers/{provider.id}/trials/new", data=form)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert 'id="f-host-error"' in html and 'id="f-port-error"' in html
    assert "not a key" not in html  # secrets are never echoed back
    assert session.exec(select(TrialServer)).all() == []


def test_start_refused_until_the_key_is_pinned(
    login, provider, cipher, policy, trial_server: Sshd, session: Session
):
    server = trials.create_server(
        session, provider_id=provider.id, data=server_data(trial_server), cipher=cipher, policy=policy
    )
    response = login("analyst").post(f"/trial-servers/{server.id}/runs", data={"suite": "quick"})
    assert response.status_code == 422
    assert 'id="run-key-error"' in response.get_data(as_text=True)


def test_bad_run_parameter_is_shown_under_it(
    login, provider, cipher, policy, trial_server: Sshd, session: Session
):
    data = server_data(trial_server, host_key_fingerprint=trial_server.host_fingerprint)
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)
    response = login("analyst").post(
        f"/trial-servers/{server.id}/runs", data={"suite": "quick", "fio_seconds": "0"}
    )
    assert response.status_code == 422
    assert 'id="p-fio_seconds-error"' in response.get_data(as_text=True)


def test_viewers_cannot_change_anything(
    login, provider, cipher, policy, trial_server: Sshd, session: Session
):
    server = trials.create_server(
        session, provider_id=provider.id, data=server_data(trial_server), cipher=cipher, policy=policy
    )
    client = login("viewer")
    assert client.get(f"/trial-servers/{server.id}").status_code == 200
    for path in (
        f"/trial-servers/{server.id}/runs",
        f"/trial-servers/{server.id}/host-key",
        f"/trial-servers/{server.id}/delete",
    ):
        assert client.post(path, data={"suite": "quick"}).status_code == 403
    assert client.get(f"/providers/{provider.id}/trials/new").status_code == 403


def test_unknown_ids_are_404_and_bad_compare_is_400(login):
    client = login("viewer")
    assert client.get("/trial-servers/424242").status_code == 404
    assert client.get("/bench-runs/424242").status_code == 404
    assert client.get("/bench-runs/compare?a=1").status_code == 400
