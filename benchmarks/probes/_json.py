"""Reading JSON documents out of tool output that may carry warning lines around them."""

from __future__ import annotations

import json
import math
from typing import Any, NoReturn

from benchmarks.messages import message as _
from benchmarks.sample import ParseError

# A double holds at most 309 integer digits: a longer number cannot be a measurement, and Python refuses to
# read one of 4,301 digits or more (int max str digits), so longer integers are refused by name.
MAX_INTEGER_DIGITS = 308


def _refuse_constant(tool: str, name: str) -> NoReturn:
    raise ParseError(tool, _("JSON 中有 %(constant)s：须为有限的数字", constant=name))


def _finite_float(tool: str, text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ParseError(tool, _("数字 %(number)s 超出范围：须为有限的数字", number=_shortened(text)))
    return value


def _bounded_int(tool: str, text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INTEGER_DIGITS:
        raise ParseError(
            tool,
            _(
                "整数 %(number)s 有 %(digits)s 位，超出范围：最多 %(most)s 位",
                number=_shortened(text),
                digits=digits,
                most=MAX_INTEGER_DIGITS,
            ),
        )
    return int(text)


def _shortened(text: str) -> str:
    """A number's text as quoted in a message: at most 24 characters."""
    return text if len(text) <= 24 else f"{text[:12]}…{text[-8:]}"


def _decoder(tool: str) -> json.JSONDecoder:
    """A decoder refusing NaN, Infinity, overflowing numbers and integers too long to be numbers."""
    return json.JSONDecoder(
        parse_constant=lambda name: _refuse_constant(tool, name),
        parse_float=lambda text: _finite_float(tool, text),
        parse_int=lambda text: _bounded_int(tool, text),
    )


def load_json_object(text: str, tool: str) -> dict[str, Any]:
    """The first JSON object in `text` (tools print warnings before it); ParseError when none is whole, when
    it holds NaN, Infinity or numbers out of range, or when it is nested deeper than the parser can read."""
    start = text.find("{")
    if start < 0:
        raise ParseError(tool, _("输出中没有 JSON 对象"))
    try:
        data, _end = _decoder(tool).raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise ParseError(
            tool, _("输出不是完整的 JSON（在第 %(position)s 个字符处中断）", position=exc.pos)
        ) from exc
    except RecursionError:
        raise ParseError(tool, _("JSON 嵌套过深，超出解析器能读取的层数")) from None
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
