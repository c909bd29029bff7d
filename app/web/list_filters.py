"""What a list page takes from its URL: a lenient parse, errors by parameter, the filters its links keep."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, TypeVar

from app.core.errors import FieldError, InvalidInput

Query = TypeVar("Query")


def parse_leniently(
    parse: Callable[[dict[str, Any]], Query], params: dict[str, Any]
) -> tuple[Query, list[FieldError]]:
    """parse(params); when some are invalid, the query without them (or without any) and their errors."""
    try:
        return parse(params), []
    except InvalidInput as exc:
        bad = {error.field for error in exc.errors}
        kept = {key: value for key, value in params.items() if key not in bad}
        try:
            return parse(kept), exc.errors
        except InvalidInput:
            return parse({}), exc.errors


def errors_by_field(errors: Iterable[FieldError]) -> dict[str, list[str]]:
    """Each parameter's messages, in the order they came."""
    by_field: dict[str, list[str]] = {}
    for error in errors:
        by_field.setdefault(error.field, []).append(error.message)
    return by_field


def kept_filters(args: Mapping[str, str], keys: Collection[str], bad: Collection[str]) -> dict[str, str]:
    """The URL's filters among `keys` that are set and valid, to carry into the page's links."""
    return {key: value for key, value in args.items() if key in keys and value and key not in bad}
