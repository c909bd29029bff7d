"""Reading JSON documents out of tool output that may carry warning lines around them."""

from __future__ import annotations

import json
from typing import Any

from flask_babel import gettext as _

from benchmarks.sample import ParseError


def load_json_object(text: str, tool: str) -> dict[str, Any]:
    """The first JSON object in `text` (tools print warnings before it); ParseError when none is whole."""
    start = text.find("{")
    if start < 0:
        raise ParseError(tool, _("输出中没有 JSON 对象"))
    try:
        data, _end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise ParseError(
            tool, _("输出不是完整的 JSON（在第 %(position)s 个字符处中断）", position=exc.pos)
        ) from exc
    if not isinstance(data, dict):
        raise ParseError(tool, _("JSON 文档不是对象"))
    return data


def dig(data: Any, *path: str | int, tool: str, expected: type | tuple[type, ...] = object) -> Any:
    """data[path[0]][path[1]]...; ParseError naming the missing or mistyped path."""
    current = data
    for index, key in enumerate(path):
        try:
            current = current[key]
        except (KeyError, IndexError, TypeError):
            where = ".".join(str(part) for part in path[: index + 1])
            raise ParseError(tool, _("缺少 %(path)s", path=where)) from None
    kinds = expected if isinstance(expected, tuple) else (expected,)
    is_stray_bool = isinstance(current, bool) and object not in kinds and bool not in kinds
    if not isinstance(current, expected) or is_stray_bool:
        where = ".".join(str(part) for part in path)
        raise ParseError(tool, _("%(path)s 的类型不对（%(type)s）", path=where, type=type(current).__name__))
    return current


def number(data: Any, *path: str | int, tool: str) -> float:
    """A numeric field as float; ParseError when it is missing or not a number."""
    return float(dig(data, *path, tool=tool, expected=(int, float)))
