"""Login throttling against a real gunicorn with several workers behind one proxy hop (X-Forwarded-For):
a burst of wrong passwords from one address never keeps the owner, at another address, out. Also each
gunicorn's control socket lives in its own instance folder."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from sqlmodel import select

from app.accounts import login_throttle
from app.core.config import PROJECT_ROOT
from app.models import LoginFailure, User
from app.models.user import AccountNotice
from tests.conftest import PASSWORD, csrf_token_from
from tests.live_server import gunicorn_server

ATTACKER, OWNER = "203.0.113.9", "198.51.100.7"
GUESSES = 24


@pytest.fixture(scope="module")
def server(database_url, tmp_path_factory):
    """gunicorn with four workers trusting one proxy hop, started once per backend."""
    instance = tmp_path_factory.mktemp("gunicorn-login") / "instance"
    env = {"GPUVET_PROXY_HOPS": "1"}
    with gunicorn_server(database_url=database_url, instance_path=instance, extra_env=env) as base_url:
        yield base_url


def _login(http: requests.Session, base_url: str, address: str, password: str) -> int:
    """GET the form (for its CSRF token), then POST the password as a client at `address`."""
    headers = {"X-Forwarded-For": address}
    form = http.get(f"{base_url}/login", headers=headers, timeout=60)
    data = {"username": "olga", "password": password, "csrf_token": csrf_token_from(form.text)}
    answer = http.post(f"{base_url}/login", data=data, headers=headers, allow_redirects=False, timeout=60)
    return answer.status_code


def _burst_with_the_owner(base_url: str) -> tuple[list[int], int]:
    """GUESSES wrong passwords from ATTACKER and the owner's right one from OWNER, all at one moment."""
    barrier = threading.Barrier(GUESSES + 1, timeout=60)

    def one(index: int) -> int:
        with requests.Session() as http:
            http.get(f"{base_url}/login", timeout=60)  # the session cookie before the race
            barrier.wait()
            if index == 0:
                return _login(http, base_url, OWNER, PASSWORD)
            return _login(http, base_url, ATTACKER, "not the password at all")

    with ThreadPoolExecutor(max_workers=GUESSES + 1) as pool:
        owner, *guesses = pool.map(one, range(GUESSES + 1))
    return guesses, owner


@pytest.mark.slow
def test_a_parallel_burst_from_one_address_never_keeps_the_owner_out(server, session, make_user):
    make_user("olga", "analyst")
    guesses, owner = _burst_with_the_owner(server)
    assert owner == 302, owner
    assert set(guesses) <= {401, 429} and guesses.count(401) <= login_throttle.PAIR_LIMIT, guesses
    assert 429 in guesses
    with requests.Session() as http:
        assert _login(http, server, ATTACKER, PASSWORD) == 429  # even the right password, from there
    with requests.Session() as http:
        assert _login(http, server, OWNER, PASSWORD) == 302
    session.expire_all()
    stored = session.exec(select(LoginFailure).where(LoginFailure.username == "olga")).all()
    assert {row.address for row in stored} == {ATTACKER} and len(stored) <= login_throttle.PAIR_LIMIT
    user = session.exec(select(User).where(User.username == "olga")).one()
    notices = session.exec(select(AccountNotice).where(AccountNotice.user_id == user.id)).all()
    assert len(notices) == (1 if guesses.count(401) >= login_throttle.NOTICE_AFTER else 0)


# ---------------------------------------------------------------- gunicorn's control socket


def test_the_control_socket_is_in_the_instance_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GPUVET_INSTANCE_PATH", str(tmp_path / "instance"))
    settings = runpy.run_path(str(PROJECT_ROOT / "gunicorn.conf.py"))
    assert settings["control_socket"] == str(tmp_path / "instance" / "gunicorn.ctl")
    assert settings["control_socket_mode"] == 0o600


def _stats(socket: Path) -> dict:
    """`gunicornc show stats` of the gunicorn listening on `socket`."""
    command = [sys.executable, "-m", "gunicorn.ctl.cli", "-s", str(socket), "-c", "show stats", "-j"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=True)
    return json.loads(done.stdout)


@pytest.mark.slow
def test_two_gunicorns_each_keep_their_own_control_socket(database_url, tmp_path: Path):
    first, second = tmp_path / "one" / "instance", tmp_path / "two" / "instance"
    for instance in (first, second):
        instance.parent.mkdir()  # the server's log goes beside its instance folder
    with gunicorn_server(database_url=database_url, instance_path=first, workers=1, control_socket=True):
        with gunicorn_server(database_url=database_url, instance_path=second, workers=1, control_socket=True):
            one, two = _stats(first / "gunicorn.ctl"), _stats(second / "gunicorn.ctl")
            assert one["pid"] != two["pid"]
            assert one["workers_current"] == two["workers_current"] == 1
        assert not (second / "gunicorn.ctl").exists()  # removed on exit, the other one left alone
        assert _stats(first / "gunicorn.ctl")["pid"] == one["pid"]
