"""The offers' table of codes: equal values share a code, and combined columns group offers exactly."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.advice import offer_table
from app.advice.deciding import columns_read
from app.advice.engine import advise
from app.advice.offer_table import OfferTable, combine, factorize
from perf.advice_perf import TODAY, build_offers
from tests.advice.test_ranking_equivalence import CASES, _answers


def test_equal_values_share_a_code_numbered_in_order_of_first_appearance():
    codes, distinct = factorize(["b", None, "b", 3.5, None, "a"])
    assert codes.tolist() == [0, 1, 0, 2, 1, 3] and distinct == 4


@pytest.mark.parametrize("direct_up_to", [1 << 21, 0])  # the lookup table, and numpy's sort
def test_combined_columns_group_offers_with_equal_codes_in_every_column(monkeypatch, direct_up_to):
    monkeypatch.setattr(offer_table, "_DIRECT_UP_TO", direct_up_to)
    rng = np.random.default_rng(3)
    columns = [(rng.integers(-1, 4, 500), 4), (rng.integers(0, 7, 500), 7), (rng.integers(0, 2, 500), 2)]
    codes, first = combine(columns, 500)
    rows = list(zip(*(column.tolist() for column, _distinct in columns), strict=True))
    for a in range(0, 500, 7):
        for b in range(500):
            assert (codes[a] == codes[b]) == (rows[a] == rows[b])
    assert sorted(set(codes.tolist())) == list(range(len(first)))
    assert all(codes[row] == code and rows.index(rows[row]) == row for code, row in enumerate(first.tolist()))


def test_a_combination_of_many_large_columns_is_renumbered_before_it_overflows():
    size = 2000
    big = [(np.arange(size) % 1999, 1999)] * 8  # 1999^8 is far beyond int64
    codes, first = combine(big, size)
    assert len(first) == 1999 and codes[0] == codes[1999] and codes[0] != codes[1]


def test_bulk_prepared_columns_equal_the_ones_built_one_by_one():
    offers = build_offers(400, seed=5, measured=0.4)
    bulk = OfferTable(offers).prepare(columns_read())
    single = OfferTable(offers)
    for name in columns_read():
        assert np.array_equal(bulk.column(name)[0], single.column(name)[0]), name
        assert bulk.column(name)[1] == single.column(name)[1], name


def test_measured_columns_code_offers_without_measurements_minus_one():
    offers = build_offers(200, seed=5, measured=0.5)
    offers[0] = dataclasses.replace(offers[0], measurements={})
    table = OfferTable(offers)
    codes, _distinct = table.column("m:intranet_gbps")
    assert codes[0] == -1
    assert (codes == -1).tolist() == [not offer.measurements for offer in offers]
    first_measured = next(i for i, offer in enumerate(offers) if offer.measurements)
    same = [
        i
        for i, offer in enumerate(offers)
        if offer.measurements
        and offer.measurements["intranet_gbps"].value
        == offers[first_measured].measurements["intranet_gbps"].value
    ]
    assert {codes[i] for i in same} == {codes[first_measured]}


def test_provider_columns_give_every_offer_its_providers_code():
    offers = build_offers(300, seed=2)
    table = OfferTable(offers)
    codes, _distinct = table.column("provider.iso27001")
    by_value = {}
    for code, offer in zip(codes.tolist(), offers, strict=True):
        by_value.setdefault(offer.provider.iso27001, set()).add(code)
    assert all(len(found) == 1 for found in by_value.values()) and len(by_value) == 2
    assert [table.providers[i].id for i in table.provider_index.tolist()] == [o.provider.id for o in offers]


def _by_provider(offers):
    """Offers in the order the registry reads them: by provider, then id."""
    return sorted(offers, key=lambda offer: (offer.provider.id, offer.id))


def _same_grouping(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two columns of codes group the offers alike (equal codes in one, equal in the other)."""
    if not np.array_equal(a == -1, b == -1):
        return False
    pairs = np.unique(np.stack([a, b]), axis=1).shape[1]
    return pairs == len(np.unique(a)) == len(np.unique(b))


def _read_again(scenario: str):
    """(changed provider ids, their offers as read again) from another generation of the same registry."""
    other = build_offers(800, seed=12, measured=0.6)
    if scenario == "edited":  # the same offers of providers 3 and 40 with other values
        changed = {3, 40}
        return changed, _by_provider(offer for offer in other if offer.provider.id in changed)
    # other values for providers 3, 40 and 41; provider 41 lost an offer, 77 was deleted, 999 is new
    changed = {3, 40, 41, 77, 999}
    fresh = [offer for offer in other if offer.provider.id in changed - {77}]
    fresh.remove(next(offer for offer in fresh if offer.provider.id == 41))
    newcomer = dataclasses.replace(fresh[0].provider, id=999, name="新加入的供应商")
    fresh += [dataclasses.replace(offer, id=9000 + offer.id, provider=newcomer) for offer in fresh[:3]]
    return changed, _by_provider(fresh)


@pytest.mark.parametrize("scenario", ["edited", "added_removed_deleted_new"])
def test_replacing_changed_providers_offers_gives_the_table_and_advice_of_a_fresh_read(scenario):
    offers = _by_provider(build_offers(800, seed=11, measured=0.4))
    kept = OfferTable(offers).prepare(columns_read())
    answers = [_answers(case) for case in CASES]
    before = [advise(case, kept, today=TODAY).to_dict() for case in answers]  # fills the numbers it keeps
    changed, fresh = _read_again(scenario)

    replaced = kept.replacing(changed, fresh).prepare(columns_read())
    expected = _by_provider([offer for offer in offers if offer.provider.id not in changed] + fresh)
    afresh = OfferTable(expected).prepare(columns_read())
    assert [offer.id for offer in replaced.offers] == [offer.id for offer in expected]
    assert replaced.offers == expected
    for name in ("ids", "measured", "provider_ids"):
        assert getattr(replaced, name).tolist() == getattr(afresh, name).tolist(), name
    assert [p.id for p in replaced.providers] == [p.id for p in afresh.providers]
    assert [replaced.providers[i] for i in replaced.provider_index] == [o.provider for o in expected]
    for name in columns_read():
        assert _same_grouping(replaced.column(name)[0], afresh.column(name)[0]), name
    for case in answers:
        assert advise(case, replaced, today=TODAY).to_dict() == advise(case, afresh, today=TODAY).to_dict()
    assert [advise(case, kept, today=TODAY).to_dict() for case in answers] == before  # left as it was
    assert replaced.replaced == len(fresh) and kept.replaced == 0
