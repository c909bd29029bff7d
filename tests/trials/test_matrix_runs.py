"""Multi-node runs in the app: three trial servers of one offer (sshd in meshed namespaces, one link shaped,
stand-in mpirun and perftest), started from the page, the API and the command line, stored as one run."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from sqlmodel import Session, select

from app.models import Offer
from app.models.trials import BenchRun, TrialServer
from app.trials import bench_runs, matrix_runs, server_addresses
from app.trials import servers as trials
from tests.bench_support.cluster_standins import logged, standin_cluster
from tests.bench_support.netns import netns_supported
from tests.bench_support.sshd import Sshd, keygen
from tests.conftest import missing_tool
from tests.trials.conftest import server_data, set_trial_allow_cidrs

SHAPED_MBIT = 100
# The mesh nodes' sshd addresses (tests/bench_support/netns.py) and intranet addresses (cluster.py).
MANAGEMENT = ("10.200.0.0/16", "10.201.0.0/16")


@dataclass
class Mesh:
    """The nodes' sshds, their intranet addresses and the stand-ins' call log."""

    sshds: list[Sshd]
    addresses: list[str]
    log: Path


@pytest.fixture(scope="module")
def mesh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mesh]:
    """Three nodes meshed by veths, node2-node3 shaped to 100 Mbit/s, each with sshd and the stand-ins."""
    if os.geteuid() != 0:
        missing_tool("sshd privilege separation and ip netns need root")
    supported, reason = netns_supported()
    if not supported:
        missing_tool(reason)
    with standin_cluster(tmp_path_factory.mktemp("app-cluster"), 3, shaped={(1, 2): SHAPED_MBIT}) as (
        cluster,
        sshds,
        log,
    ):
        yield Mesh(sshds, [node.intranet_address for node in cluster.nodes], log)


def _servers(session: Session, app, offer: Offer, mesh: Mesh, cipher) -> list[TrialServer]:
    """node1..node3 registered for `offer`, host keys pinned; the offer claims 1 Gbps intranet, 400G RDMA."""
    set_trial_allow_cidrs(app, MANAGEMENT)
    offer.intranet_gbps, offer.rdma_type, offer.rdma_gbps = 1, "roce", 400
    session.add(offer)
    session.commit()
    policy = server_addresses.address_policy(app.config["GPUVET_SETTINGS"])
    return [
        trials.create_server(
            session,
            provider_id=offer.provider_id,
            data=server_data(
                sshd, name=f"node{index}", offer_id=offer.id, host_key_fingerprint=sshd.host_fingerprint
            ),
            cipher=cipher,
            policy=policy,
        )
        for index, sshd in enumerate(mesh.sshds, start=1)
    ]


def _page(client, path: str, language: str) -> BeautifulSoup:
    client.get(f"/lang/{language}?next={path}")
    response = client.get(path)
    assert response.status_code == 200
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.mark.slow
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the API test stores one on both
def test_a_matrix_run_started_on_the_page_is_stored_and_shown_as_a_pair_table(
    app, immediate_jobs, login, session, offer, cipher, mesh: Mesh
):
    servers = _servers(session, app, offer, mesh, cipher)
    client = login("analyst")
    form = _page(client, f"/providers/{offer.provider_id}/trials/matrix", "zh")
    assert len(form.select(f'fieldset[data-offer="{offer.id}"] input[name=server_id]')) == 3
    data = {"csrf_token": "", "server_id": [str(s.id) for s in servers], "iperf3_seconds": "1"}
    data |= {f"address_{s.id}": address for s, address in zip(servers, mesh.addresses, strict=True)}
    data["cluster"] = ["collective_cluster", "rdma"]
    started = client.post(f"/providers/{offer.provider_id}/trials/matrix", data=data)
    assert started.status_code == 302, started.get_data(as_text=True)[:2000]
    [run] = session.exec(select(BenchRun).where(BenchRun.suite == "matrix")).all()  # one for the three nodes
    session.refresh(run)
    assert run.state == "succeeded", run.error
    assert (
        run.trial_server_id == servers[0].id and [n["address"] for n in run.params["nodes"]] == mesh.addresses
    )
    steps = bench_runs.run_steps(session, run_id=run.id)
    assert [(s.step, s.status) for s in steps] == [
        ("pair_1", "ok"),
        ("pair_2", "ok"),
        ("pair_3", "ok"),
        ("collective_cluster", "ok"),
        ("rdma", "ok"),
    ]
    assert steps[2].options == {"from": "node2", "to": "node3"}
    [mpirun] = [argv for argv in logged(mesh.log, "mpirun") if mesh.addresses[2] + ":8" in " ".join(argv)][
        -1:
    ]
    assert mpirun[mpirun.index("-np") + 1] == "24"
    checks: dict[tuple[str, str], set[str]] = {}
    for c in run.comparisons:
        checks.setdefault((c["check"], c["subject"]), set()).add(c["verdict"])
    assert checks[("matrix", "node2->node3")] == {"fail", "warn"}  # below the claim, and the slow link
    assert checks[("matrix", "node1->node2")] == {"pass"}
    assert checks[("rdma", "target->peer")] == {"pass", "info"}  # 391.87 of the claimed 400 Gbps; latency
    assert any(s["metric"] == "rdma_gbps" for s in steps[4].samples)

    for language, heading in (("zh", "节点间带宽（Gbit/s）"), ("en", "Bandwidth between nodes (Gbit/s)")):
        page = _page(client, f"/bench-runs/{run.id}", language)
        table = page.select_one("table#matrix")
        assert table is not None and heading in page.get_text(" ")
        assert [th.get_text(strip=True) for th in table.select("thead th")][1:] == ["node1", "node2", "node3"]
        flagged = {td["data-pair"]: td["data-flagged"] for td in table.select("td[data-flagged]")}
        assert flagged == {"node2->node3": "fail"}
        shaped = table.select_one('td[data-pair="node2->node3"]')
        assert "table-danger" in shaped["class"] and float(shaped.get_text(strip=True)) < 0.11
        assert float(table.select_one('td[data-pair="node1->node2"]').get_text(strip=True)) > 0.2
        steps_text = page.select_one("table#steps").get_text(" ")
        assert "node2 → node3" in steps_text and "pair_3" not in steps_text
    assert "switch" in page.select_one("#matrix-flags").get_text(" ")  # the English reasons on the en page


@pytest.mark.slow
def test_the_api_queues_a_run_and_the_command_line_runs_one(
    app, session, offer, cipher, token_for, mesh: Mesh
):
    first, second, _third = _servers(session, app, offer, mesh, cipher)
    body = {
        "nodes": [
            {"server_id": first.id, "address": mesh.addresses[0]},
            {"server_id": second.id, "address": mesh.addresses[1]},
        ],
        "cluster": ["rdma"],
    }
    api, analyst = app.test_client(), token_for("analyst")
    started = api.post("/api/v1/bench-matrix", json=body, headers=analyst)
    assert started.status_code == 202, started.get_json()
    queued = api.get(started.headers["Location"], headers=token_for("viewer")).get_json()
    assert queued["suite"] == "matrix" and queued["state"] == "queued" and queued["job_id"]
    assert [(s["step"], s["status"]) for s in queued["steps"]] == [("pair_1", "pending"), ("rdma", "pending")]
    assert queued["params"]["nodes"][1] == {
        "server_id": second.id,
        "name": "node2",
        "address": mesh.addresses[1],
    }
    again = api.post("/api/v1/bench-matrix", json=body, headers=analyst)
    assert again.status_code == 409  # node1 is busy with the queued run
    assert api.post(f"/api/v1/bench-runs/{queued['id']}/cancel", headers=analyst).status_code == 200

    args = ["bench", "matrix", str(first.id), str(second.id), "--no-cluster", "--param", "iperf3_seconds=1"]
    args += [f"--address={first.id}={mesh.addresses[0]}", f"--address={second.id}={mesh.addresses[1]}"]
    result = app.test_cli_runner().invoke(args=args)
    assert result.exit_code == 0, result.output
    printed = json.loads(result.stdout)
    assert printed["state"] == "succeeded" and printed["steps"][0]["from"] == "node1"
    assert [c["check"] for c in printed["comparisons"]] == ["matrix"]


def test_bad_requests_name_the_field(app, session, provider, offer, cipher, token_for, login, tmp_path: Path):
    """No sshd needed: every request is refused before anything connects."""
    key = keygen(tmp_path / "key").read_text()
    pinned = "SHA256:" + "A" * 43

    def server(name: str, **extra) -> int:
        data = {"name": name, "host": "trial.example.com", "private_key": key, "offer_id": offer.id, **extra}
        return trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher).id

    a, b = server("a", host_key_fingerprint=pinned), server("b", host_key_fingerprint=pinned)
    unpinned, no_offer = server("c"), server("d", offer_id=None, host_key_fingerprint=pinned)
    client, analyst = app.test_client(), token_for("analyst")

    def refused(body: dict, status: int = 422) -> list[str]:
        response = client.post("/api/v1/bench-matrix", json=body, headers=analyst)
        assert response.status_code == status, response.get_json()
        return [error["field"] for error in response.get_json()["errors"]]

    assert refused({"nodes": [{"server_id": a}]}) == ["nodes"]
    assert refused({"nodes": [{"server_id": a}, {"server_id": a}]}) == ["nodes"]
    assert refused({"nodes": [{"server_id": a}, {"server_id": no_offer}]}) == ["nodes"]
    assert refused({"nodes": [{"server_id": a}, {"server_id": unpinned}]}) == ["nodes[1].server_id"]
    assert refused({"nodes": [{"server_id": a}, {"server_id": b, "address": "not an address!"}]}) == [
        "nodes[1].address"
    ]
    assert refused({"nodes": [{"server_id": a}, {"server_id": b}], "cluster": ["nccl"]}) == ["cluster"]
    assert refused({"nodes": [{"server_id": a}, {"server_id": b}], "params": {"iperf3_seconds": 0}}) == [
        "params.iperf3_seconds"
    ]
    assert refused({"nodes": [{"server_id": a}, {"server_id": 4242}]}, 404) == ["trial_server_id"]
    viewer = client.post("/api/v1/bench-matrix", json={"nodes": []}, headers=token_for("viewer"))
    assert viewer.status_code == 403
    queued = matrix_runs.create_matrix_run(session, data={"nodes": [{"server_id": a}, {"server_id": b}]})
    assert [node["address"] for node in queued.params["nodes"]] == ["trial.example.com", "trial.example.com"]
    busy = refused({"nodes": [{"server_id": a}, {"server_id": b}]}, 409)
    assert busy == ["nodes"]
    result = app.test_cli_runner().invoke(args=["bench", "matrix", str(a), "--address", "x"])
    assert result.exit_code == 1 and "address" in result.output
    page = login("analyst").post(f"/providers/{provider.id}/trials/matrix", data={"server_id": [str(a), "x"]})
    assert page.status_code == 422 and "matrix-errors" in page.get_data(as_text=True)
    listed = BeautifulSoup(page.get_data(as_text=True), "html.parser").select(
        "input[name=server_id][checked]"
    )
    assert [box["value"] for box in listed] == [str(a)]  # the choice is kept
