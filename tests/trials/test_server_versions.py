"""Trial-server edits name the version they started from; the database refuses a stale one."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from app.core.errors import Conflict, InvalidInput
from app.models.trials import TrialServer
from app.trials import servers as trials

DATA = {"name": "试用机 V", "host": "127.0.0.1", "port": 2222, "username": "root", "auth_method": "password"}


@pytest.fixture
def server(session, provider, cipher, policy) -> TrialServer:
    """A password-login trial server on loopback (never connected to here)."""
    return trials.create_server(
        session,
        provider_id=provider.id,
        data={**DATA, "password": "s3cret-pass"},
        cipher=cipher,
        policy=policy,
    )


def test_every_change_bumps_the_version(session, server, cipher, policy):
    assert server.version == 1
    changed = trials.update_server(
        session, server_id=server.id, data={"notes": "机柜 3", "version": 1}, cipher=cipher, policy=policy
    )
    assert changed.version == 2


def test_a_change_needs_the_version(session, server, cipher, policy):
    with pytest.raises(InvalidInput) as refused:
        trials.update_server(session, server_id=server.id, data={"notes": "x"}, cipher=cipher, policy=policy)
    assert refused.value.errors[0].field == "version"


def test_a_second_edit_of_the_same_version_is_refused_by_the_database(app, session, server, cipher, policy):
    engine = app.extensions["gpuvet.engine"]
    with Session(engine, expire_on_commit=False) as first, Session(engine, expire_on_commit=False) as second:
        trials.get_server(first, server_id=server.id)
        trials.get_server(second, server_id=server.id)  # both read version 1
        trials.update_server(
            first, server_id=server.id, data={"notes": "first", "version": 1}, cipher=cipher, policy=policy
        )
        with pytest.raises(Conflict):
            trials.update_server(
                second,
                server_id=server.id,
                data={"notes": "second", "version": 1},
                cipher=cipher,
                policy=policy,
            )
    session.expire_all()
    assert session.get(TrialServer, server.id).notes == "first"


def test_the_edit_page_carries_the_version_and_explains_a_conflict(login, session, server, cipher, policy):
    client = login("analyst")
    form = client.get(f"/trial-servers/{server.id}/edit").get_data(as_text=True)
    assert 'name="version" value="1"' in form
    trials.update_server(
        session, server_id=server.id, data={"notes": "meanwhile", "version": 1}, cipher=cipher, policy=policy
    )
    response = client.post(f"/trial-servers/{server.id}/edit", data={**DATA, "notes": "mine", "version": "1"})
    html = response.get_data(as_text=True)
    assert response.status_code == 409 and "now version 2" in html
    session.expire_all()
    assert session.get(TrialServer, server.id).notes == "meanwhile"
