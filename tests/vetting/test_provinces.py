"""Tests for the province table and its lookups."""

from __future__ import annotations

import dataclasses

import pytest

from app.core.provinces import (
    ABBREVIATIONS,
    PROVINCES,
    Province,
    by_abbreviation,
    by_code,
    by_division_code,
    by_name,
    lookup,
)


def test_table_has_the_31_mainland_provinces_with_unique_codes_and_abbreviations() -> None:
    assert len(PROVINCES) == 31
    assert len({p.code for p in PROVINCES}) == 31
    assert len({p.name for p in PROVINCES}) == 31
    assert len(ABBREVIATIONS) == len(set(ABBREVIATIONS)) == 36
    assert all(len(p.code) == 2 and p.code.isdigit() for p in PROVINCES)


def test_province_is_a_frozen_dataclass() -> None:
    beijing = by_code("11")
    assert beijing == Province("11", "北京", ("京",))
    with pytest.raises(dataclasses.FrozenInstanceError):
        beijing.name = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("abbreviation", "code"),
    [
        ("京", "11"),
        ("沪", "31"),
        ("粤", "44"),
        ("川", "51"),
        ("蜀", "51"),
        ("贵", "52"),
        ("黔", "52"),
        ("云", "53"),
        ("滇", "53"),
        ("甘", "62"),
        ("陇", "62"),
        ("陕", "61"),
        ("秦", "61"),
        ("晋", "14"),
        ("蒙", "15"),
        (" 新 ", "65"),
    ],
)
def test_by_abbreviation(abbreviation: str, code: str) -> None:
    province = by_abbreviation(abbreviation)
    assert province is not None
    assert province.code == code


@pytest.mark.parametrize("unknown", ["", "港", "澳", "台", "京京", "X"])
def test_unknown_abbreviations(unknown: str) -> None:
    assert by_abbreviation(unknown) is None


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("四川", "51"),
        ("四川省", "51"),
        ("北京", "11"),
        ("北京市", "11"),
        ("重庆市", "50"),
        ("广西", "45"),
        ("广西壮族自治区", "45"),
        ("内蒙古自治区", "15"),
        ("西藏自治区", "54"),
        ("宁夏回族自治区", "64"),
        ("新疆维吾尔自治区", "65"),
        ("黑龙江省", "23"),
        (" 广东省 ", "44"),
        ("广西自治区", "45"),
        ("吉林省", "22"),
    ],
)
def test_by_name(name: str, code: str) -> None:
    province = by_name(name)
    assert province is not None
    assert province.code == code


@pytest.mark.parametrize("unknown", ["", "香港", "四川市", "吉林市", "四川自治区", "广东自治区x", "粤"])
def test_unknown_names(unknown: str) -> None:
    assert by_name(unknown) is None


def test_full_names() -> None:
    assert [by_code(c).full_name for c in ("11", "45", "51", "65")] == [  # type: ignore[union-attr]
        "北京市",
        "广西壮族自治区",
        "四川省",
        "新疆维吾尔自治区",
    ]


def test_by_code_accepts_str_and_int() -> None:
    assert by_code(51) == by_code("51") == by_abbreviation("川")
    assert by_code(1) is None
    assert by_code("99") is None
    assert by_code("5") is None


def test_by_division_code() -> None:
    assert by_division_code("110108") == by_code("11")
    assert by_division_code("440300").name == "广东"  # type: ignore[union-attr]
    assert by_division_code("990000") is None
    assert by_division_code("1101") is None
    assert by_division_code("ab0108") is None


def test_primary_abbreviation_comes_first() -> None:
    assert by_abbreviation("蜀").abbreviation == "川"  # type: ignore[union-attr]
    assert by_abbreviation("黔").abbreviation == "贵"  # type: ignore[union-attr]


@pytest.mark.parametrize(("text", "code"), [("51", "51"), ("蜀", "51"), ("四川省", "51"), ("广西", "45")])
def test_lookup_tries_code_abbreviation_and_name(text: str, code: str) -> None:
    assert lookup(text).code == code  # type: ignore[union-attr]


def test_lookup_unknown() -> None:
    assert lookup("火星") is None
