"""Reusable field cleaners for the Create/Update models (shared by JSON and form input)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_LIST_SPLIT = re.compile(r"[,，、;；\s]+")


def blank_to_none(value: Any) -> Any:
    """Turn empty or whitespace-only strings into None so optional fields stay unset."""
    if isinstance(value, str):
        value = unicodedata.normalize("NFKC", value).strip()
        return value or None
    return value


def split_list(value: Any) -> Any:
    """Accept a list or a comma/、/space separated string; return a list of trimmed strings."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in _LIST_SPLIT.split(unicodedata.normalize("NFKC", value)) if part]
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
