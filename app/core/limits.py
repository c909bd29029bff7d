"""Input limits in one place: record ids, nested list sizes and JSON nesting depth."""

from __future__ import annotations

from typing import Any

from flask_babel import gettext as _

# Every id and version is an INTEGER column: larger numbers cannot exist, and SQLite refuses to bind them.
MAX_ID = 2**31 - 1

# Most nested records one provider may carry, per collection (API bodies, forms and imports alike).
COLLECTION_LIMITS = {
    "licences": 50,
    "filings": 200,
    "certifications": 100,
    "datacenters": 200,
    "offers": 1000,
}
# Most items in a list-valued field of one record (a licence's coverage, ...).
LIST_FIELD_LIMIT = 100

# Deepest JSON nesting accepted: a provider export is 5 levels deep ({providers: [{offers: [{...}]}]}).
MAX_JSON_DEPTH = 16


def too_many(value: Any, limit: int) -> str | None:
    """The refusal (current language) when `value` is a list longer than `limit`, else None."""
    if isinstance(value, (list, tuple)) and len(value) > limit:
        return _("最多 %(most)s 项，收到 %(got)s 项", most=limit, got=len(value))
    return None


def _children(value: Any) -> list[tuple[int | str, Any]]:
    if isinstance(value, dict):
        return list(value.items())
    if isinstance(value, list):
        return list(enumerate(value))
    return []


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> tuple[int | str, ...] | None:
    """Location of the first list/object nested deeper than `limit` (iteratively, no recursion)."""
    stack: list[tuple[tuple[int | str, ...], Any]] = [((), value)]
    while stack:
        loc, item = stack.pop()
        if not isinstance(item, (dict, list)):
            continue
        if len(loc) >= limit:
            return loc
        stack.extend(((*loc, key), child) for key, child in _children(item))
    return None


def depth_message(limit: int = MAX_JSON_DEPTH) -> str:
    """The refusal (current language) for JSON nested deeper than `limit`."""
    return _("JSON 嵌套过深，最多 %(most)s 层", most=limit)


def parse_id(text: Any, limit: int = MAX_ID) -> int | None:
    """`text` as a number from 1 to `limit` when it is plain ASCII digits, else None; never raises.

    str.isdigit() alone admits "²" (int() refuses it) and 4,301 digits (int() refuses those too).
    """
    if not isinstance(text, str) or not (text.isascii() and text.isdigit()) or len(text) > len(str(limit)):
        return None
    value = int(text)
    return value if 1 <= value <= limit else None
