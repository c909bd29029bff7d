"""Advising sends a fixed number of SQL statements, however many providers, offers, checks and runs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date

from sqlalchemy import event
from sqlmodel import Session, select

from app.cases import cases, registry_facts
from app.models.checks import CheckRun, StoredFinding
from app.registry.providers import create_provider
from tests.cases.test_measured_offers import OFFER, TODAY, at, quick_steps, small_model_answers, store_run


@contextmanager
def counted(session: Session) -> Iterator[list[str]]:
    """The SQL statements sent through the session's engine meanwhile (whitespace collapsed)."""
    statements: list[str] = []
    engine = session.get_bind()

    def listen(_conn, _cursor, statement, *_args) -> None:
        statements.append(" ".join(statement.split()))

    event.listen(engine, "before_cursor_execute", listen)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", listen)


def add_providers(session: Session, first: int, count: int) -> None:
    """Providers with two offers each, a check run with a warning, and a measured run on the first offer."""
    for index in range(first, first + count):
        provider = create_provider(
            session,
            data={
                "legal_name": f"示例计数算力{index}有限公司",
                "datacenters": [{"name": "示例测量机房", "province": "北京", "city": "北京"}],
                "offers": [{**OFFER, "name": f"套餐{index}-1"}, {**OFFER, "name": f"套餐{index}-2"}],
            },
        )
        for _ in range(2):  # the older run's findings must not be read
            check = CheckRun(
                provider_id=provider.id,
                verdict="needs_review",
                checked_on=date(2026, 5, 1),
                rules_version="t",
            )
            session.add(check)
            session.flush()
            session.add(
                StoredFinding(
                    check_run_id=check.id,
                    provider_id=provider.id,
                    rule_id="licence.expiring",
                    severity="warning",
                    message_zh=f"检查 {check.id}",
                    message_en=f"check {check.id}",
                )
            )
        session.commit()
        store_run(session, provider.offers[0], quick_steps(800), at(3))


def statements_to_advise(session: Session) -> int:
    session.expire_all()
    with counted(session) as statements:
        advice = cases.advise_answers(session, answers=small_model_answers(0.01), today=TODAY)
    assert advice.ranked
    return len(statements)


def test_statements_do_not_grow_with_providers_offers_checks_or_runs(session):
    add_providers(session, 0, 3)
    few = statements_to_advise(session)
    add_providers(session, 3, 27)
    assert statements_to_advise(session) == few <= 10
    facts = registry_facts.offer_facts(session, today=TODAY)
    assert len(facts) == 60 and sum(1 for f in facts if f.measurements) == 30
    # only the latest check run's finding, and its check, reach each provider
    for fact in facts:
        (finding,) = fact.provider.findings
        assert fact.provider.check is not None and finding.message_en.startswith("check ")
    latest = {
        provider_id: max(c.id for c in session.exec(select(CheckRun)).all() if c.provider_id == provider_id)
        for provider_id in {f.provider.id for f in facts}
    }
    assert all(f.provider.findings[0].message_en == f"check {latest[f.provider.id]}" for f in facts)
