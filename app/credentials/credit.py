"""Enterprise credit records (企业信用): record what gsxt, 信用中国 or the court site showed; read it back.

The analyst looks the company up by its USCC in a browser (each site asks a person to answer a captcha),
enters what was shown and uploads a screenshot or a PDF print of the page (the same upload rules as the
manual ICP lookup). The file becomes immutable Evidence (purpose "credit_manual"); the entered values a
CreditRecord row. The latest record per system feeds the credit rules (fact "credit"), and
`credit_verification` says how far the credit item is verified, for the per-item verification status.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from flask_babel import gettext as _
from sqlmodel import Session, col, func, select

from app.core import clock
from app.core.clock import aware
from app.core.errors import FieldError, InvalidInput, not_one_of
from app.core.events import EvidenceChanged, publish
from app.credentials.facts import fact_source
from app.credentials.manual_lookups import (
    MAX_NOTE,
    FormReader,
    creation_audit,
    read_by_hand,
    screenshot_evidence,
)
from app.credentials.verification import (
    BY_HAND,
    CONTRADICTED,
    EXPIRED,
    STATUSES,
    UNVERIFIED,
    VERIFIED,
    max_age_days,
)
from app.models import AuditEntry, Provider
from app.models.credit import CreditMethod, CreditRecord, CreditSource
from app.models.evidence import Evidence
from app.registry.providers import provider_row

PURPOSE = "credit_manual"
#: The page an analyst opens to look a company up, per system.
OFFICIAL_SITES = {
    CreditSource.gsxt: "https://www.gsxt.gov.cn/",
    CreditSource.creditchina: "https://www.creditchina.gov.cn/",
    CreditSource.zxgk: "http://zxgk.court.gov.cn/",
}
#: 登记状态 values gsxt shows; the first four mean the company is alive.
ALIVE_STATUSES = ("存续", "在业", "在营", "开业")
REGISTRATION_STATUSES = (*ALIVE_STATUSES, "吊销", "注销", "迁出", "撤销", "停业", "清算")
CURRENCIES = ("CNY", "USD", "HKD", "EUR", "JPY", "GBP")
WAN = 10_000  # registered capital is entered and shown in 万 (ten thousands)
MAX_CAPITAL = 10**15
MAX_AMOUNT = Decimal(10**13)
MAX_ENFORCEMENTS = 50
MAX_PENALTIES = 100_000
_YES = {"yes", "true", "1", "on", "是"}
_NO = {"", "no", "false", "0", "off", "否"}
_OPEN_BRACKETS = "（("


# ------------------------------------------------------------------------------------------------ input
def parse_source(value: Any) -> CreditSource:
    """The system named by `value`, or InvalidInput (field "source") naming the accepted ones."""
    try:
        return CreditSource(str(value or "").strip().lower())
    except ValueError:
        raise InvalidInput([not_one_of("source", CreditSource)]) from None


def normal_uscc(value: Any) -> str:
    """A USCC as the registry keeps it: NFKC, no spaces, upper case."""
    return "".join(unicodedata.normalize("NFKC", str(value or "")).split()).upper()


def normal_status(value: str) -> str:
    """The status word without gsxt's bracketed gloss: '存续（在营、开业、在册）' reads as 存续."""
    for bracket in _OPEN_BRACKETS:
        value = value.split(bracket, 1)[0]
    return value.strip()


class _CreditReader(FormReader):
    """The manual lookup reader plus the credit record's yes/no, counts, amounts and past dates."""

    def flag(self, name: str) -> bool:
        value = self.text(name, limit=20).lower()
        if value in _YES:
            return True
        if value not in _NO:
            self.errors.append(FieldError(name, _("须为 yes 或 no")))
        return False

    def past_day(self, name: str, today: date, *, required: bool = False) -> date | None:
        if required and not _text_of(self.values, name):
            self.errors.append(FieldError(name, _("必填项")))
            return None
        day = self.day(name)
        if day is not None and day > today:
            self.errors.append(FieldError(name, _("日期不能晚于今天")))
            return None
        return day

    def count(self, name: str) -> int:
        value = self.text(name, limit=20)
        if not value:
            return 0
        if not value.isdigit() or int(value) > MAX_PENALTIES:
            self.errors.append(FieldError(name, _("须为 0 到 %(n)d 的整数", n=MAX_PENALTIES)))
            return 0
        return int(value)

    def capital(self, name: str) -> int | None:
        """万 of the currency (up to 4 decimals) as a whole number of its unit."""
        value = self.text(name, limit=40).replace(",", "")
        if not value:
            return None
        amount = _decimal(value)
        units = amount * WAN if amount is not None else None
        if units is None or units < 0 or units != units.to_integral_value() or units > MAX_CAPITAL:
            self.errors.append(FieldError(name, _("须为非负数，单位万元，最多 4 位小数")))
            return None
        return int(units)

    def choice(self, name: str, choices: Iterable[str], *, required: bool = False) -> str:
        value = self.text(name, required=required, limit=40)
        choices = tuple(choices)
        if value and value not in choices:
            self.errors.append(not_one_of(name, choices))
            return ""
        return value


def _text_of(values: Mapping[str, Any], name: str) -> str:
    value = values.get(name)
    return "" if value is None else str(value).strip()


def _decimal(value: str) -> Decimal | None:
    try:
        amount = Decimal(value)
    except InvalidOperation:
        return None
    return amount if amount.is_finite() else None


def enforcements_from_form(form: Any) -> list[dict[str, str]]:
    """The enforcement rows of a form (repeated enforcement_amount, _date, _court), blanks dropped."""
    columns = [form.getlist(f"enforcement_{part}") for part in ("amount", "date", "court")]
    rows = []
    for index in range(min(max(len(column) for column in columns), MAX_ENFORCEMENTS + 1)):
        amount, filed, court = (column[index] if index < len(column) else "" for column in columns)
        if any(str(part).strip() for part in (amount, filed, court)):
            rows.append({"amount_cny": amount, "filed_on": filed, "court": court})
    return rows


def _enforcement(row: Any, index: int, today: date) -> tuple[dict[str, str] | None, list[FieldError]]:
    """One enforcement record checked: amount in CNY (> 0, 2 decimals), a past date, court and case number."""
    if not isinstance(row, Mapping):
        return None, [FieldError(f"enforcements.{index}", _("须为含金额、日期和法院/案号的记录"))]
    read = _CreditReader({"amount": row.get("amount_cny"), "date": row.get("filed_on"), **row})
    amount = _decimal(read.text("amount", limit=40).replace(",", ""))
    problems = []
    if amount is None or amount <= 0 or amount > MAX_AMOUNT or amount != amount.quantize(Decimal("0.01")):
        message = _("须为大于 0 的金额（元），最多 2 位小数")
        problems.append(FieldError(f"enforcements.{index}.amount_cny", message))
    filed = read.past_day("date", today, required=True)
    court = read.text("court", required=True)
    problems += [FieldError(f"enforcements.{index}.{_ROW_FIELDS[e.field]}", e.message) for e in read.errors]
    if problems:
        return None, problems
    assert amount is not None and filed is not None
    return {"amount_cny": f"{amount:.2f}", "filed_on": filed.isoformat(), "court": court}, []


_ROW_FIELDS = {"amount": "amount_cny", "date": "filed_on", "court": "court"}


def _enforcements(rows: Any, today: date) -> tuple[list[dict[str, str]], list[FieldError]]:
    if not isinstance(rows, list):
        return [], [FieldError("enforcements", _("须为执行记录的列表"))]
    if len(rows) > MAX_ENFORCEMENTS:
        return [], [FieldError("enforcements", _("最多 %(n)d 条执行记录", n=MAX_ENFORCEMENTS))]
    kept, problems = [], []
    for index, row in enumerate(rows):
        entry, errors = _enforcement(row, index, today)
        problems += errors
        if entry is not None:
            kept.append(entry)
    return kept, problems


def _listing(read: _CreditReader, name: str, today: date) -> tuple[bool, date | None, str]:
    """On a list (abnormal / dishonest): yes or no, and when listed and why (both required when yes)."""
    listed = read.flag(f"{name}_listed")
    since = read.past_day(f"{name}_since", today, required=listed)
    reason = read.text(f"{name}_reason", required=listed, limit=MAX_NOTE)
    return listed, since if listed else None, reason if listed else ""


def _uscc(read: _CreditReader, provider: Provider) -> str:
    uscc = normal_uscc(read.text("uscc", limit=40)) or (provider.uscc or "")
    if not provider.uscc:
        read.errors.append(FieldError("uscc", _("供应商尚未登记统一社会信用代码：请先在供应商资料中填写")))
    elif uscc != provider.uscc:
        message = _("查询所用代码须与供应商登记的统一社会信用代码 %(uscc)s 一致", uscc=provider.uscc)
        read.errors.append(FieldError("uscc", message))
    return uscc


def read_entry(
    values: Mapping[str, Any], enforcements: Any, provider: Provider, now: datetime
) -> dict[str, Any]:
    """The entered record as CreditRecord fields, or InvalidInput with one error per bad field."""
    today = now.date()
    read = _CreditReader(values)
    try:
        source = parse_source(values.get("source"))
    except InvalidInput as exc:
        read.errors += exc.errors
        source = None
    status = normal_status(read.text("registration_status", limit=40))
    read.values = {**values, "registration_status": status}
    entry: dict[str, Any] = {
        "source": source,
        "uscc": _uscc(read, provider),
        "registration_status": read.choice(
            "registration_status", REGISTRATION_STATUSES, required=source == CreditSource.gsxt
        )
        or None,
        "registered_capital": read.capital("registered_capital_wan"),
        "capital_currency": read.choice("capital_currency", CURRENCIES) or "CNY",
        "founded_on": read.past_day("founded_on", today),
        "penalties_count": read.count("penalties_count"),
        "penalties_note": read.text("penalties_note", limit=MAX_NOTE),
        "seen": read.text("seen", required=True, limit=MAX_NOTE),
        "looked_at": read.looked_at(now),
    }
    for name in ("abnormal", "dishonest"):
        entry[f"{name}_listed"], entry[f"{name}_since"], entry[f"{name}_reason"] = _listing(read, name, today)
    entry["enforcements"], problems = _enforcements(enforcements, today)
    if read.errors or problems:
        raise InvalidInput(read.errors + problems)
    return entry


# ------------------------------------------------------------------------------------------------ storing
def _evidence(
    provider_id: int, record: CreditRecord, body: bytes, content_type: str, filename: str | None
) -> Evidence:
    return screenshot_evidence(
        provider_id=provider_id,
        purpose=PURPOSE,
        url=OFFICIAL_SITES[record.source],
        body=body,
        content_type=content_type,
        at=record.recorded_at,
        actor=(record.recorded_by_id, record.recorded_by_name),
        extracted={**record_dict(record), "filename": (filename or "")[:200]},
    )


def record_manual(
    session: Session,
    *,
    provider_id: int,
    values: Mapping[str, Any],
    enforcements: Any,
    screenshot: Any,
    user: Any,
    filename: str | None = None,
) -> CreditRecord:
    """Store an analyst's credit record and screenshot (one transaction, audited); re-check the provider."""
    provider = provider_row(session, provider_id)
    now, entry, body, content_type, (actor_id, actor_name) = read_by_hand(
        lambda now: read_entry(values, enforcements, provider, now), screenshot, user
    )
    record = CreditRecord(
        provider_id=provider_id,
        method=CreditMethod.manual,
        recorded_by_id=actor_id,
        recorded_by_name=actor_name,
        recorded_at=now,
        **entry,
    )
    evidence = _evidence(provider_id, record, body, content_type, filename)
    session.add(evidence)
    session.flush()
    record.evidence_id = evidence.id
    session.add(record)
    session.flush()
    session.add(_audit_entry(record, evidence))
    session.commit()
    session.refresh(record)
    publish(session, EvidenceChanged(provider_id=provider_id, since=now, cause=f"credit record {record.id}"))
    return record


def _audit_entry(record: CreditRecord, evidence: Evidence) -> AuditEntry:
    """The audit row of a new credit record: every entered value, the evidence and its hash."""
    values = {**record_dict(record), "evidence_id": evidence.id, "sha256": evidence.sha256}
    for key in ("id", "provider_id", "recorded_by", "recorded_at"):
        values.pop(key, None)
    actor = (record.recorded_by_id, record.recorded_by_name)
    given = {key: value for key, value in values.items() if value is not False}
    return creation_audit("credit_record", record.id, record.provider_id, actor, given)


# ------------------------------------------------------------------------------------------------ reading
def _iso(value: date | datetime | None) -> str | None:
    if isinstance(value, datetime):
        return aware(value).isoformat()  # type: ignore[union-attr]
    return value.isoformat() if value is not None else None


def capital_wan(record: CreditRecord) -> str | None:
    """The registered capital in 万 of its currency, as plain text ('1000', '0.5')."""
    if record.registered_capital is None:
        return None
    text = f"{Decimal(record.registered_capital) / WAN:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def record_dict(record: CreditRecord) -> dict[str, Any]:
    """A record as JSON-plain data (API, facts, evidence, reports)."""
    return {
        "id": record.id,
        "provider_id": record.provider_id,
        "source": str(record.source),
        "method": str(record.method),
        "uscc": record.uscc,
        "registration_status": record.registration_status,
        "alive": record.registration_status in ALIVE_STATUSES if record.registration_status else None,
        "registered_capital_wan": capital_wan(record),
        "capital_currency": record.capital_currency,
        "founded_on": _iso(record.founded_on),
        "abnormal_listed": record.abnormal_listed,
        "abnormal_since": _iso(record.abnormal_since),
        "abnormal_reason": record.abnormal_reason,
        "dishonest_listed": record.dishonest_listed,
        "dishonest_since": _iso(record.dishonest_since),
        "dishonest_reason": record.dishonest_reason,
        "penalties_count": record.penalties_count,
        "penalties_note": record.penalties_note,
        "enforcements": list(record.enforcements or []),
        "seen": record.seen,
        "looked_at": _iso(record.looked_at),
        "evidence_id": record.evidence_id,
        "recorded_by": record.recorded_by_name,
        "recorded_at": _iso(record.recorded_at),
    }


def list_records(session: Session, *, provider_id: int, limit: int = 50) -> list[CreditRecord]:
    """The provider's credit records, the latest look first."""
    statement = (
        select(CreditRecord)
        .where(CreditRecord.provider_id == provider_id)
        .order_by(col(CreditRecord.looked_at).desc(), col(CreditRecord.id).desc())
        .limit(limit)
    )
    return list(session.exec(statement))


def latest_by_source(session: Session, *, provider_id: int) -> dict[CreditSource, CreditRecord]:
    """The latest record of each system the provider was looked up in."""
    latest: dict[CreditSource, CreditRecord] = {}
    for record in list_records(session, provider_id=provider_id, limit=500):
        latest.setdefault(CreditSource(record.source), record)
    return latest


def credit_verification(
    session: Session,
    provider_id: int,
    *,
    max_age: int | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The credit item's verification: status, who, when, evidence id (the latest record decides).

    In the per-item vocabulary (app.credentials.verification): unverified (no record), contradicted (looked
    up by a USCC other than the provider's current one), expired (looked at more than `max_age` days ago,
    default GPUVET_VERIFICATION_MAX_AGE_DAYS), else verified (a lookup adapter) or verified_by_hand.
    """
    max_age = max_age or max_age_days()
    provider = provider_row(session, provider_id)
    records = list_records(session, provider_id=provider_id, limit=1)
    if not records:
        return {"status": UNVERIFIED, "by": None, "at": None, "evidence_id": None, "record_id": None}
    record = records[0]
    looked = aware(record.looked_at)
    assert looked is not None
    if record.uscc != (provider.uscc or ""):
        status = CONTRADICTED
    elif (now or clock.now()) - looked > timedelta(days=max_age):
        status = EXPIRED
    else:
        status = BY_HAND if record.method == CreditMethod.manual else VERIFIED
    return {
        "status": status,
        "by": record.recorded_by_name,
        "at": looked.isoformat(),
        "evidence_id": record.evidence_id,
        "record_id": record.id,
        "source": str(record.source),
        "seen": record.seen,
        "expires_at": (looked + timedelta(days=max_age)).isoformat(),
    }


def identity_facts(session: Session, provider: Provider) -> dict[str, Any] | None:
    """Registered capital and founding date from the latest record that shows them, for the legal identity."""
    for record in list_records(session, provider_id=provider.id, limit=500):
        if record.uscc == provider.uscc and (record.registered_capital is not None or record.founded_on):
            return record_dict(record)
    return None


def report_credit(session: Session, provider: Provider) -> dict[str, Any] | None:
    """The provider report's credit block: each system's latest record and the verification, or None."""
    latest = latest_by_source(session, provider_id=provider.id)
    if not latest:
        return None
    order = list(CreditSource)
    records = sorted(latest.values(), key=lambda record: order.index(CreditSource(record.source)))
    verification = credit_verification(session, provider.id)
    status_zh, status_en = STATUSES[verification["status"]]
    return {
        "verification": {**verification, "status_zh": status_zh, "status_en": status_en},
        "records": [record_dict(record) for record in records],
    }


def facts_of(provider: Any, latest: Iterable[CreditRecord]) -> dict[str, Any] | None:
    """The "credit" fact from each system's latest record: those looked up by the provider's USCC."""
    order = list(CreditSource)
    records = sorted(
        (record for record in latest if provider.uscc and record.uscc == provider.uscc),
        key=lambda record: order.index(CreditSource(record.source)),
    )
    return {"records": [record_dict(record) for record in records]} if records else None


@fact_source("credit")
def credit_facts(session: Session, provider: Any) -> dict[str, Any] | None:
    """The latest record of each system looked up by the provider's USCC, for the credit rules."""
    return facts_of(provider, latest_by_source(session, provider_id=provider.id).values())


def credit_batch(session: Session, providers: Sequence[Provider]) -> dict[int, Any]:
    """The "credit" fact of many providers in one statement (app.credentials.batch_facts)."""
    ids = [provider.id for provider in providers]
    order = (col(CreditRecord.looked_at).desc(), col(CreditRecord.id).desc())
    partition = (CreditRecord.provider_id, CreditRecord.source)
    rank = func.row_number().over(partition_by=partition, order_by=order).label("rank")
    ranked = select(CreditRecord.id, rank).where(col(CreditRecord.provider_id).in_(ids)).subquery()
    latest = select(ranked.c.id).where(ranked.c.rank == 1)
    by_provider: dict[int, list[CreditRecord]] = {provider_id: [] for provider_id in ids}  # type: ignore[misc]
    for record in session.exec(select(CreditRecord).where(col(CreditRecord.id).in_(latest))).all():
        by_provider[record.provider_id].append(record)
    return {provider.id: facts_of(provider, by_provider[provider.id]) for provider in providers}  # type: ignore[index]


def _name_the_evidence() -> None:
    """The screenshot's purpose as evidence pages name it."""
    from app.credentials.evidence import PURPOSES

    PURPOSES.setdefault(PURPOSE, ("企业信用人工查询截图", "credit record by hand: screenshot"))


_name_the_evidence()
