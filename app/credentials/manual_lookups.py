"""Official lookups recorded by hand: what the analyst saw on the official site, a screenshot as evidence.

When this machine cannot reach the official system (or its captcha cannot be solved), the analyst looks
the company up in a browser and records the result here. The screenshot (PNG, JPEG or a PDF print, told
apart by its bytes, never by its name) is stored as immutable Evidence (purpose "lookup_manual", method
"MANUAL", extracted = the entered result); the Lookup row gets state "manual" and the same record shape an
automatic lookup returns, so the credential rules read it the same way. An automatic lookup outranks a
manual one (app/credentials/lookups.lookup_facts); findings from a manual one say so.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta
from typing import Any, NamedTuple

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from sqlmodel import Session

from app.core import clock
from app.core.clock import aware, to_local, zone_name
from app.core.errors import FieldError, InvalidInput, not_one_of
from app.core.events import EvidenceChanged, publish
from app.models import AuditEntry, Provider
from app.models.evidence import MANUAL_METHOD, Evidence, Lookup, LookupKind, LookupState
from app.registry.providers import provider_row
from scrapers import miit_licence
from scrapers.official import sniff_image

PURPOSE = "lookup_manual"
MAX_SCREENSHOT_BYTES = 5 * 1024 * 1024
MAX_NOTE = 1000
MAX_TEXT = 200
#: The page an analyst opens to look a company up by hand, per kind.
OFFICIAL_SITES = {
    LookupKind.icp: "https://beian.miit.gov.cn/",
    LookupKind.licence: "https://tsm.miit.gov.cn/",
    LookupKind.psb: "https://beian.mps.gov.cn/",  # 全国互联网安全管理服务平台 (public-security filings)
    LookupKind.certification: "https://cx.cnca.cn/",  # 认证认可业务信息统一查询平台 (CNCA certificates)
}
SCREENSHOT_TYPES = ("image/png", "image/jpeg", "application/pdf")
LICENCE_STATUSES = ("正常", "撤销", "无效", "吊销", "注销", "过期")
CERTIFICATE_STATUSES = ("有效", "暂停", "撤销", "注销", "过期")  # as the CNCA register words them
CERTIFICATE_KINDS = ("iso9001", "iso27001", "dengbao", "other")
_YES = {"yes", "true", "1", "found", "是", "on"}
_NO = {"no", "false", "0", "not_found", "否"}
_LOOKED_AT_FORMATS = ("%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S")
_SPLIT = re.compile(r"[;；,，、\n]+")
_CLOCK_SKEW = timedelta(minutes=5)


def sniff_screenshot(data: bytes) -> str | None:
    """The screenshot's content type from its first bytes: PNG, JPEG or PDF; None for anything else."""
    image = sniff_image(data)
    if image in ("image/png", "image/jpeg"):
        return image
    if data[:1024].lstrip(b"\r\n\t \x00\xef\xbb\xbf").startswith(b"%PDF-"):
        return "application/pdf"
    return None


def check_upload(
    data: Any, *, field: str, missing: Any, too_large: Any, wrong_type: Any
) -> tuple[bytes, str]:
    """The bytes and detected type of a screenshot or scan (PNG, JPEG or PDF by content, at most
    MAX_SCREENSHOT_BYTES), or InvalidInput on `field` with its lazy texts (`too_large` takes %(mb)d)."""
    if not isinstance(data, (bytes, bytearray)) or not data:
        raise InvalidInput(str(missing), field=field)
    if len(data) > MAX_SCREENSHOT_BYTES:
        raise InvalidInput(str(too_large) % {"mb": MAX_SCREENSHOT_BYTES // (1024 * 1024)}, field=field)
    content_type = sniff_screenshot(bytes(data))
    if content_type is None:
        raise InvalidInput(str(wrong_type), field=field)
    return bytes(data), content_type


def check_screenshot(data: Any) -> tuple[bytes, str]:
    """The bytes and their detected type, or InvalidInput (field "screenshot") naming what is accepted."""
    return check_upload(
        data,
        field="screenshot",
        missing=_l("请上传官方网站查询结果的截图（PNG、JPEG 或 PDF）"),
        too_large=_l("截图过大：最大 %(mb)d MB"),
        wrong_type=_l("截图须为 PNG、JPEG 图片或 PDF 文件（按文件内容识别，与文件名无关）"),
    )


# ------------------------------------------------------------------------------------------------ input
def _text(values: Mapping[str, Any], name: str) -> str:
    value = values.get(name)
    return "" if value is None else unicodedata.normalize("NFC", str(value)).strip()


class FormReader:
    """Reads and checks the entered values, collecting one error per bad field."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.values, self.errors = values, []

    def text(self, name: str, *, required: bool = False, limit: int = MAX_TEXT) -> str:
        value = _text(self.values, name)
        if "\x00" in value:
            self.errors.append(FieldError(name, _("不能包含空字符（NUL）")))
            return ""
        if required and not value:
            self.errors.append(FieldError(name, _("必填项")))
        elif len(value) > limit:
            self.errors.append(FieldError(name, _("最多 %(n)d 个字符", n=limit)))
        return value[:limit]

    def day(self, name: str) -> date | None:
        value = self.text(name, limit=40)
        if not value:
            return None
        try:
            return date.fromisoformat(value)
        except ValueError:
            self.errors.append(FieldError(name, _("须为日期，格式 YYYY-MM-DD")))
            return None

    def found(self) -> bool:
        value = self.text("found", limit=20).lower()
        if value in _YES:
            return True
        if value not in _NO:
            self.errors.append(FieldError("found", _("请选择官方网站是否查到记录（yes 或 no）")))
        return False

    def looked_at(self, now: datetime) -> datetime | None:
        """When the analyst looked: a local date and time (display zone) or an ISO time with offset."""
        value = self.text("looked_at", required=True, limit=40)
        if not value:
            return None
        moment = _parse_moment(value)
        if moment is None:
            self.errors.append(FieldError("looked_at", _("须为日期时间，格式 YYYY-MM-DD HH:MM")))
        elif moment > now + _CLOCK_SKEW:
            self.errors.append(FieldError("looked_at", _("查询时间不能晚于现在")))
            return None
        return moment


def _parse_moment(value: str) -> datetime | None:
    from zoneinfo import ZoneInfo

    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
        for pattern in _LOOKED_AT_FORMATS:
            try:
                parsed = datetime.strptime(value, pattern)
                break
            except ValueError:
                continue
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=ZoneInfo(zone_name()))
    return parsed.astimezone(UTC)


def _icp_record(read: FormReader) -> dict[str, Any]:
    return {
        "unitName": read.text("holder_name", required=True),
        "natureName": read.text("nature", limit=40),
        "mainLicence": read.text("number", required=True, limit=100),
        "serviceLicence": "",
        "siteName": read.text("items"),
        "domain": read.text("domain"),
        "updateRecordTime": "",
    }


def _licence_record(read: FormReader) -> dict[str, Any]:
    status = read.text("status", limit=20) or LICENCE_STATUSES[0]
    if status not in LICENCE_STATUSES:
        read.errors.append(not_one_of("status", LICENCE_STATUSES, "licence_status"))
    issued, expires = read.day("issue_date"), read.day("expiry_date")
    if issued and expires and expires < issued:
        read.errors.append(FieldError("expiry_date", _("有效期至不能早于发证日期")))
    row = {
        "companyName": read.text("holder_name", required=True),
        "licenceNo": read.text("number", required=True, limit=100),
        "status": status,
        "businessItems": [
            part.strip() for part in _SPLIT.split(read.text("items", limit=2000)) if part.strip()
        ],
        "coverage": read.text("coverage", limit=1000),
        "issueDate": issued.isoformat() if issued else None,
        "expiryDate": expires.isoformat() if expires else None,
    }
    return miit_licence.parse_record(row).to_dict()


def _psb_record(read: FormReader) -> dict[str, Any]:
    return {
        "recordNo": read.text("number", required=True, limit=100),
        "unitName": read.text("holder_name", required=True),
        "siteName": read.text("items"),
        "domain": read.text("domain"),
    }


def _choice(read: FormReader, name: str, choices: tuple[str, ...]) -> str:
    value = read.text(name, limit=40) or choices[0]
    if value not in choices:
        read.errors.append(not_one_of(name, choices))
    return value


def _certification_record(read: FormReader) -> dict[str, Any]:
    expires = read.day("expiry_date")
    return {
        "number": read.text("number", required=True, limit=100),
        "kind": _choice(read, "certificate_kind", CERTIFICATE_KINDS),
        "holder": read.text("holder_name", required=True),
        "status": _choice(read, "status", CERTIFICATE_STATUSES),
        "scope": read.text("items", limit=1000),
        "expiryDate": expires.isoformat() if expires else None,
    }


RECORD_READERS = {
    LookupKind.icp: _icp_record,
    LookupKind.licence: _licence_record,
    LookupKind.psb: _psb_record,
    LookupKind.certification: _certification_record,
}


def read_entry(
    values: Mapping[str, Any], kind: LookupKind, provider: Provider, now: datetime
) -> dict[str, Any]:
    """The entered result as stored (query, found, record, looked_at, note), or InvalidInput per bad field."""
    read = FormReader(values)
    query = read.text("query") or provider.legal_name
    found = read.found()
    record = None
    if found:
        record = RECORD_READERS[kind](read)
    looked_at = read.looked_at(now)
    note = read.text("note", limit=MAX_NOTE)
    if read.errors:
        raise InvalidInput(read.errors)
    assert looked_at is not None
    return {"query": query, "found": found, "record": record, "looked_at": looked_at, "note": note}


# ------------------------------------------------------------------------------------------------ storing
def actor_of(user: Any) -> tuple[int | None, str]:
    """(id, name) of the user recording something by hand; (None, "system") without one."""
    return (user.id, user.username) if user is not None else (None, "system")


class HandEntry(NamedTuple):
    """A record entered by hand, checked: when, the values, the screenshot and who entered it."""

    now: datetime
    entry: dict[str, Any]
    body: bytes
    content_type: str
    actor: tuple[int | None, str]


def read_by_hand(
    read: Callable[[datetime], dict[str, Any]],
    screenshot: Any,
    user: Any,
    check_file: Callable[[Any], tuple[bytes, str]] = check_screenshot,
) -> HandEntry:
    """The values entered now (`read(now)`) and the file checked by `check_file`, or one InvalidInput naming
    every bad field of both (a manual record of any kind: lookup, footer, credit record, quote)."""
    now = clock.now()
    problems: list[FieldError] = []
    entry: dict[str, Any] = {}
    body, content_type = b"", ""
    try:
        entry = read(now)
    except InvalidInput as exc:
        problems += exc.errors
    try:
        body, content_type = check_file(screenshot)
    except InvalidInput as exc:
        problems += exc.errors
    if problems:
        raise InvalidInput(problems)
    return HandEntry(now, entry, body, content_type, actor_of(user))


def screenshot_evidence(
    *,
    provider_id: int,
    purpose: str,
    url: str,
    body: bytes,
    content_type: str,
    at: datetime,
    actor: tuple[int | None, str],
    extracted: dict[str, Any],
    lookup_id: int | None = None,
) -> Evidence:
    """The screenshot an analyst uploaded of what they saw at `url`, as evidence recorded by hand."""
    return Evidence(
        provider_id=provider_id,
        purpose=purpose,
        method=MANUAL_METHOD,
        url=url,
        final_url=url,
        content_type=content_type,
        sha256=hashlib.sha256(body).hexdigest(),
        size=len(body),
        body=body,
        fetched_at=at,
        extracted=extracted,
        lookup_id=lookup_id,
        triggered_by_id=actor[0],
        triggered_by_name=actor[1],
    )


def creation_audit(
    entity: str, entity_id: int | None, provider_id: int | None, actor: tuple[int | None, str], changes: dict
) -> AuditEntry:
    """The audit row of a record made by hand: each value given (blank ones left out) as created."""
    return AuditEntry(
        actor_id=actor[0],
        actor_name=actor[1],
        action="create",
        entity=entity,
        entity_id=entity_id,
        provider_id=provider_id,
        changes={key: [None, value] for key, value in changes.items() if value not in (None, "", [])},
    )


def record_manual(
    session: Session,
    *,
    provider_id: int,
    kind: Any,
    values: Mapping[str, Any],
    screenshot: Any,
    user: Any,
    filename: str | None = None,
    replaces: int | None = None,
) -> Lookup:
    """Store an analyst's lookup result and screenshot (one transaction, audited); re-check the provider."""
    provider = provider_row(session, provider_id)
    from app.credentials.lookups import parse_kind

    kind = parse_kind(kind)
    now, entry, body, content_type, (actor_id, actor_name) = read_by_hand(
        lambda now: read_entry(values, kind, provider, now), screenshot, user
    )
    manual = {
        "by": actor_name,
        "looked_at": entry["looked_at"].isoformat(),
        "recorded_at": now.isoformat(),
        "found": entry["found"],
        "note": entry["note"],
        "replaces": replaces,
        "content_type": content_type,
    }
    lookup = Lookup(
        provider_id=provider_id,
        kind=kind,
        query=entry["query"],
        state=LookupState.manual,
        records=[entry["record"]] if entry["record"] else [],
        captcha_extra={"manual": manual},
        created_by_id=actor_id,
        created_by_name=actor_name,
        created_at=now,
        updated_at=now,
        completed_at=entry["looked_at"],
    )
    session.add(lookup)
    session.flush()
    evidence = screenshot_evidence(
        provider_id=provider_id,
        purpose=PURPOSE,
        url=OFFICIAL_SITES[kind],
        body=body,
        content_type=content_type,
        at=now,
        actor=(actor_id, actor_name),
        extracted={
            "kind": kind.value,
            "query": entry["query"],
            "found": entry["found"],
            "records": lookup.records,
            "looked_at": manual["looked_at"],
            "note": entry["note"],
            "filename": (filename or "")[:200],
        },
        lookup_id=lookup.id,
    )
    session.add(evidence)
    session.flush()
    lookup.result_evidence_id = evidence.id
    session.add(lookup)
    session.add(_audit_entry(lookup, evidence, actor_id, actor_name))
    session.commit()
    session.refresh(lookup)
    publish(session, EvidenceChanged(provider_id=provider_id, since=now, cause=f"manual lookup {lookup.id}"))
    return lookup


def _audit_entry(lookup: Lookup, evidence: Evidence, actor_id: int | None, actor_name: str) -> AuditEntry:
    """The audit row of a manual record (the Lookup table is not audited by itself)."""
    manual = lookup.captcha_extra["manual"]
    record = lookup.records[0] if lookup.records else {}
    number_fields = ("mainLicence", "licenceNo", "recordNo", "number")
    changes = {
        "kind": str(lookup.kind),
        "query": lookup.query,
        "found": manual["found"],
        "holder_name": record.get("unitName") or record.get("companyName") or record.get("holder"),
        "number": next((record[name] for name in number_fields if record.get(name)), None),
        "looked_at": manual["looked_at"],
        "note": manual["note"],
        "evidence_id": evidence.id,
        "sha256": evidence.sha256,
    }
    return creation_audit("lookup", lookup.id, lookup.provider_id, (actor_id, actor_name), changes)


# ------------------------------------------------------------------------------------------------ reading
def manual_info(lookup: Lookup) -> dict[str, Any] | None:
    """Who recorded a manual lookup and when they looked (aware datetime), or None for an automatic one."""
    if lookup.state != LookupState.manual:
        return None
    manual = dict((lookup.captcha_extra or {}).get("manual") or {})
    looked = manual.get("looked_at")
    manual["looked_at"] = aware(datetime.fromisoformat(looked)) if looked else aware(lookup.completed_at)
    manual.setdefault("by", lookup.created_by_name)
    return manual


def local_now_text() -> str:
    """Now in the display zone as the looked_at form field wants it (YYYY-MM-DDTHH:MM)."""
    return to_local(clock.now()).strftime("%Y-%m-%dT%H:%M")


def zone_label() -> str:
    """The display zone's offset ('UTC+8'), which a looked_at without offset is read in."""
    from app.core.clock import offset_label

    return offset_label(to_local(clock.now()))
