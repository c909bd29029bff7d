"""Two sessions that read the same version: the second writer gets 409, decided by the database."""

from __future__ import annotations

import pytest
from sqlmodel import Session

from app.cases import cases as case_svc
from app.core.errors import Conflict, InvalidInput
from app.core.versions import expected_version
from app.registry import providers as svc
from tests.api.conftest import provider_payload


@pytest.fixture
def two_sessions(app):
    """Two independent sessions on the same database, as two requests in two workers would have."""
    engine = app.extensions["gpuvet.engine"]
    with Session(engine, expire_on_commit=False) as first, Session(engine, expire_on_commit=False) as second:
        yield first, second


def test_provider_change_after_a_read_of_the_same_version_is_refused(session, two_sessions):
    provider_id = svc.create_provider(session, data=provider_payload()).id
    first, second = two_sessions
    svc.get_provider(first, provider_id=provider_id)  # both have read version 1 ...
    svc.get_provider(second, provider_id=provider_id)
    svc.update_provider(first, provider_id=provider_id, patch={"version": 1, "notes": "first"})
    with pytest.raises(Conflict) as refused:  # ... the Python check in the second still sees version 1
        svc.update_provider(second, provider_id=provider_id, patch={"version": 1, "notes": "second"})
    assert "now version 2" in refused.value.errors[0].message
    session.expire_all()
    assert svc.get_provider(session, provider_id=provider_id).notes == "first"


def test_nested_delete_after_a_read_of_the_same_version_is_refused(session, two_sessions):
    provider = svc.create_provider(session, data=provider_payload())
    offer_ids = [offer.id for offer in provider.offers]
    offer_id = offer_ids[0]
    first, second = two_sessions
    svc.get_provider(first, provider_id=provider.id)
    svc.get_provider(second, provider_id=provider.id)
    svc.update_provider(first, provider_id=provider.id, patch={"version": 1, "notes": "first"})
    with pytest.raises(Conflict):
        svc.delete_child(
            second, provider_id=provider.id, collection="offers", child_id=offer_id, expected_version=1
        )
    session.expire_all()
    assert [offer.id for offer in svc.get_provider(session, provider_id=provider.id).offers] == offer_ids


def test_case_step_after_a_read_of_the_same_version_is_refused(session, two_sessions):
    owner = case_svc.Actor(id=None, name="tester")
    case = case_svc.start_case(session, workload={"kind": "interactive_inference"}, owner=owner)
    first, second = two_sessions
    case_svc.get_case(first, case_id=case.id)
    case_svc.get_case(second, case_id=case.id)
    data = {"kind": "interactive_inference", "title": "first title"}
    case_svc.save_step(first, case_id=case.id, step="workload", data=data, version=1)
    with pytest.raises(Conflict):
        case_svc.save_step(
            second, case_id=case.id, step="workload", data={**data, "title": "second title"}, version=1
        )
    session.expire_all()
    assert case_svc.get_case(session, case_id=case.id).title == "first title"


@pytest.mark.parametrize("value", [True, False, "1.0", "-1", "9" * 4301, 1.5, [1], "2147483648", "²"])
def test_versions_that_are_not_positive_integers_are_refused(value):
    with pytest.raises(InvalidInput) as refused:
        expected_version(value)
    assert refused.value.errors[0].field == "version"


def test_version_given_as_text_is_accepted():
    assert expected_version(" 3 ") == 3
