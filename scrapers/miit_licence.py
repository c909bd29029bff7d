"""Client for the telecom licence lookup by company name (MIIT 电信业务市场综合管理信息系统).

The public system (dxzhgl.miit.gov.cn) shows licences behind an image captcha, but it documents no
API. The endpoint set below is OUR ASSUMPTION of a plausible JSON API, kept small and configurable
(base URL in the settings, paths in Endpoints) so that it can be pointed at the real endpoints once
they are known; tests/fakes/miit.py implements exactly this shape.

1. ``captcha`` (POST, no body) -> {"code": 200, "data": {"captchaId": "...", "image": "<base64 PNG>"}}
2. ``licence/query`` (POST JSON {"companyName", "captchaId", "captchaCode"}) ->
   {"code": 200, "data": {"total": N, "list": [{"companyName", "licenceNo", "status",
   "businessItems", "coverage", "issueDate", "expiryDate"}]}}

Error codes: 4001 wrong captcha answer (the captcha is used up), 4002 captcha expired or unknown,
429 too many requests; anything else not 200 is a refusal with the system's message.
businessItems is a list of codes ("B11") or of descriptions
("B11-互联网数据中心业务（不含互联网资源协作服务）"), or one such string separated by ;/,/、;
coverage is a list or such a string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Any
from urllib.parse import urljoin

from scrapers.http import FetchResult
from scrapers.official import (
    N_,
    Captcha,
    CaptchaExpired,
    Fetch,
    MalformedResponse,
    Refused,
    WrongAnswer,
    attach_result,
    decode_image,
    parse_date,
    payload,
    text,
)

DEFAULT_BASE_URL = "https://dxzhgl.miit.gov.cn/dxxzsp/api/"
CODE_OK = 200
CODE_WRONG_ANSWER = 4001
CODE_CAPTCHA_EXPIRED = 4002
CODE_RATE_LIMITED = 429
_ITEM_CODE = re.compile(r"(?<![A-Z0-9])([AB][12]\d)(?!\d)")
_SPLIT = re.compile(r"[;；,，、\n]+")
_NO_RESOURCE_COLLAB = re.compile(r"不含\s*互联网资源协作")
_WITH_RESOURCE_COLLAB = re.compile(r"(?<!不)含\s*互联网资源协作")


@dataclass(frozen=True)
class Endpoints:
    """Paths of the two steps, relative to the base URL."""

    captcha: str = "captcha"
    query: str = "licence/query"


@dataclass(frozen=True)
class LicenceRecord:
    """One licence row of the query result."""

    company_name: str
    licence_no: str
    status: str
    business_items: tuple[str, ...]
    business_scope: tuple[str, ...]
    coverage: tuple[str, ...]
    issue_date: date | None
    expiry_date: date | None
    b11_excludes_resource_collab: bool | None = None
    raw: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON form with the API's field names plus the derived item codes."""
        return {
            "companyName": self.company_name,
            "licenceNo": self.licence_no,
            "status": self.status,
            "businessItems": list(self.business_items),
            "businessScope": list(self.business_scope),
            "coverage": list(self.coverage),
            "issueDate": self.issue_date.isoformat() if self.issue_date else None,
            "expiryDate": self.expiry_date.isoformat() if self.expiry_date else None,
            "b11ExcludesResourceCollab": self.b11_excludes_resource_collab,
        }


def _list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in _SPLIT.split(value) if part.strip()]
    if isinstance(value, list):
        return [text(part) for part in value if text(part)]
    raise MalformedResponse(N_("应为列表或文本，实际为 %(got)s"), got=type(value).__name__)


def item_codes(scope: list[str]) -> tuple[str, ...]:
    """Business item codes (B11, B25 ...) named in the scope entries, sorted and unique."""
    codes = {match.group(1) for entry in scope for match in _ITEM_CODE.finditer(entry.upper())}
    return tuple(sorted(codes))


def resource_collab(scope: list[str]) -> bool | None:
    """True when the B11 entry says it excludes 互联网资源协作服务, False when it says it includes it."""
    for entry in scope:
        if "B11" not in entry:
            continue
        if _NO_RESOURCE_COLLAB.search(entry):
            return True
        if _WITH_RESOURCE_COLLAB.search(entry):
            return False
    return None


def _checked(body: dict[str, Any]) -> Any:
    code = body.get("code")
    message = text(body.get("msg")) or text(body.get("message")) or "未知错误"
    if code == CODE_OK:
        return body.get("data")
    if code == CODE_WRONG_ANSWER:
        raise WrongAnswer(N_("验证码答案不正确：%(message)s"), message=message)
    if code == CODE_CAPTCHA_EXPIRED:
        raise CaptchaExpired(N_("验证码已失效：%(message)s"), message=message)
    if code == CODE_RATE_LIMITED:
        raise Refused(N_("查询过于频繁，请稍后再试：%(message)s"), message=message)
    raise Refused(N_("许可证查询系统拒绝了请求：%(message)s（code %(code)s）"), message=message, code=code)


def parse_captcha(body: dict[str, Any]) -> Captcha:
    """The captcha of a captcha reply: its id and picture."""
    data = _checked(body)
    if not isinstance(data, dict) or not text(data.get("captchaId")):
        raise MalformedResponse(N_("验证码回复缺少 captchaId"))
    return Captcha(uuid=text(data["captchaId"]), images=(decode_image(data.get("image"), "image"),))


def parse_record(row: dict[str, Any]) -> LicenceRecord:
    """One licence row."""
    scope = _list(row.get("businessItems"))
    return LicenceRecord(
        company_name=text(row.get("companyName")),
        licence_no=text(row.get("licenceNo")),
        status=text(row.get("status")),
        business_items=item_codes(scope),
        business_scope=tuple(scope),
        coverage=tuple(_list(row.get("coverage"))),
        issue_date=parse_date(row.get("issueDate")),
        expiry_date=parse_date(row.get("expiryDate")),
        b11_excludes_resource_collab=resource_collab(scope),
        raw=row,
    )


def parse_query(body: dict[str, Any]) -> list[LicenceRecord]:
    """The licence rows of a query reply (an empty list when the company holds none)."""
    data = _checked(body)
    if not isinstance(data, dict) or not isinstance(data.get("list", []), list):
        raise MalformedResponse(N_("查询回复缺少 data.list"))
    rows = data.get("list") or []
    if any(not isinstance(row, dict) for row in rows):
        raise MalformedResponse(N_("查询结果中的一行不是对象"))
    return [parse_record(row) for row in rows]


class LicenceClient:
    """Runs the two steps against base_url through `fetch` (which records each exchange)."""

    def __init__(self, fetch: Fetch, base_url: str = DEFAULT_BASE_URL, *, endpoints: Endpoints | None = None):
        self.fetch = fetch
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.endpoints = endpoints or Endpoints()

    def captcha(self) -> Captcha:
        """Step 1: a new captcha for the analyst."""
        result = self.fetch(
            urljoin(self.base_url, self.endpoints.captcha),
            method="POST",
            headers={"Accept": "application/json"},
            purpose="licence_captcha",
        )
        return attach_result(lambda: parse_captcha(payload(result)), result)

    def query(
        self, company_name: str, captcha_id: str, answer: str
    ) -> tuple[list[LicenceRecord], FetchResult]:
        """Step 2: licences of the company; also returns the raw exchange for the evidence."""
        result = self.fetch(
            urljoin(self.base_url, self.endpoints.query),
            method="POST",
            json={"companyName": company_name, "captchaId": captcha_id, "captchaCode": answer},
            headers={"Accept": "application/json"},
            purpose="licence_query",
        )
        return attach_result(lambda: parse_query(payload(result)), result), result
