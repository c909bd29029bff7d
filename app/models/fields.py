"""Reusable field cleaners for the Create/Update models (shared by JSON and form input)."""

from __future__ import annotations

import re
import types
import unicodedata
from typing import Annotated, Any, Union, get_args, get_origin
from urllib.parse import urlsplit

from flask_babel import gettext as _
from pydantic import BeforeValidator, EmailStr, Field

from app.core.limits import MAX_ID

_LIST_SPLIT = re.compile(r"[,，、;；\s]+")
_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")
# "scheme:" not followed by a port number: javascript:, data:, mailto: ... (example.com:8080 is a host).
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(?!\d)")
_HOST = re.compile(r"^[^\s\x00-\x1f\x7f<>\"'`\\^{}|]+$")
_WEB_SCHEMES = ("http", "https")
# NUL and other C0 controls (except tab and newlines) can't be stored by PostgreSQL or mean nothing here.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
# What a single-line field never holds: C0 controls (tab, CR, LF, NUL ...), DEL, C1 controls (NEL ...) and the
# Unicode line and paragraph separators.
_NOT_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# Multi-line text keeps tab, CR and LF; other controls (C0, DEL, C1) are dropped.
_MULTI_LINE_DROPPED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def blank_to_none(value: Any, *, keep_controls: bool = False) -> Any:
    """Trim text, turn blanks into None and full-width digits into ASCII; drop control characters unless
    `keep_controls` (input models keep them for each field's type to judge: SingleLine or MultiLine).

    Other text keeps its characters as typed (e.g. the full-width brackets of Chinese company names).
    """
    if isinstance(value, str):
        value = (value if keep_controls else _CONTROL.sub("", value)).strip()
        folded = unicodedata.normalize("NFKC", value)
        if _NUMBER.fullmatch(folded):
            return folded
        return value or None
    return value


def blank_values(data: Any) -> Any:
    """Every value of an input mapping through blank_to_none, control characters kept for each field's type
    to judge (a model's before-validator); anything but a dict as it is."""
    if isinstance(data, dict):
        return {key: blank_to_none(value, keep_controls=True) for key, value in data.items()}
    return data


def single_line(value: Any) -> Any:
    """Text unchanged when it is one line; a ValueError naming the first line break or control character."""
    if isinstance(value, str) and (found := _NOT_ONE_LINE.search(value)):
        raise ValueError(
            _(
                "须为单行文本：不能含换行符、制表符或其他控制字符（第 %(position)s 个字符是 %(code)s）",
                position=found.start() + 1,
                code=f"U+{ord(found.group()):04X}",
            )
        )
    return value


def multi_line(value: Any) -> Any:
    """Text with its tabs and line breaks; other control characters dropped."""
    return _MULTI_LINE_DROPPED.sub("", value) if isinstance(value, str) else value


# Names, numbers, addresses, URLs, e-mail, cities ...: one line, refused with the reason otherwise.
SingleLine = Annotated[str, BeforeValidator(single_line)]
# Notes and descriptions: line breaks and tabs kept.
MultiLine = Annotated[str, BeforeValidator(multi_line)]


def split_list(value: Any) -> Any:
    """Accept a list or a comma/、/space separated string; return a list of trimmed strings."""
    if value is None:
        return []
    if isinstance(value, str):
        text = _CONTROL.sub("", unicodedata.normalize("NFKC", value))
        return [part for part in _LIST_SPLIT.split(text) if part]
    if not isinstance(value, (list, tuple)):
        # ValueError (not TypeError) so pydantic reports it against the field instead of crashing.
        raise ValueError(_("须为列表或以逗号分隔的文本"))
    return value


def resolve_province_name(value: Any) -> Any:
    """Map a province name, abbreviation (aliases too) or code to its canonical short name."""
    from app.core.provinces import lookup as resolve_province

    value = blank_to_none(value)
    if value is None or not isinstance(value, str):
        return value
    province = resolve_province(value)
    if province is None:
        raise ValueError(_("未知省份：请填写省级行政区名称、简称或两位代码，如“广东”“粤”或“44”"))
    return province.name


def reject_bool(value: Any) -> Any:
    """Refuse true/false where a number is expected (pydantic would read them as 1 and 0)."""
    if isinstance(value, bool):
        raise ValueError(_("须为数字，不能是 true/false"))
    return value


def _number_annotation(annotation: Any) -> bool:
    if annotation in (int, float):
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_number_annotation(arg) for arg in get_args(annotation) if arg is not type(None))
    return False


def number_fields(model: Any) -> tuple[str, ...]:
    """Names of the int/float fields of a pydantic model (those that must refuse booleans)."""
    return tuple(name for name, info in model.model_fields.items() if _number_annotation(info.annotation))


# A record id or version: an integer (or digit text from a form) from 1 to MAX_ID, never a boolean.
RecordId = Annotated[int, BeforeValidator(reject_bool), Field(ge=1, le=MAX_ID)]


def _bad_website(problem: str) -> ValueError:
    return ValueError(_("网址须为 http:// 或 https:// 链接：%(problem)s", problem=problem))


def website_url(value: Any) -> Any:
    """An http(s) URL; a bare host gets https://, any other scheme (javascript:, data: ...) is refused."""
    if not isinstance(value, str) or not value:
        return value
    if "://" not in value:
        if _SCHEME.match(value):
            raise _bad_website(_("不接受其他协议"))
        value = "https://" + value
    parts = urlsplit(value)
    if parts.scheme.lower() not in _WEB_SCHEMES:
        raise _bad_website(_("不接受其他协议"))
    try:
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise _bad_website(_("端口须为数字")) from None
    if not parts.hostname or "@" in parts.netloc or not _HOST.match(parts.netloc) or " " in value:
        raise _bad_website(_("须有主机名，且不含空格或用户名"))
    return value


def checked_email(value: str | None) -> str | None:
    """The address unchanged when it is a valid e-mail address (or None), else a ValueError with the form."""
    if value is None:
        return value
    try:
        EmailStr._validate(value)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - any parse failure is the same user error
        raise ValueError(_("邮箱格式不正确，如 name@example.com")) from None
    return value
