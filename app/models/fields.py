"""Reusable field cleaners for the Create/Update models (shared by JSON and form input)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_LIST_SPLIT = re.compile(r"[,，、;；\s]+")
_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")
# NUL and other C0 controls (except tab and newlines) can't be stored by PostgreSQL or mean nothing here.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")


def blank_to_none(value: Any) -> Any:
    """Trim text, drop control characters, turn blanks into None and full-width digits into ASCII.

    Other text keeps its characters as typed (e.g. the full-width brackets of Chinese company names).
    """
    if isinstance(value, str):
        value = _CONTROL.sub("", value).strip()
        folded = unicodedata.normalize("NFKC", value)
        if _NUMBER.fullmatch(folded):
            return folded
        return value or None
    return value


def split_list(value: Any) -> Any:
    """Accept a list or a comma/、/space separated string; return a list of trimmed strings."""
    if value is None:
        return []
    if isinstance(value, str):
        text = _CONTROL.sub("", unicodedata.normalize("NFKC", value))
        return [part for part in _LIST_SPLIT.split(text) if part]
    if not isinstance(value, (list, tuple)):
        # ValueError (not TypeError) so pydantic reports it against the field instead of crashing.
        raise ValueError("须为列表或以逗号分隔的文本 (must be a list or comma-separated text)")
    return value


def resolve_province_name(value: Any) -> Any:
    """Map a province name, abbreviation (aliases too) or code to its canonical short name."""
    from app.vetting.provinces import lookup as resolve_province

    value = blank_to_none(value)
    if value is None or not isinstance(value, str):
        return value
    province = resolve_province(value)
    if province is None:
        raise ValueError(
            "未知省份：请填写省级行政区名称、简称或两位代码，如“广东”“粤”或“44” (unknown province)"
        )
    return province.name
