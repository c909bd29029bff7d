"""Client for the official ICP filing lookup (beian.miit.gov.cn; API under hlwicpfwc.miit.gov.cn).

The documented flow (DOMAIN.md §3), every step a JSON POST:

1. ``auth`` (form: authKey = md5("testtest" + timestamp_ms), timeStamp) -> params.bussiness = token,
   params.expire = lifetime in ms (about 300 s).
2. ``image/getCheckImagePoint`` {clientUid} with header token -> params.bigImage / smallImage (base64
   slider-captcha pictures) and params.uuid.
3. ``image/checkImage`` {key: uuid, value: answer} with header token -> params = sign. The answer is
   the x offset of the gap in the big picture, given by the analyst. Six failures lock the uuid: the
   app fetches a new captcha after each failure and stops well before that.
4. ``icpAbbreviateInfo/queryByCondition`` {pageNum, pageSize, unitName, serviceType} with headers
   token / sign / uuid -> params.list of {unitName, natureName, mainLicence, serviceLicence, domain,
   updateRecordTime, ...}.

Replies share one envelope: {"code": 200, "msg": "...", "success": true, "params": ...}. Code 401 (or
a message about the token) means the token expired. The base URL is configurable (settings).
"""

from __future__ import annotations

import hashlib
import time
import uuid as uuid_module
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urljoin

from scrapers.http import FetchResult
from scrapers.official import (
    N_,
    Captcha,
    Fetch,
    MalformedResponse,
    Refused,
    TokenExpired,
    WrongAnswer,
    attach_result,
    decode_image,
    payload,
    text,
)

DEFAULT_BASE_URL = "https://hlwicpfwc.miit.gov.cn/icpproject_query/api/"
REFERER = "https://beian.miit.gov.cn/"
AUTH_SALT = "testtest"
DEFAULT_TOKEN_SECONDS = 300
# Refresh the token when less than this is left, so it cannot expire between two steps.
TOKEN_MARGIN = timedelta(seconds=20)
PAGE_SIZE = 40
SERVICE_TYPE_WEBSITE = 1


@dataclass(frozen=True)
class Endpoints:
    """Paths of the four steps, relative to the base URL."""

    auth: str = "auth"
    captcha: str = "image/getCheckImagePoint"
    check: str = "image/checkImage"
    query: str = "icpAbbreviateInfo/queryByCondition"


@dataclass(frozen=True)
class Token:
    """A session token and when it stops being valid."""

    value: str
    expires_at: datetime

    def valid(self, now: datetime) -> bool:
        """True while more than the safety margin is left."""
        return now + TOKEN_MARGIN < self.expires_at


@dataclass(frozen=True)
class IcpRecord:
    """One filing row of the query result."""

    unit_name: str
    nature_name: str
    main_licence: str
    service_licence: str
    domain: str
    update_record_time: str
    raw: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form with the API's field names."""
        return {
            "unitName": self.unit_name,
            "natureName": self.nature_name,
            "mainLicence": self.main_licence,
            "serviceLicence": self.service_licence,
            "domain": self.domain,
            "updateRecordTime": self.update_record_time,
        }


def auth_key(timestamp_ms: int) -> str:
    """md5("testtest" + timestamp) as the auth step expects."""
    return hashlib.md5(f"{AUTH_SALT}{timestamp_ms}".encode(), usedforsecurity=False).hexdigest()


def _token_problem(body: dict[str, Any]) -> bool:
    message = text(body.get("msg")).lower()
    expired = any(word in message for word in ("过期", "失效", "expire"))
    return body.get("code") == 401 or ("token" in message and expired)


def checked(body: dict[str, Any], result: FetchResult | None = None) -> Any:
    """params of a successful reply; TokenExpired or Refused (with the system's message) otherwise."""
    if body.get("code") == 200 and body.get("success", True) is not False:
        return body.get("params")
    message = text(body.get("msg")) or "未知错误"
    if _token_problem(body):
        raise TokenExpired(N_("查询令牌已过期：%(message)s"), result=result, message=message)
    raise Refused(
        N_("备案系统拒绝了请求：%(message)s（code %(code)s）"),
        result=result,
        message=message,
        code=body.get("code"),
    )


def parse_auth(body: dict[str, Any], now: datetime) -> Token:
    """The token of an auth reply."""
    params = checked(body)
    if not isinstance(params, dict):
        raise MalformedResponse(N_("auth 回复缺少 params"))
    value = text(params.get("bussiness") or params.get("business") or params.get("token"))
    if not value:
        raise MalformedResponse(N_("auth 回复缺少令牌"))
    expire = params.get("expire")
    seconds = expire / 1000 if isinstance(expire, (int, float)) and expire > 0 else DEFAULT_TOKEN_SECONDS
    return Token(value=value, expires_at=now + timedelta(seconds=seconds))


def parse_captcha(body: dict[str, Any]) -> Captcha:
    """The slider captcha of a getCheckImagePoint reply: uuid, big and small pictures."""
    params = checked(body)
    if not isinstance(params, dict) or not text(params.get("uuid")):
        raise MalformedResponse(N_("验证码回复缺少 uuid"))
    images = [decode_image(params.get("bigImage"), "bigImage")]
    if params.get("smallImage"):
        images.append(decode_image(params.get("smallImage"), "smallImage"))
    extra = {key: params[key] for key in ("height", "secretKey", "wordCount") if key in params}
    return Captcha(uuid=text(params["uuid"]), images=tuple(images), extra=extra)


def parse_check(body: dict[str, Any]) -> str:
    """The sign of an accepted answer; WrongAnswer when the answer was refused."""
    if _token_problem(body):
        checked(body)
    if body.get("code") != 200 or body.get("success") is False:
        message = text(body.get("msg")) or "验证失败"
        raise WrongAnswer(N_("验证码答案不正确：%(message)s"), message=message)
    sign = body.get("params")
    if isinstance(sign, dict):
        sign = sign.get("sign")
    if not text(sign):
        raise MalformedResponse(N_("验证回复缺少 sign"))
    return text(sign)


def parse_query(body: dict[str, Any]) -> list[IcpRecord]:
    """The filing rows of a queryByCondition reply (an empty list when nothing is filed)."""
    params = checked(body)
    if not isinstance(params, dict) or not isinstance(params.get("list", []), list):
        raise MalformedResponse(N_("查询回复缺少 params.list"))
    records = []
    for row in params.get("list") or []:
        if not isinstance(row, dict):
            raise MalformedResponse(N_("查询结果中的一行不是对象"))
        records.append(
            IcpRecord(
                unit_name=text(row.get("unitName")),
                nature_name=text(row.get("natureName")),
                main_licence=text(row.get("mainLicence")),
                service_licence=text(row.get("serviceLicence")),
                domain=text(row.get("domain")),
                update_record_time=text(row.get("updateRecordTime")),
                raw=row,
            )
        )
    return records


class IcpClient:
    """Runs the four steps against base_url through `fetch` (which records each exchange)."""

    def __init__(
        self,
        fetch: Fetch,
        base_url: str = DEFAULT_BASE_URL,
        *,
        endpoints: Endpoints | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.fetch = fetch
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.endpoints = endpoints or Endpoints()
        self.clock = clock

    def _url(self, path: str) -> str:
        return urljoin(self.base_url, path)

    def _headers(self, token: Token | None = None, **extra: str) -> dict[str, str]:
        headers = {"Referer": REFERER, "Origin": REFERER.rstrip("/"), "Accept": "application/json"}
        if token is not None:
            headers["token"] = token.value
        headers.update(extra)
        return headers

    def now(self) -> datetime:
        """The client's clock as an aware datetime."""
        return datetime.fromtimestamp(self.clock(), UTC)

    def authenticate(self) -> Token:
        """Step 1: get a session token."""
        stamp = int(self.clock() * 1000)
        result = self.fetch(
            self._url(self.endpoints.auth),
            method="POST",
            data={"authKey": auth_key(stamp), "timeStamp": str(stamp)},
            headers=self._headers(),
            purpose="icp_auth",
        )
        return attach_result(lambda: parse_auth(payload(result), self.now()), result)

    def captcha(self, token: Token) -> Captcha:
        """Step 2: a new slider captcha for the analyst."""
        result = self.fetch(
            self._url(self.endpoints.captcha),
            method="POST",
            json={"clientUid": f"point-{uuid_module.uuid4()}"},
            headers=self._headers(token),
            purpose="icp_captcha",
        )
        return attach_result(lambda: parse_captcha(payload(result)), result)

    def check(self, token: Token, captcha_uuid: str, answer: str) -> str:
        """Step 3: send the analyst's answer; return the sign."""
        result = self.fetch(
            self._url(self.endpoints.check),
            method="POST",
            json={"key": captcha_uuid, "value": answer},
            headers=self._headers(token),
            purpose="icp_check",
        )
        return attach_result(lambda: parse_check(payload(result)), result)

    def query(
        self, token: Token, sign: str, captcha_uuid: str, unit_name: str
    ) -> tuple[list[IcpRecord], FetchResult]:
        """Step 4: filings of the unit name; also returns the raw exchange for the evidence."""
        result = self.fetch(
            self._url(self.endpoints.query),
            method="POST",
            json={
                "pageNum": 1,
                "pageSize": PAGE_SIZE,
                "unitName": unit_name,
                "serviceType": SERVICE_TYPE_WEBSITE,
            },
            headers=self._headers(token, sign=sign, uuid=captcha_uuid),
            purpose="icp_query",
        )
        return attach_result(lambda: parse_query(payload(result)), result), result
