"""The city table: every province's capital, the datacenter hubs, lookups and distances."""

from __future__ import annotations

import pytest

from app.advice import cities
from app.core.provinces import PROVINCES

IDC_HUBS = ["乌兰察布", "庆阳", "中卫", "贵安", "张家口", "廊坊", "芜湖", "韶关", "和林格尔"]


def test_every_province_has_its_capital_in_the_table():
    for province in PROVINCES:
        capital = cities.capital_of(province.name)
        assert capital is not None, province.name
        assert capital.province == province.name


@pytest.mark.parametrize("name", IDC_HUBS)
def test_datacenter_hubs_are_in_the_table(name):
    city = cities.lookup(name)
    assert city is not None and city.idc


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("上海市", "上海"),
        (" 贵安新区 ", "贵安"),
        ("和林格尔新区", "和林格尔"),
        ("集宁", "乌兰察布"),
        ("北京", "北京"),
    ],
)
def test_lookup_accepts_suffixes_and_aliases(text, expected):
    assert cities.lookup(text).name == expected


def test_unknown_names_are_none():
    assert cities.lookup("火星") is None
    assert cities.lookup("") is None
    assert cities.lookup(None) is None


@pytest.mark.parametrize(
    ("a", "b", "km"),
    [("北京", "上海", 1068), ("北京", "广州", 1888), ("上海", "贵阳", 1530), ("北京", "北京", 0)],
)
def test_great_circle_distances(a, b, km):
    distance = cities.distance_km(cities.lookup(a), cities.lookup(b))
    assert distance == pytest.approx(km, rel=0.02, abs=1)
