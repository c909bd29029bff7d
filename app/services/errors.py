"""Service errors carrying field-level messages in one shape for pages, API and CLI."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError

# Chinese wording for pydantic's error types; the English original follows in brackets.
_ZH = {
    "missing": "必填项",
    "string_too_short": "内容过短",
    "string_too_long": "内容过长",
    "greater_than_equal": "数值过小",
    "less_than_equal": "数值过大",
    "greater_than": "数值过小",
    "int_parsing": "须为整数",
    "int_from_float": "须为整数",
    "float_parsing": "须为数字",
    "date_from_datetime_parsing": "须为日期，格式 YYYY-MM-DD",
    "date_parsing": "须为日期，格式 YYYY-MM-DD",
    "bool_parsing": "须为是/否",
    "enum": "取值无效",
    "extra_forbidden": "不认识的字段",
    "list_type": "须为列表",
    "string_type": "须为文本",
    "model_type": "须为对象",
    "dict_type": "须为对象",
}


@dataclass(frozen=True)
class FieldError:
    """One problem with one input field."""

    field: str
    message: str

    def as_dict(self) -> dict[str, str]:
        """JSON form used by the API error body."""
        return {"field": self.field, "message": self.message}


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


def _message(error: dict) -> str:
    original = error["msg"].removeprefix("Value error, ")
    if error["type"].endswith("_type") and error.get("input") is None:
        return "必填项 (required)"
    if error["type"] == "value_error":
        return original
    zh = _ZH.get(error["type"])
    return f"{zh} ({original})" if zh else original


def from_validation_error(exc: ValidationError, prefix: str = "") -> InvalidInput:
    """Convert a pydantic ValidationError into an InvalidInput naming each field."""
    errors = []
    for error in exc.errors():
        loc = tuple(part for part in error["loc"] if not str(part).startswith("function-"))
        errors.append(FieldError(field_path(loc, prefix), _message(error)))
    return InvalidInput(errors)
