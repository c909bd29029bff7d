"""The proposal form offers a case's eligible candidates even before any quote came (the demo registry)."""

from __future__ import annotations

import re

from sqlmodel import select

from app.models import Offer, Provider
from tests.cases.test_quote_requests import demo_case  # noqa: F401 - fixture


def test_without_quotes_the_form_names_the_eligible_candidates(login, session, demo_case):  # noqa: F811
    response = login("analyst").get(f"/cases/{demo_case}/decisions/new")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    offered = [int(value) for value in re.findall(r'name="offer_ids" value="(\d+)"', html)]
    assert offered, "the leading eligible offers are offered before any quote came"
    rows = session.exec(
        select(Offer.id, Provider.legal_name).join(Provider, Provider.id == Offer.provider_id)
    ).all()
    names = dict(rows)
    for offer_id in offered:  # each candidate is named by its provider (the registry's name)
        assert names[offer_id] in html
