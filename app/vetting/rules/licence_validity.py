"""Red flag 4: licence status not 正常, expired, expiring soon, or issued in the future."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.rules._common import (
    label,
    licences_proper,
    parsed,
    record_finding,
)


def _status(licence: Any) -> str:
    return str(getattr(licence.status, "value", licence.status))


def _usable(context: RuleContext, licence: Any) -> bool:
    """Status is one of the good ones (dates of a revoked licence are beside the point)."""
    return _status(licence) in context.knowledge["licence_status"]["good"]


@rule("licence.bad_status", title_zh="许可证状态异常", title_en="Licence status not normal", red_flag=4)
def bad_status(context: RuleContext) -> Iterator[Finding]:
    """Each licence record whose status is not a good one; severity per status from the knowledge file."""
    settings = context.knowledge["licence_status"]
    for licence in context.provider.licences:
        status = _status(licence)
        if status in settings["good"]:
            continue
        yield record_finding(
            context,
            "licence.bad_status",
            "licence",
            licence,
            ("status", status),
            severity=settings["severity"].get(status, settings["default"]),
            status=status,
            status_en=label(context, "licence_status", status, "en"),
        )


def _expiries(context: RuleContext) -> Iterator[tuple[Any, int]]:
    """(licence, days from today to its expiry) for each usable licence with an expiry date."""
    for licence in licences_proper(context.provider):
        if licence.expires_on is not None and _usable(context, licence):
            yield licence, (licence.expires_on - context.today).days


def _expiry_finding(context: RuleContext, rule_id: str, licence: Any, **values: Any) -> Finding:
    """A finding about a licence's expiry date, citing it."""
    expires_on = licence.expires_on.isoformat()
    return record_finding(
        context, rule_id, "licence", licence, ("expires_on", expires_on), expires_on=expires_on, **values
    )


@rule("licence.expired", title_zh="许可证已过期", title_en="Licence expired", red_flag=4)
def expired(context: RuleContext) -> Iterator[Finding]:
    """A usable licence whose expiry date has passed."""
    for licence, days in _expiries(context):
        if days < 0:
            yield _expiry_finding(context, "licence.expired", licence, days=-days)


@rule("licence.expiring", title_zh="许可证即将到期", title_en="Licence expiring soon", red_flag=4)
def expiring(context: RuleContext) -> Iterator[Finding]:
    """A usable licence expiring within thresholds.licence_expiring_days (today counts)."""
    limit = int(context.knowledge["thresholds"]["licence_expiring_days"])
    for licence, days in _expiries(context):
        if 0 <= days <= limit:
            yield _expiry_finding(context, "licence.expiring", licence, days=days, limit=limit)


@rule(
    "licence.issued_in_future",
    title_zh="许可证发证年份/日期在未来",
    title_en="Licence issued in the future",
    red_flag=4,
)
def issued_in_future(context: RuleContext) -> Iterator[Finding]:
    """The year in the number, or the recorded issue date, lies after the check date."""
    today = context.today
    for licence in licences_proper(context.provider):
        year = parsed(licence.number_raw).parts.get("year")
        checks = []
        if year is not None and year > today.year:
            checks.append(
                ("许可证号中的年份", "the year in its number", str(year), "number", licence.number_raw)
            )
        if licence.issued_on is not None and licence.issued_on > today:
            value = licence.issued_on.isoformat()
            checks.append(("发证日期", "issue date", value, "issued_on", value))
        for what, what_en, value, field, raw in checks:
            yield record_finding(
                context,
                "licence.issued_in_future",
                "licence",
                licence,
                (field, raw),
                what=what,
                what_en=what_en,
                value=value,
                today=today.isoformat(),
            )
