"""Shared parts of the official-lookup clients: errors, the JSON envelope, captcha images.

The clients (scrapers.miit_icp, scrapers.miit_licence) take a `fetch` function instead of doing HTTP
themselves; the app passes one that goes through scrapers.http.HttpClient and stores every exchange
as evidence. Everything here is pure: bytes and dicts in, records or named errors out.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol, TypeVar

from scrapers.http import FetchResult

T = TypeVar("T")


class Fetch(Protocol):
    """What the clients call to talk to an official system (records evidence in the app)."""

    def __call__(
        self,
        url: str,
        *,
        method: str = "POST",
        data: dict[str, Any] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
        purpose: str,
    ) -> FetchResult: ...


def N_(msgid: str) -> str:
    """Mark a Chinese msgid for the catalog; it is translated where it is shown, in the reader's language."""
    return msgid


class LookupFailed(Exception):
    """An official lookup step that did not succeed; `code` names the state for machines.

    The message is a Chinese msgid with %(name)s placeholders and its values (`msgid`, `params`), so the
    page can show it in the UI language; `message` is the Chinese text, for logs and stored evidence.
    """

    code = "failed"

    def __init__(self, msgid: str, /, *, result: FetchResult | None = None, **params: Any) -> None:
        self.msgid, self.params = msgid, params
        self.message = msgid % params if params else msgid
        super().__init__(self.message)
        self.result = result

    def as_json(self) -> dict[str, Any]:
        """The msgid and its values, to store and translate later."""
        return {"msgid": self.msgid, "params": dict(self.params)}


class WrongAnswer(LookupFailed):
    """The captcha answer was not accepted; a new captcha is needed."""

    code = "wrong_answer"


class CaptchaExpired(LookupFailed):
    """The captcha is no longer valid (too old, or already used); a new one is needed."""

    code = "captcha_expired"


class TokenExpired(LookupFailed):
    """The session token expired; authenticate again and fetch a new captcha."""

    code = "token_expired"


class MalformedResponse(LookupFailed):
    """The reply is not the JSON shape the documented API returns."""

    code = "malformed"


class Refused(LookupFailed):
    """The system answered with an error (rate limit, blocked address, server error ...)."""

    code = "refused"


@dataclass(frozen=True)
class CaptchaImage:
    """One captcha picture as bytes with the content type its magic bytes show."""

    name: str
    data: bytes
    content_type: str


@dataclass(frozen=True)
class Captcha:
    """A captcha to show to a person: its id, pictures and whatever else the answer step needs."""

    uuid: str
    images: tuple[CaptchaImage, ...]
    extra: dict[str, Any] = field(default_factory=dict)


_IMAGE_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
IMAGE_TYPES = frozenset(content_type for _, content_type in _IMAGE_MAGIC) | {"image/webp"}
_DATA_URL = re.compile(r"^data:[\w/+.-]+;base64,", re.I)
_DATE = re.compile(r"(\d{4})\D{1,3}(\d{1,2})\D{1,3}(\d{1,2})")


def sniff_image(data: bytes) -> str | None:
    """Return the image content type the bytes start with (PNG, JPEG, GIF, WebP), else None."""
    for magic, content_type in _IMAGE_MAGIC:
        if data.startswith(magic):
            return content_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def decode_image(value: Any, name: str) -> CaptchaImage:
    """Decode a base64 (or data: URL) captcha picture; raise MalformedResponse when it is not an image."""
    if not isinstance(value, str) or not value:
        raise MalformedResponse(N_("验证码图片 %(name)s 缺失"), name=name)
    try:
        data = base64.b64decode(_DATA_URL.sub("", value.strip()), validate=False)
    except (binascii.Error, ValueError) as exc:
        raise MalformedResponse(N_("验证码图片 %(name)s 不是 base64 编码"), name=name) from exc
    content_type = sniff_image(data)
    if content_type is None:
        raise MalformedResponse(N_("验证码 %(name)s 不是 PNG/JPEG/GIF/WebP 图片"), name=name)
    return CaptchaImage(name=name, data=data, content_type=content_type)


def payload(result: FetchResult) -> dict[str, Any]:
    """The JSON object of a reply; raise Refused for an HTTP error without JSON, Malformed otherwise."""
    try:
        data = json.loads(result.body)
    except (ValueError, UnicodeDecodeError) as exc:
        if result.status >= 400:
            raise Refused(N_("官方系统返回 HTTP %(status)d"), result=result, status=result.status) from exc
        raise MalformedResponse(
            N_("官方系统的回复不是 JSON（HTTP %(status)d，%(size)d 字节）"),
            result=result,
            status=result.status,
            size=len(result.body),
        ) from exc
    if not isinstance(data, dict):
        raise MalformedResponse(N_("官方系统的回复不是 JSON 对象"), result=result)
    return data


def text(value: Any) -> str:
    """A field value as trimmed text ('' for None)."""
    return "" if value is None else str(value).strip()


def parse_date(value: Any) -> date | None:
    """A date from 'YYYY-MM-DD', 'YYYY年MM月DD日', 'YYYY/MM/DD hh:mm' or epoch milliseconds; None if empty."""
    if value in (None, ""):
        return None
    if isinstance(value, (int, float)) and value > 10**11:
        return datetime.fromtimestamp(value / 1000).date()
    match = _DATE.search(str(value))
    if match is None:
        raise MalformedResponse(N_("日期“%(value)s”无法识别"), value=str(value))
    try:
        return date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
    except ValueError as exc:
        raise MalformedResponse(N_("日期“%(value)s”无效"), value=str(value)) from exc


def attach_result(parse: Callable[[], T], result: FetchResult) -> T:
    """Run a parse step, attaching the exchange to any lookup error it raises."""
    try:
        return parse()
    except LookupFailed as exc:
        if exc.result is None:
            exc.result = result
        raise
