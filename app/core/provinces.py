"""Province-level divisions of mainland China (GB/T 2260) with their abbreviations and aliases."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True)
class Province:
    """One province-level division: two-digit code, short name and accepted abbreviations."""

    code: str
    name: str
    abbreviations: tuple[str, ...]

    @property
    def abbreviation(self) -> str:
        """Return the primary abbreviation (the first one listed)."""
        return self.abbreviations[0]

    @property
    def full_name(self) -> str:
        """Return the official full name, e.g. "广西壮族自治区"."""
        return self.name + _FULL_NAME_SUFFIX.get(self.code, "省")


PROVINCES: list[Province] = [
    Province("11", "北京", ("京",)),
    Province("12", "天津", ("津",)),
    Province("13", "河北", ("冀",)),
    Province("14", "山西", ("晋",)),
    Province("15", "内蒙古", ("蒙",)),
    Province("21", "辽宁", ("辽",)),
    Province("22", "吉林", ("吉",)),
    Province("23", "黑龙江", ("黑",)),
    Province("31", "上海", ("沪",)),
    Province("32", "江苏", ("苏",)),
    Province("33", "浙江", ("浙",)),
    Province("34", "安徽", ("皖",)),
    Province("35", "福建", ("闽",)),
    Province("36", "江西", ("赣",)),
    Province("37", "山东", ("鲁",)),
    Province("41", "河南", ("豫",)),
    Province("42", "湖北", ("鄂",)),
    Province("43", "湖南", ("湘",)),
    Province("44", "广东", ("粤",)),
    Province("45", "广西", ("桂",)),
    Province("46", "海南", ("琼",)),
    Province("50", "重庆", ("渝",)),
    Province("51", "四川", ("川", "蜀")),
    Province("52", "贵州", ("贵", "黔")),
    Province("53", "云南", ("云", "滇")),
    Province("54", "西藏", ("藏",)),
    Province("61", "陕西", ("陕", "秦")),
    Province("62", "甘肃", ("甘", "陇")),
    Province("63", "青海", ("青",)),
    Province("64", "宁夏", ("宁",)),
    Province("65", "新疆", ("新",)),
]

_FULL_NAME_SUFFIX: dict[str, str] = {
    "11": "市",
    "12": "市",
    "31": "市",
    "50": "市",
    "15": "自治区",
    "45": "壮族自治区",
    "54": "自治区",
    "64": "回族自治区",
    "65": "维吾尔自治区",
}

# Longest first, so "壮族自治区" is tried before "自治区"; a suffix must fit the province's full name.
_NAME_SUFFIXES: tuple[str, ...] = ("维吾尔自治区", "壮族自治区", "回族自治区", "自治区", "省", "市")

_BY_CODE: dict[str, Province] = {p.code: p for p in PROVINCES}
_BY_ABBREVIATION: dict[str, Province] = {a: p for p in PROVINCES for a in p.abbreviations}
_BY_NAME: dict[str, Province] = {n: p for p in PROVINCES for n in (p.name, p.full_name)}

#: Every accepted abbreviation character, aliases included (handy for regex character classes).
ABBREVIATIONS: str = "".join(_BY_ABBREVIATION)


def _clean(text: str) -> str:
    """Return text NFKC-normalised with all whitespace removed."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def by_abbreviation(abbreviation: str) -> Province | None:
    """Return the province for an abbreviation or alias such as "京", "川" or "蜀"."""
    return _BY_ABBREVIATION.get(_clean(abbreviation))


def by_code(code: str | int) -> Province | None:
    """Return the province for a two-digit GB/T 2260 code such as "51" or 51."""
    key = str(code).strip() if isinstance(code, str) else f"{code:02d}"
    return _BY_CODE.get(key)


def by_division_code(division_code: str) -> Province | None:
    """Return the province of a six-digit administrative division code such as "110108"."""
    digits = _clean(division_code)
    if len(digits) != 6 or not digits.isascii() or not digits.isdigit():
        return None
    return _BY_CODE.get(digits[:2])


def by_name(name: str) -> Province | None:
    """Return the province for a short or full name ("四川", "四川省", "广西自治区"); "吉林市" is not one."""
    text = _clean(name)
    if text in _BY_NAME:
        return _BY_NAME[text]
    for suffix in _NAME_SUFFIXES:
        province = _BY_NAME.get(text.removesuffix(suffix)) if text.endswith(suffix) else None
        if province is not None and province.full_name.endswith(suffix):
            return province
    return None


def lookup(text: str) -> Province | None:
    """Return the province for a code, an abbreviation or a name, whichever matches."""
    cleaned = _clean(text)
    return by_code(cleaned) or by_abbreviation(cleaned) or by_name(cleaned)
