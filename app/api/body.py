"""Reading API input: a JSON object body, versions from the body, ?version= or If-Match."""

from __future__ import annotations

import json
from typing import Any

from flask import request
from flask_babel import gettext as _

from app.api.errors import ApiError
from app.core.errors import FieldError, field_path
from app.core.limits import MAX_ID, depth_message, parse_id, too_deep

# A provider with every nested record is a few kilobytes; anything near this is a mistake or abuse.
MAX_BODY_BYTES = 1024 * 1024


def _bad_request(message: str) -> ApiError:
    return ApiError(400, [FieldError("", message)])


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _nul_fields(value: Any, loc: tuple[int | str, ...] = ()) -> list[str]:
    """Paths of strings (keys or values) containing NUL, which PostgreSQL cannot store."""
    if isinstance(value, str):
        return [field_path(loc)] if "\x00" in value else []
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if "\x00" in key:
                found.append(field_path((*loc, key)))
            found.extend(_nul_fields(item, (*loc, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_nul_fields(item, (*loc, index)))
    return found


def json_object() -> dict[str, Any]:
    """The request body as a JSON object, or a 400/413/422 that says what is wrong."""
    mimetype = request.mimetype
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise _bad_request(
            _("Content-Type 须为 application/json，收到的是 %(got)s", got=mimetype or _("（无）"))
        )
    request.max_content_length = MAX_BODY_BYTES
    raw = request.get_data(cache=True)
    if not raw.strip():
        raise _bad_request(_("请求体为空，须为 JSON 对象"))
    try:
        data = json.loads(raw, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise _bad_request(
            _("JSON 格式错误：第 %(line)s 行第 %(column)s 列", line=exc.lineno, column=exc.colno)
        ) from None
    except RecursionError:
        raise _bad_request(depth_message()) from None
    except ValueError:
        # Bad UTF-8, NaN/Infinity, numbers with too many digits.
        raise _bad_request(_("JSON 无法解析：编码须为 UTF-8，数字须为有限值")) from None
    deep = too_deep(data)
    if deep is not None:
        raise ApiError(400, [FieldError(field_path(deep), depth_message())])
    if not isinstance(data, dict):
        raise _bad_request(_("请求体须为 JSON 对象，收到的是 %(got)s", got=type(data).__name__))
    nul = _nul_fields(data)
    if nul:
        raise ApiError(422, [FieldError(name, _("不能包含空字符 NUL")) for name in nul])
    return data


def _is_version(value: str) -> bool:
    """Digits naming a version from 1 to MAX_ID (short enough for int(), which refuses 4,301 digits)."""
    return parse_id(value) is not None


def if_match_version() -> str | None:
    """The version named by an If-Match header ("3" or W/"3"), None when absent or `*`."""
    if "If-Match" not in request.headers:
        return None
    tags = request.if_match
    if tags.star_tag:
        return None
    values = {value for value in tags.as_set(include_weak=True) if value}
    if len(values) != 1:
        raise ApiError(
            422,
            [FieldError("If-Match", _('须为一个版本号，如 If-Match: "3"'))],
        )
    value = next(iter(values))
    if not _is_version(value):
        raise ApiError(
            422,
            [
                FieldError(
                    "If-Match",
                    _('版本号须为 1-%(most)s 的整数，如 "3"，收到 "%(got)s"', most=MAX_ID, got=value[:20]),
                )
            ],
        )
    return value
