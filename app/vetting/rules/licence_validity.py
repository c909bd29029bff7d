"""Red flag 4: licence status not 正常, expired, expiring soon, or issued in the future."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from app.vetting.findings import Finding, RuleContext, rule
from app.vetting.rules._common import finding, label, licences_proper, number_of, parsed, registry


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
        yield finding(
            context,
            "licence.bad_status",
            subject=f"licence:{licence.id}",
            evidence=[registry("licence", licence.id, "status", status)],
            severity=settings["severity"].get(status, settings["default"]),
            number=number_of(licence),
            status=status,
            status_en=label(context, "licence_status", status, "en"),
        )


@rule("licence.expired", title_zh="许可证已过期", title_en="Licence expired", red_flag=4)
def expired(context: RuleContext) -> Iterator[Finding]:
    """A usable licence whose expiry date has passed."""
    for licence in licences_proper(context.provider):
        if licence.expires_on is None or not _usable(context, licence) or licence.expires_on >= context.today:
            continue
        yield finding(
            context,
            "licence.expired",
            subject=f"licence:{licence.id}",
            evidence=[registry("licence", licence.id, "expires_on", licence.expires_on.isoformat())],
            number=number_of(licence),
            expires_on=licence.expires_on.isoformat(),
            days=(context.today - licence.expires_on).days,
        )


@rule("licence.expiring", title_zh="许可证即将到期", title_en="Licence expiring soon", red_flag=4)
def expiring(context: RuleContext) -> Iterator[Finding]:
    """A usable licence expiring within thresholds.licence_expiring_days (today counts)."""
    limit = int(context.knowledge["thresholds"]["licence_expiring_days"])
    for licence in licences_proper(context.provider):
        if licence.expires_on is None or not _usable(context, licence):
            continue
        days = (licence.expires_on - context.today).days
        if 0 <= days <= limit:
            yield finding(
                context,
                "licence.expiring",
                subject=f"licence:{licence.id}",
                evidence=[registry("licence", licence.id, "expires_on", licence.expires_on.isoformat())],
                number=number_of(licence),
                expires_on=licence.expires_on.isoformat(),
                days=days,
                limit=limit,
            )


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
            yield finding(
                context,
                "licence.issued_in_future",
                subject=f"licence:{licence.id}",
                evidence=[registry("licence", licence.id, field, raw)],
                number=number_of(licence),
                what=what,
                what_en=what_en,
                value=value,
                today=today.isoformat(),
            )
