"""/api/v1 trial servers and runs, with a real sshd and the queue run inline."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bench_support.sshd import Sshd
from tests.trials.conftest import quick_params, server_data

pytestmark = pytest.mark.slow


def test_register_run_and_read(
    app, immediate_jobs, token_for, provider, offer, trial_server: Sshd, tmp_path: Path
):
    client = app.test_client()
    analyst = token_for("analyst")
    body = server_data(trial_server, offer_id=offer.id, host_key_fingerprint=trial_server.host_fingerprint)
    created = client.post(f"/api/v1/providers/{provider.id}/trial-servers", json=body, headers=analyst)
    assert created.status_code == 201, created.get_json()
    server = created.get_json()
    assert "private_key" not in server and server["host_key_fingerprint"] == trial_server.host_fingerprint
    listed = client.get(f"/api/v1/providers/{provider.id}/trial-servers", headers=token_for("viewer"))
    assert [item["id"] for item in listed.get_json()["items"]] == [server["id"]]

    started = client.post(
        f"/api/v1/trial-servers/{server['id']}/runs",
        json={"suite": "quick", "params": quick_params(tmp_path)},
        headers=analyst,
    )
    assert started.status_code == 202, started.get_json()
    run = client.get(started.headers["Location"], headers=analyst).get_json()
    assert run["state"] == "succeeded"
    assert [step["status"] for step in run["steps"]] == ["ok"] * 5
    storage = next(c for c in run["comparisons"] if c["check"] == "storage_type")
    assert storage["verdict"] == "fail" and storage["red_flag"] == 12
    assert client.post(f"/api/v1/bench-runs/{run['id']}/cancel", headers=analyst).status_code == 409


def test_errors_name_the_field(app, token_for, provider, trial_server: Sshd):
    client = app.test_client()
    analyst = token_for("analyst")
    bad = client.post(
        f"/api/v1/providers/{provider.id}/trial-servers",
        json=server_data(trial_server, port=0, auth_method="telnet"),
        headers=analyst,
    )
    assert bad.status_code == 422
    assert {error["field"] for error in bad.get_json()["errors"]} == {"port", "auth_method"}
    created = client.post(
        f"/api/v1/providers/{provider.id}/trial-servers", json=server_data(trial_server), headers=analyst
    ).get_json()
    unpinned = client.post(
        f"/api/v1/trial-servers/{created['id']}/runs", json={"suite": "quick"}, headers=analyst
    )
    assert unpinned.status_code == 422
    assert unpinned.get_json()["errors"][0]["field"] == "host_key_fingerprint"
    extra = client.post(
        f"/api/v1/trial-servers/{created['id']}/runs", json={"suit": "quick"}, headers=analyst
    )
    assert extra.status_code == 422 and extra.get_json()["errors"][0]["field"] == "suit"
    assert client.get("/api/v1/bench-runs/4242", headers=analyst).status_code == 404
    viewer = token_for("viewer")
    forbidden = client.post(f"/api/v1/trial-servers/{created['id']}/runs", json={}, headers=viewer)
    assert forbidden.status_code == 403


def test_operations_are_in_the_openapi_document(app, token_for):
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    assert "/trial-servers/{server_id}/runs" in document["paths"]
    assert "/bench-runs/{run_id}" in document["paths"]
