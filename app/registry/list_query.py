"""Reading a list's query parameters (providers, findings): choices, province, pages; each bad one named."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from flask_babel import gettext as _
from pydantic import BaseModel, ValidationError

from app.core.errors import FieldError, InvalidInput, from_validation_error, not_one_of
from app.models.fields import blank_to_none, resolve_province_name

MAX_PAGE = 1_000_000

Query = TypeVar("Query", bound=BaseModel)


def parse_list_query(
    model: type[Query],
    params: Mapping[str, Any],
    allowed: Mapping[str, Sequence[str]],
    more_errors: Callable[[Query], list[FieldError]] = lambda query: [],
) -> Query:
    """The `model` the parameters describe: blanks dropped, each of `allowed` among its values, the province
    resolved, the page and page size in range (and `more_errors`); InvalidInput names every bad one."""
    cleaned = {key: blank_to_none(value) for key, value in params.items() if key in model.model_fields}
    cleaned = {key: value for key, value in cleaned.items() if value is not None}
    errors: list[FieldError] = []
    for key, values in allowed.items():
        if key in cleaned and cleaned[key] not in values:
            errors.append(not_one_of(key, values))
    if "province" in cleaned:
        try:
            cleaned["province"] = resolve_province_name(cleaned["province"])
        except ValueError as exc:
            errors.append(FieldError("province", str(exc)))
    query = None
    try:
        query = model.model_validate(cleaned)
    except ValidationError as exc:
        errors.extend(from_validation_error(exc).errors)
    if query is not None:
        if not 1 <= query.page <= MAX_PAGE:  # the upper bound keeps OFFSET inside a database integer
            errors.append(FieldError("page", _("页码须为 1-%(most)s", most=MAX_PAGE)))
        if not 1 <= query.per_page <= 100:
            errors.append(FieldError("per_page", _("每页 1-100 条")))
        errors.extend(more_errors(query))
    if errors:
        raise InvalidInput(errors)
    assert query is not None
    return query
