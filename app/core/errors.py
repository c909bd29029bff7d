"""Service errors carrying field-level messages in one shape for pages, API and CLI."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from flask import has_request_context
from flask_babel import lazy_gettext as _l
from pydantic import ValidationError

from app.core.i18n import current_language

# Our wording for pydantic's error types (msgids in Chinese, English in the catalog); %(name)s comes from ctx.
_WORDING = {
    "missing": _l("必填项"),
    "string_too_short": _l("至少 %(min_length)s 个字符"),
    "string_too_long": _l("最多 %(max_length)s 个字符"),
    "too_short": _l("至少 %(min_length)s 项"),
    "too_long": _l("最多 %(max_length)s 项"),
    "greater_than_equal": _l("不能小于 %(ge)s"),
    "less_than_equal": _l("不能大于 %(le)s"),
    "greater_than": _l("须大于 %(gt)s"),
    "less_than": _l("须小于 %(lt)s"),
    "multiple_of": _l("须为 %(multiple_of)s 的倍数"),
    "int_parsing": _l("须为整数"),
    "int_from_float": _l("须为整数"),
    "int_type": _l("须为整数"),
    "float_parsing": _l("须为数字"),
    "float_type": _l("须为数字"),
    "finite_number": _l("须为有限的数字"),
    "decimal_parsing": _l("须为数字"),
    "decimal_type": _l("须为数字"),
    "date_from_datetime_parsing": _l("须为日期，格式 YYYY-MM-DD"),
    "date_parsing": _l("须为日期，格式 YYYY-MM-DD"),
    "date_type": _l("须为日期，格式 YYYY-MM-DD"),
    "datetime_parsing": _l("须为日期时间，格式 YYYY-MM-DDTHH:MM:SS"),
    "datetime_from_date_parsing": _l("须为日期时间，格式 YYYY-MM-DDTHH:MM:SS"),
    "datetime_type": _l("须为日期时间，格式 YYYY-MM-DDTHH:MM:SS"),
    "bool_parsing": _l("须为是/否"),
    "bool_type": _l("须为是/否"),
    "enum": _l("取值无效，可选：%(expected)s"),
    "literal_error": _l("取值无效，可选：%(expected)s"),
    "extra_forbidden": _l("不认识的字段"),
    "list_type": _l("须为列表"),
    "string_type": _l("须为文本"),
    "model_type": _l("须为对象"),
    "model_attributes_type": _l("须为对象"),
    "dict_type": _l("须为对象"),
    "string_pattern_mismatch": _l("格式不正确"),
    "url_parsing": _l("须为网址，如 https://example.com"),
    "url_scheme": _l("须为网址，如 https://example.com"),
    "url_type": _l("须为网址，如 https://example.com"),
    "json_invalid": _l("JSON 格式错误"),
    "uuid_parsing": _l("须为 UUID"),
    "ip_v4_address": _l("须为 IPv4 地址"),
    "ip_any_address": _l("须为 IP 地址"),
}
_CHOICE = ("enum", "literal_error")
_AT_LEAST_ONE_CHARACTER = _l("至少 1 个字符")
_REQUIRED = _l("必填项")
_INVALID = _l("取值无效")


@dataclass(frozen=True)
class FieldError:
    """One problem with one input field."""

    field: str
    message: str
    accepted: tuple[str, ...] = ()  # a choice's accepted values as sent (the message shows their labels)

    def as_dict(self) -> dict[str, Any]:
        """JSON form used by the API error body."""
        shape: dict[str, Any] = {"field": self.field, "message": self.message}
        return {**shape, "accepted": list(self.accepted)} if self.accepted else shape


class ServiceError(Exception):
    """Base of errors a user can act on; `status` is the HTTP status that fits."""

    status = 400

    def __init__(self, errors: list[FieldError] | str, field: str = "") -> None:
        if isinstance(errors, str):
            errors = [FieldError(field, errors)]
        self.errors = errors
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in errors))


class InvalidInput(ServiceError):
    """Input failed validation."""

    status = 422


class NotFound(ServiceError):
    """The record does not exist."""

    status = 404


class Conflict(ServiceError):
    """The change clashes with stored data (duplicate or stale version)."""

    status = 409


def field_path(loc: tuple[int | str, ...], prefix: str = "") -> str:
    """Render a pydantic location as licences[0].number_raw."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def _shown(value: object) -> str:
    """A limit from ctx as a person writes it: 1 rather than 1.0, enum members without quotes."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# Labels a choice's values (values, kind or None) -> their labels in the current language, or None when no
# kind lists them. app.core.vocabulary, a layer above, installs itself here when it is imported (pages, API).
_LABELLER: list[Callable[[list[str], str | None], list[str] | None]] = []


def use_labels(labeller: Callable[[list[str], str | None], list[str] | None]) -> None:
    """Word choice errors with `labeller` (app.core.vocabulary's labels)."""
    _LABELLER[:] = [labeller]


def accepted(values: Iterable[Any], kind: str | None = None) -> str:
    """The values a choice accepts as the reader reads them. On a page or in an API answer each one's label in
    the current language (from `kind`, else from the vocabulary kind that lists them all); values no kind
    lists (sort keys, formats), and all of them outside a request (the CLI reads typed values), as they are
    typed. Joined in the language's way, never with an English "or" on a Chinese page."""
    values = [str(getattr(value, "value", value)) for value in values]
    labelled = _LABELLER[0](values, kind) if _LABELLER and has_request_context() else None
    return ("、" if current_language() == "zh" else ", ").join(labelled or values)


def not_one_of(field: str, values: Iterable[Any], kind: str | None = None) -> FieldError:
    """The error for a value outside a fixed set, listing what is accepted (see `accepted`); the API's body
    also lists the values as they are sent."""
    typed = tuple(str(getattr(value, "value", value)) for value in values)
    return FieldError(field, str(_WORDING["enum"]) % {"expected": accepted(typed, kind)}, typed)


def _expected(text: str) -> list[str]:
    """The values of pydantic's "'a', 'b' or 'c'"."""
    return re.findall(r"'([^']*)'", text)


def _message(error: dict) -> str:
    """Our own words for one pydantic error, in the current language; never pydantic's English msg."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "value_error" and "error" in ctx:
        return str(ctx["error"])  # raised by our validators, already in the user's language
    if kind.endswith("_type") and error.get("input") is None:
        return str(_REQUIRED)
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return str(_AT_LEAST_ONE_CHARACTER)
    wording = _WORDING.get(kind)
    if wording is None:
        return str(_INVALID)
    values = {name: _shown(value) for name, value in ctx.items()}
    if "expected" in values:
        values["expected"] = accepted(_expected(values["expected"])) or values["expected"]
    try:
        return str(wording) % values
    except (KeyError, ValueError, TypeError):
        return str(_INVALID)


def from_validation_error(exc: ValidationError, prefix: str = "") -> InvalidInput:
    """Convert a pydantic ValidationError into an InvalidInput naming each field."""
    errors = []
    for error in exc.errors():
        loc = tuple(part for part in error["loc"] if not str(part).startswith("function-"))
        choices = (
            _expected(str((error.get("ctx") or {}).get("expected", ""))) if error["type"] in _CHOICE else []
        )
        errors.append(FieldError(field_path(loc, prefix), _message(error), tuple(choices)))
    return InvalidInput(errors)
