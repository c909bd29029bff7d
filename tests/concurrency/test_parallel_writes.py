"""Parallel writers against a real gunicorn with several workers: the database decides who wins."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import date

import pytest
import requests
import sqlalchemy as sa
from sqlmodel import Session, select

from app.models import AuditEntry, Provider
from app.registry import providers as svc
from tests.api.conftest import provider_payload
from tests.live_server import gunicorn_server

WRITERS = 20


@pytest.fixture(scope="module")
def server(database_url, tmp_path_factory):
    """gunicorn with four workers over the test database, started once per backend (each test's `app`
    empties the tables; the workers keep no state between requests)."""
    instance = tmp_path_factory.mktemp("gunicorn") / "instance"
    with gunicorn_server(database_url=database_url, instance_path=instance) as base_url:
        yield base_url


def _race(send, count: int) -> list[requests.Response]:
    """Start `count` requests at the same moment (a barrier), each on its own connection."""
    barrier = threading.Barrier(count, timeout=30)

    def one(index: int) -> requests.Response:
        with requests.Session() as http:
            barrier.wait()
            return send(http, index)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(one, range(count)))


def _updates_of(session: Session, provider_id: int) -> list[AuditEntry]:
    return list(
        session.exec(
            select(AuditEntry).where(
                AuditEntry.entity == "provider",
                AuditEntry.entity_id == provider_id,
                AuditEntry.action == "update",
            )
        ).all()
    )


@pytest.mark.slow
def test_twenty_patches_of_one_version_exactly_one_wins(server, session, token_for):
    headers = token_for("analyst")
    provider = svc.create_provider(session, data=provider_payload())

    def patch(http: requests.Session, index: int) -> requests.Response:
        body = {"version": 1, "notes": f"writer {index}"}
        return http.patch(f"{server}/api/v1/providers/{provider.id}", json=body, headers=headers, timeout=60)

    responses = _race(patch, WRITERS)
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] + [409] * (WRITERS - 1), statuses
    for response in responses:
        if response.status_code == 409:
            assert response.json()["errors"][0]["field"] == "version"
    winner = next(r for r in responses if r.status_code == 200).json()
    session.expire_all()
    stored = session.get(Provider, provider.id)
    assert stored.version == 2
    assert stored.notes == winner["notes"]
    updates = _updates_of(session, provider.id)
    assert len(updates) == 1 and updates[0].changes["notes"][1] == winner["notes"]


@pytest.mark.slow
def test_parallel_nested_replacements_leave_one_writers_offers(server, session, token_for):
    headers = token_for("admin")  # replacing a list deletes records: admins only
    provider = svc.create_provider(session, data=provider_payload(offers=[]))

    def replace_offers(http: requests.Session, index: int) -> requests.Response:
        offers = [
            {"name": f"writer {index} offer {n}", "gpu_model": "A800", "gpus_per_node": 8} for n in range(3)
        ]
        body = {"version": 1, "offers": offers}
        return http.patch(f"{server}/api/v1/providers/{provider.id}", json=body, headers=headers, timeout=60)

    responses = _race(replace_offers, 10)
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] + [409] * 9, statuses
    winner = next(r for r in responses if r.status_code == 200).json()
    session.expire_all()
    stored = svc.get_provider(session, provider_id=provider.id)
    assert stored.version == 2
    assert sorted(offer.name for offer in stored.offers) == sorted(
        offer["name"] for offer in winner["offers"]
    )
    assert len(stored.offers) == 3


@pytest.mark.slow
def test_kept_advice_in_every_worker_follows_writes_made_while_it_advised(server, session, token_for):
    # each worker keeps the offers it read and refreshes the changed providers (registry_version and
    # provider_version, moved by triggers); writes committed while workers advise must all show afterwards
    from app.advice import engine as advice_engine
    from app.cases import cases, registry_facts
    from app.models import Offer
    from app.models.registry_version import ROW_ID, RegistryVersion
    from tests.cases.test_advice_statements import add_providers
    from tests.cases.test_measured_offers import small_model_answers

    session.execute(sa.insert(RegistryVersion.__table__).values(id=ROW_ID, n=0))  # keeping on
    session.commit()
    add_providers(session, 0, 24)
    answers = small_model_answers(0.01)
    case = cases.create_case(session, answers=answers.model_dump(mode="json"), owner=cases.Actor(None, "a"))
    headers = token_for("analyst")
    url = f"{server}/api/v1/cases/{case.id}"
    offer_ids = session.exec(select(Offer.id).order_by(Offer.id)).all()

    def ranking_of(advice: dict) -> list[tuple]:
        return [(o["offer_id"], o["monthly_cost_cny"], o["rank"], o["excluded"]) for o in advice["offers"]]

    def read(http: requests.Session, _index: int) -> list[int]:
        return [http.get(url, headers=headers, timeout=60).status_code for _ in range(6)]

    def write(index: int) -> None:
        with Session(session.get_bind()) as own:
            for step in range(6):
                offer = own.get(Offer, offer_ids[(index * 7 + step * 5) % len(offer_ids)])
                offer.price_month_cny = 50_000 + index * 100 + step
                own.commit()

    for _ in range(8):  # every worker reads and keeps the registry first
        assert requests.get(url, headers=headers, timeout=60).status_code == 200
    with ThreadPoolExecutor(max_workers=4) as writers:
        pending = [writers.submit(write, index) for index in range(4)]
        statuses = _race(read, 8)
        for future in pending:
            future.result(timeout=120)
    assert {status for batch in statuses for status in batch} == {200}
    session.expire_all()
    fresh = advice_engine.advise(answers, registry_facts.offer_facts(session), today=date.today()).to_dict()
    assert len({price for _id, price, *_rest in ranking_of(fresh)}) > 1
    for _ in range(12):  # whichever worker answers, it shows every write
        advice = requests.get(url, headers=headers, timeout=60).json()["advice"]
        assert ranking_of(advice) == ranking_of(fresh)
