"""The one clock: now (aware, UTC), the business day in the configured zone, and times as people read them
(stored in UTC, shown in the configured zone, Asia/Shanghai by default, with its offset).

Tests set the clock with `frozen(moment)`; every caller reads the time through `now()` or `business_today()`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

DEFAULT_ZONE = "Asia/Shanghai"


def _system_now() -> datetime:
    return datetime.now(UTC)


_source: Callable[[], datetime] = _system_now


def now() -> datetime:
    """The current moment, zone-aware, in UTC."""
    return _source().astimezone(UTC)


def business_today(moment: datetime | None = None) -> date:
    """Today's date (or `moment`'s) in the configured zone (GPUVET_TIMEZONE): the day licences expire on."""
    return to_local(moment or now()).date()


@contextmanager
def frozen(moment: datetime) -> Iterator[None]:
    """Within the block, `now()` answers `moment` (zone-aware) whatever the server's clock says."""
    global _source
    if moment.tzinfo is None:
        raise ValueError("frozen() needs a zone-aware moment")
    previous, _source = _source, lambda: moment
    try:
        yield
    finally:
        _source = previous


def aware(value: datetime | None) -> datetime | None:
    """SQLite hands back naive datetimes; they were stored as UTC, so attach UTC."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


@lru_cache(maxsize=8)
def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def zone_name() -> str:
    """The configured display zone (GPUVET_TIMEZONE), falling back to Asia/Shanghai outside an app."""
    from flask import current_app, has_app_context

    if has_app_context():
        settings = current_app.config.get("GPUVET_SETTINGS")
        if settings is not None:
            return settings.timezone
    return DEFAULT_ZONE


def to_local(value: datetime) -> datetime:
    """The moment in the display zone."""
    return aware(value).astimezone(_zone(zone_name()))


def offset_label(value: datetime) -> str:
    """'UTC+8' (or 'UTC+5:30') for a zone-aware moment."""
    offset = value.utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    hours, rest = divmod(minutes, 60)
    return f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")


def when(value: datetime | None, *, seconds: bool = False, label: bool = True) -> str:
    """'2026-12-01 23:41 UTC+8': the moment in the display zone, to the minute, labelled with the offset."""
    if value is None:
        return ""
    local = to_local(value)
    text = local.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
    return f"{text} {offset_label(local)}" if label else text
