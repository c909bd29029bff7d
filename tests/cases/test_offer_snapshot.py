"""Advice keeps the offers it read until the registry changes: every change moves the counter and stamps the
changed provider (triggers), and the next advice reads only the changed providers again."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date
from functools import partial

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from app.advice import engine
from app.cases import cases, registry_facts
from app.credentials.verdicts import verdicts_of
from app.models import Certification, Datacenter, Licence, Offer, Provider
from app.models.bench_figure import BenchFigure
from app.models.checks import CheckRun, StoredFinding
from app.models.registry_version import ROW_ID, RegistryVersion
from app.models.trials import BenchRun
from app.registry import offer_snapshot
from tests.cases.test_advice_statements import add_providers, counted
from tests.cases.test_measured_offers import TODAY, small_model_answers


@pytest.fixture
def kept(session: Session) -> Iterator[None]:
    """The counter's row (the tests' table emptying removes it, which turns keeping off) and no kept table."""
    session.execute(sa.delete(RegistryVersion.__table__))
    session.execute(sa.insert(RegistryVersion.__table__).values(id=ROW_ID, n=0))
    session.commit()
    offer_snapshot.clear()
    yield
    offer_snapshot.clear()


@pytest.fixture
def reads(monkeypatch) -> list[object]:
    """The providers each read of offer facts asked for (None: every provider)."""
    asked: list[object] = []
    read = registry_facts.offer_facts

    def recorded(session, **kw):
        asked.append(kw.get("providers"))
        return read(session, **kw)

    monkeypatch.setattr(registry_facts, "offer_facts", recorded)
    return asked


def version(session: Session) -> int:
    session.rollback()
    return session.execute(sa.select(RegistryVersion.__table__.c.n)).scalar_one()


def advise(session: Session):
    session.rollback()
    return cases.advise_answers(session, answers=small_model_answers(0.01), today=TODAY)


def test_an_unchanged_registry_is_read_once_and_advised_alike(session, kept):
    add_providers(session, 0, 4)
    first = advise(session)
    with counted(session) as statements:
        second = advise(session)
    assert len(statements) == 1  # the counter
    assert second.ranked.table is first.ranked.table
    assert second.to_dict() == first.to_dict()


def _first(session: Session, model) -> object:
    return session.exec(select(model).order_by(model.id)).first()


def _offer_price(session: Session) -> None:
    _first(session, Offer).price_month_cny = 1


def _licence(session: Session) -> None:
    provider = _first(session, Provider)
    session.add(Licence(provider_id=provider.id, number_raw="京B1-20240001", business_items=["B11"]))


def _certification(session: Session) -> None:
    provider = _first(session, Provider)
    session.add(Certification(provider_id=provider.id, kind="iso27001", number="ISO-1"))


def _datacenter_city(session: Session) -> None:
    _first(session, Datacenter).city = "上海"


def _check_run(session: Session) -> None:
    provider = _first(session, Provider)
    run = CheckRun(provider_id=provider.id, verdict="pass", checked_on=date(2026, 5, 2), rules_version="t")
    session.add(run)


def _finding_removed(session: Session) -> None:
    session.delete(_first(session, StoredFinding))


def _run_state(session: Session) -> None:
    _first(session, BenchRun).state = "failed"


def _figure_removed(session: Session) -> None:
    session.delete(_first(session, BenchFigure))


def _offer_removed(session: Session) -> None:
    session.delete(_first(session, Offer))


CHANGES: list[Callable[[Session], None]] = [
    _offer_price,
    _licence,
    _certification,
    _datacenter_city,
    _check_run,
    _finding_removed,
    _run_state,
    _figure_removed,
    _offer_removed,
]


@pytest.mark.parametrize("change", CHANGES, ids=[change.__name__.strip("_") for change in CHANGES])
def test_each_change_advice_reads_moves_the_counter_once_and_the_next_advice_reads_it(
    session, kept, reads, change
):
    add_providers(session, 0, 2)
    before = advise(session)
    counted_before = version(session)
    change(session)
    session.commit()
    moved = version(session) - counted_before
    assert moved == 1 if session.bind.dialect.name == "postgresql" else moved >= 1
    reads.clear()
    after = advise(session)
    assert reads == [{_first(session, Provider).id}]  # only the changed provider is read again
    assert after.ranked.table is not before.ranked.table
    fresh = _fresh_advice(session)
    assert after.to_dict() == fresh.to_dict()
    if change in (_offer_price, _offer_removed, _datacenter_city):  # these change what the advice says
        assert after.to_dict() != before.to_dict()


def test_a_running_run_s_progress_does_not_move_the_counter(session, kept):
    add_providers(session, 0, 1)
    finished = _first(session, BenchRun)
    running = BenchRun(
        provider_id=finished.provider_id, offer_id=finished.offer_id, suite="quick", state="running"
    )
    session.add(running)
    session.commit()
    counted_before = version(session)
    running.host = "192.0.2.99"
    running.started_at = finished.created_at
    session.commit()
    assert version(session) == counted_before


def test_postgresql_counts_a_transaction_once_and_sqlite_each_row(session, kept):
    add_providers(session, 0, 2)
    counted_before = version(session)
    for offer in session.exec(select(Offer)).all():
        offer.price_month_cny = 5
    session.commit()
    assert version(session) - counted_before == (1 if session.bind.dialect.name == "postgresql" else 4)


def test_a_transaction_that_wrote_reads_afresh_and_keeps_nothing(session, kept):
    add_providers(session, 0, 2)
    kept_table = advise(session).ranked.table
    offer = _first(session, Offer)
    offer.price_month_cny = 7
    session.flush()  # written, not committed
    mine = cases.advise_answers(session, answers=small_model_answers(0.01), today=TODAY)
    assert mine.ranked.table is not kept_table
    assert {f.price_month_cny for f in mine.ranked.table.offers if f.id == offer.id} == {7}
    session.rollback()
    assert advise(session).ranked.table is kept_table


def test_without_the_counter_row_nothing_is_kept(session, kept):
    add_providers(session, 0, 1)
    session.execute(sa.delete(RegistryVersion.__table__))
    session.commit()
    assert advise(session).ranked.table is not advise(session).ranked.table


def _fresh_advice(session: Session):
    """Advice on offers read afresh, the verdicts read as the service reads them."""
    advice = engine.advise(
        small_model_answers(0.01), registry_facts.offer_facts(session, today=TODAY), today=TODAY
    )
    advice.read_verdicts = partial(verdicts_of, session)
    return advice


def test_a_deleted_a_new_and_a_moved_offer_s_providers_are_read_again(session, kept, reads):
    add_providers(session, 0, 5)
    advise(session)
    providers = session.exec(select(Provider).order_by(Provider.id)).all()
    session.delete(providers[1])
    moved = session.exec(select(Offer).where(Offer.provider_id == providers[2].id)).first()
    moved.provider_id, moved.datacenter_id = providers[3].id, None
    session.commit()
    add_providers(session, 5, 1)
    newcomer = session.exec(select(Provider).order_by(Provider.id.desc())).first()
    reads.clear()
    after = advise(session)
    assert reads == [{providers[1].id, providers[2].id, providers[3].id, newcomer.id}]
    assert after.to_dict() == _fresh_advice(session).to_dict()
    assert {offer.provider.id for offer in after.ranked.table.offers} == (
        {p.id for p in providers} - {providers[1].id}
    ) | {newcomer.id}


def test_a_refresh_sends_as_many_statements_for_few_providers_as_for_many(session, kept):
    sent = []
    for first, count in ((0, 2), (2, 8)):
        add_providers(session, first, count)
        advise(session)
        _first(session, Offer).price_month_cny = 100 + first
        session.commit()
        with counted(session) as statements:
            advise(session)
        sent.append(len(statements))
    assert sent[0] == sent[1] == 9  # counter, changed providers, the seven statements of a read


def test_many_changed_providers_are_read_in_full(session, kept, reads, monkeypatch):
    monkeypatch.setattr(offer_snapshot, "REREAD_AFTER", 1)
    add_providers(session, 0, 8)
    advise(session)
    for offer in session.exec(select(Offer)).all()[:4]:  # two providers of eight: more than an eighth
        offer.price_month_cny = 3
    session.commit()
    reads.clear()
    after = advise(session)
    assert reads == [None]
    assert after.to_dict() == _fresh_advice(session).to_dict()
