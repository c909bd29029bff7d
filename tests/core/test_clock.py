"""app.core.clock: one `now()` in UTC and one business day in the configured zone, settable in tests."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from flask import Flask

from app.core import clock
from app.core.config import Settings

# 01:00 on 2 June in Beijing is still 1 June on a server clock in UTC.
BEIJING_1AM = datetime(2026, 6, 1, 17, 0, tzinfo=UTC)


def test_now_is_aware_and_in_utc():
    moment = clock.now()
    assert moment.utcoffset() == timedelta(0)
    assert abs(moment - datetime.now(UTC)) < timedelta(seconds=5)


def test_frozen_sets_now_and_restores_it():
    beijing = timezone(timedelta(hours=8))
    with clock.frozen(datetime(2026, 6, 2, 1, 0, tzinfo=beijing)):
        assert clock.now() == BEIJING_1AM
        assert clock.now().tzinfo == UTC
    assert clock.now() > BEIJING_1AM


def test_frozen_refuses_a_naive_moment():
    with pytest.raises(ValueError, match="zone-aware"), clock.frozen(datetime(2026, 6, 1, 17, 0)):
        pass


def test_business_today_is_the_beijing_date_outside_an_app():
    with clock.frozen(BEIJING_1AM):
        assert clock.business_today() == date(2026, 6, 2)
    assert clock.business_today(BEIJING_1AM) == date(2026, 6, 2)
    assert clock.business_today(BEIJING_1AM - timedelta(hours=1, seconds=1)) == date(2026, 6, 1)


ZONE_DAYS = [("UTC", date(2026, 6, 1)), ("Asia/Shanghai", date(2026, 6, 2))]


@pytest.mark.parametrize(("zone", "expected"), ZONE_DAYS)
def test_business_today_follows_the_configured_zone(tmp_path, zone, expected):
    flask_app = Flask(__name__)
    flask_app.config["GPUVET_SETTINGS"] = Settings(GPUVET_INSTANCE_PATH=tmp_path, GPUVET_TIMEZONE=zone)
    with flask_app.app_context(), clock.frozen(BEIJING_1AM):
        assert clock.business_today() == expected
