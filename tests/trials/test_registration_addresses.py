"""Host and peer address meet the trial address policy when a server is registered or changed, when a run
starts, and as node addresses of a multi-node run (issue 23 item 11).

No real DNS: "localhost", literal addresses and a monkeypatched resolver.
"""

from __future__ import annotations

import socket

import pytest
from bs4 import BeautifulSoup
from sqlmodel import Session, select

from app.core.errors import InvalidInput
from app.models.trials import RunState, TrialServer
from app.trials import bench_runs, matrix_runs, server_addresses
from app.trials import servers as trials
from benchmarks import ssh
from scrapers.addresses import AddressPolicy
from tests.trials.conftest import set_trial_allow_cidrs

REAL_GETADDRINFO = socket.getaddrinfo
PINNED = "SHA256:" + "A" * 43
INTRANET = AddressPolicy(allow_cidrs=("10.0.0.0/8",))
LOOPBACK_BOTH = AddressPolicy(allow_cidrs=("127.0.0.0/8", "::1/128"))


def _data(**overrides) -> dict:
    """A trial server on a public address, logging in with a password (no key, no sshd needed)."""
    return {
        "name": "试用机 B",
        "host": "93.184.216.34",
        "port": 22,
        "username": "root",
        "auth_method": "password",
        "password": "pw",
        **overrides,
    }


def _messages(exc: InvalidInput) -> dict[str, str]:
    return {error.field: error.message for error in exc.errors}


@pytest.fixture(autouse=True)
def never_connects(monkeypatch):
    """Fail the test if anything opens an SSH connection (the public addresses here are never reached)."""

    def connect(self):
        raise AssertionError(f"connected to {self.target.host}")

    monkeypatch.setattr(ssh.SSHRunner, "connect", connect)


@pytest.fixture
def fake_dns(monkeypatch) -> dict[str, str | None]:
    """Map chosen names to an address, or to None for a name that does not resolve; others resolve as ever."""
    table: dict[str, str | None] = {}

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host not in table:
            return REAL_GETADDRINFO(host, port, family, type, proto, flags)
        address = table[host]
        if address is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if ":" in address:
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table


# ---------------------------------------------------------------- host
def test_a_host_name_resolving_to_loopback_is_refused_at_registration(session: Session, provider, cipher):
    with pytest.raises(InvalidInput) as caught:
        trials.create_server(session, provider_id=provider.id, data=_data(host="localhost"), cipher=cipher)
    messages = _messages(caught.value)
    assert set(messages) == {"host"}
    assert "回环地址" in messages["host"] and "GPUVET_TRIAL_ALLOW_CIDRS" in messages["host"]
    assert session.exec(select(TrialServer)).all() == []
    data = _data(host="localhost")
    server = trials.create_server(
        session, provider_id=provider.id, data=data, cipher=cipher, policy=LOOPBACK_BOTH
    )
    assert server.host == "localhost"


def test_a_host_carrying_a_private_address_is_refused_naming_it(session: Session, provider, cipher, fake_dns):
    fake_dns["gpu1.trial.example"] = "2002:a00:5::"  # 6to4 of 10.0.0.5
    for host in ("gpu1.trial.example", "64:ff9b::10.0.0.5"):
        with pytest.raises(InvalidInput) as caught:
            trials.create_server(session, provider_id=provider.id, data=_data(host=host), cipher=cipher)
        messages = _messages(caught.value)
        assert set(messages) == {"host"} and "内嵌 IPv4 地址 10.0.0.5：内网地址" in messages["host"], host
    server = trials.create_server(
        session,
        provider_id=provider.id,
        data=_data(host="gpu1.trial.example"),
        cipher=cipher,
        policy=INTRANET,
    )
    assert server.host == "gpu1.trial.example"


def test_a_name_that_does_not_resolve_is_saved_and_refused_on_connecting(
    session: Session, provider, cipher, fake_dns
):
    fake_dns["gpu9.trial.example"] = None
    fake_dns["node9.cluster.internal"] = None  # a name only the provider's network knows
    data = _data(host="gpu9.trial.example", peer_address="node9.cluster.internal")
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher)
    assert (server.host, server.peer_address) == ("gpu9.trial.example", "node9.cluster.internal")
    with pytest.raises(InvalidInput) as caught:
        trials.ssh_target(server, cipher)
    messages = _messages(caught.value)
    assert set(messages) == {"host"} and "无法解析域名 gpu9.trial.example" in messages["host"]


# ---------------------------------------------------------------- peer address
@pytest.mark.parametrize(
    ("peer_address", "named", "stored"),
    [
        ("10.0.0.12", "内网地址", "10.0.0.12"),
        ("64:ff9b::10.0.0.12", "内嵌 IPv4 地址 10.0.0.12：内网地址", "64:ff9b::a00:c"),
        ("node2.trial.example", "内网地址", "node2.trial.example"),  # resolves to 10.0.0.12 (below)
    ],
)
def test_a_private_peer_address_is_refused_naming_the_field_unless_allow_listed(
    session: Session, provider, cipher, fake_dns, peer_address, named, stored
):
    fake_dns["node2.trial.example"] = "10.0.0.12"
    data = _data(peer_address=peer_address)
    with pytest.raises(InvalidInput) as caught:
        trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher)
    messages = _messages(caught.value)
    assert set(messages) == {"peer_address"}
    assert named in messages["peer_address"] and "GPUVET_TRIAL_ALLOW_CIDRS" in messages["peer_address"]
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=INTRANET)
    assert server.peer_address == stored


def test_host_and_peer_address_are_both_named_at_once(session: Session, provider, cipher):
    data = _data(host="localhost", peer_address="169.254.169.254")
    with pytest.raises(InvalidInput) as caught:
        trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher)
    messages = _messages(caught.value)
    assert set(messages) == {"host", "peer_address"} and "链路本地地址" in messages["peer_address"]


def test_changing_the_peer_address_to_a_refused_one_changes_nothing(session: Session, provider, cipher):
    server = trials.create_server(session, provider_id=provider.id, data=_data(), cipher=cipher)
    with pytest.raises(InvalidInput) as caught:
        trials.update_server(
            session,
            server_id=server.id,
            data={"peer_address": "2002:c0a8:10a::", "version": server.version},
            cipher=cipher,
        )
    messages = _messages(caught.value)
    assert set(messages) == {"peer_address"} and "192.168.1.10" in messages["peer_address"]
    session.expire_all()
    assert session.get(TrialServer, server.id).peer_address is None


def test_a_run_with_a_peer_address_no_longer_admitted_fails_before_any_step(
    app, session: Session, provider, cipher
):
    peer = trials.create_server(
        session, provider_id=provider.id, data=_data(name="对端", host_key_fingerprint=PINNED), cipher=cipher
    )
    data = _data(host_key_fingerprint=PINNED, peer_id=peer.id, peer_address="10.0.0.12")
    server = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=INTRANET)
    with app.app_context():
        run = bench_runs.create_run(session, server_id=server.id, suite="quick")
        run = bench_runs.execute_run(session, run_id=run.id, cipher=cipher, policy=server_addresses.STRICT)
    assert run.state == RunState.failed and run.error_kind == "refused"
    assert run.error.startswith("peer_address: ") and "内网地址" in run.error
    assert {step.status for step in bench_runs.run_steps(session, run_id=run.id)} == {"skipped"}


# ---------------------------------------------------------------- API and page
def test_api_names_host_and_peer_address(app, token_for, provider):
    set_trial_allow_cidrs(app, ())
    client, analyst = app.test_client(), token_for("analyst")
    url = f"/api/v1/providers/{provider.id}/trial-servers"
    response = client.post(url, json=_data(host="localhost", peer_address="10.0.0.12"), headers=analyst)
    assert response.status_code == 422
    errors = {error["field"]: error["message"] for error in response.get_json()["errors"]}
    assert set(errors) == {"host", "peer_address"}
    assert "回环地址" in errors["host"] and "内网地址" in errors["peer_address"]
    set_trial_allow_cidrs(app, ("127.0.0.0/8", "::1/128", "10.0.0.0/8"))
    created = client.post(url, json=_data(host="localhost", peer_address="10.0.0.12"), headers=analyst)
    assert created.status_code == 201, created.get_json()


def test_the_form_shows_the_refusals_under_host_and_peer_address(app, login, provider, offer, session):
    set_trial_allow_cidrs(app, ())
    form = _data(host="localhost", peer_address="64:ff9b::10.0.0.12", offer_id=str(offer.id), port="22")
    client = login("analyst")
    response = client.post(f"/providers/{provider.id}/trials/new", data=form)
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert 'id="f-host-error"' in html and "回环地址" in html
    assert 'id="f-peer_address-error"' in html and "内嵌 IPv4 地址 10.0.0.12：内网地址" in html
    client.get("/lang/en")
    html = client.post(f"/providers/{provider.id}/trials/new", data=form).get_data(as_text=True)
    assert "(embedded IPv4 address 10.0.0.12: private address)" in html and "内网地址" not in html
    assert session.exec(select(TrialServer)).all() == []


# ---------------------------------------------------------------- multi-node runs
def _pinned_pair(session: Session, provider, offer, cipher) -> list[int]:
    return [
        trials.create_server(
            session,
            provider_id=provider.id,
            data=_data(name=name, host=host, offer_id=offer.id, host_key_fingerprint=PINNED),
            cipher=cipher,
        ).id
        for name, host in (("node1", "93.184.216.34"), ("node2", "93.184.216.35"))
    ]


def test_a_matrix_node_address_follows_the_policy(app, session: Session, provider, offer, cipher):
    first, second = _pinned_pair(session, provider, offer, cipher)
    nodes = [{"server_id": first}, {"server_id": second, "address": "64:ff9b::10.0.0.7"}]
    with pytest.raises(InvalidInput) as caught:
        matrix_runs.create_matrix_run(session, data={"nodes": nodes}, policy=server_addresses.STRICT)
    messages = _messages(caught.value)
    assert set(messages) == {"nodes[1].address"} and "10.0.0.7" in messages["nodes[1].address"]
    run = matrix_runs.create_matrix_run(session, data={"nodes": nodes}, policy=INTRANET)
    run = matrix_runs.execute_matrix_run(
        session, run_id=run.id, cipher=cipher, policy=server_addresses.STRICT
    )
    assert run.state == RunState.failed and run.error_kind == "refused"
    assert run.error.startswith("nodes[1].address: ")


def test_the_api_refuses_a_matrix_node_address_with_the_apps_policy(
    app, session, provider, offer, cipher, token_for
):
    first, second = _pinned_pair(session, provider, offer, cipher)
    body = {
        "nodes": [{"server_id": first, "address": "127.0.0.1"}, {"server_id": second, "address": "10.0.0.8"}]
    }
    response = app.test_client().post("/api/v1/bench-matrix", json=body, headers=token_for("analyst"))
    assert response.status_code == 422  # loopback is allow-listed in these tests, 10.0.0.0/8 is not
    assert [error["field"] for error in response.get_json()["errors"]] == ["nodes[1].address"]


def test_the_matrix_page_shows_a_refused_node_address(app, login, session, provider, offer, cipher):
    first, second = _pinned_pair(session, provider, offer, cipher)
    form = {"server_id": [str(first), str(second)], f"address_{second}": "2002:a00:8::"}
    response = login("analyst").post(f"/providers/{provider.id}/trials/matrix", data=form)
    assert response.status_code == 422
    page = BeautifulSoup(response.get_data(as_text=True), "html.parser")
    alert = page.select_one("#matrix-errors").get_text()
    assert "内嵌 IPv4 地址 10.0.0.8：内网地址" in alert and "GPUVET_TRIAL_ALLOW_CIDRS" in alert
