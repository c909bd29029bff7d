"""Delivery failures in words: stored as a message id with its values, shown in the reader's language.

A failed delivery's error is read later, by whoever opens the log, so it is stored as JSON
({"msgid": ..., "values": ...}, values possibly messages themselves) and rendered when shown; older rows
(plain text) are shown as they are.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from app.core.i18n import translate
from benchmarks.messages import Message
from benchmarks.messages import message as N_
from scrapers.http import BlockedAddress, FetchError, FetchTimeout, ResponseTooLarge, Unreachable

UNREACHABLE = {
    "dns": N_("无法解析域名 %(host)s：它现在没有对应的地址（拼写有误，或尚未生效）"),
    "refused": N_("%(host)s 拒绝了连接：该端口上没有程序在接收"),
    "network": N_("连不上 %(host)s：网络不可达"),
}


def _plain(value: Any) -> Any:
    if isinstance(value, Message):
        return {"msgid": value.msgid, "values": {name: _plain(item) for name, item in value.values.items()}}
    return value if isinstance(value, (int, float)) else str(value)


def _message(value: Any) -> Any:
    if isinstance(value, dict) and "msgid" in value:
        return Message(str(value["msgid"]), {k: _message(v) for k, v in (value.get("values") or {}).items()})
    return value


def stored(text: Message | str) -> str:
    """The text as stored on a delivery: JSON for a message, plain text otherwise."""
    return json.dumps(_plain(text), ensure_ascii=False) if isinstance(text, Message) else str(text)


def shown(text: str | None) -> str:
    """A stored delivery error in the reader's language ("" for none)."""
    if not text:
        return ""
    if text.startswith('{"msgid"'):
        try:
            return _message(json.loads(text)).render(translate)
        except (ValueError, TypeError, KeyError):
            return text
    return text


def fetch_failure(exc: FetchError, url: str, timeout_s: float) -> Message:
    """Why a POST to `url` failed, said in words (never the resolver's or socket's own text)."""
    host = urlsplit(url).hostname or url
    if isinstance(exc, Unreachable):
        return Message(UNREACHABLE[exc.reason].msgid, {"host": host})
    if isinstance(exc, BlockedAddress) and isinstance(exc.message, Message):
        return exc.message
    if isinstance(exc, FetchTimeout):
        seconds = format(timeout_s, "g")
        return N_("%(host)s 在 %(seconds)s 秒内没有回复", host=host, seconds=seconds)
    if isinstance(exc, ResponseTooLarge):
        return N_("%(host)s 的回复过大，已截断", host=host)
    return N_("发往 %(host)s 的请求未完成：连接中断或对方的回复无法读取", host=host)


def http_status(status: int) -> Message:
    """A receiver that answered with an error status."""
    return N_("接收方回复 HTTP %(status)s", status=status)


def unexpected(exc: Exception) -> Message:
    """A failure of no known kind: its type name only (the detail is logged, not shown)."""
    return N_("发送时出错（%(kind)s）", kind=type(exc).__name__)
