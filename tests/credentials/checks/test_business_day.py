"""At 01:00 in Beijing on a server clock in UTC (17:00 the day before), the dashboard, the credential check,
the expiry watch and the provider report agree on which licence has expired: all count the Beijing date."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

import pytest
from sqlmodel import Session, select

from app.core import clock, jobs
from app.models.checks import CheckRun, StoredFinding
from app.models.watch import ChangeEvent
from app.registry.providers import create_provider
from tests.credentials.test_change_events import LICENCE

SERVER_CLOCK = datetime(2026, 6, 1, 17, 0, tzinfo=UTC)  # 01:00 on 2 June in Beijing
BEIJING_TODAY = date(2026, 6, 2)
SERVER_DATE = date(2026, 6, 1)  # the date on the server's clock, which licences do not expire by


def _text(response) -> str:
    """The visible text of a page, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)))


@pytest.fixture
def providers(session: Session) -> dict[str, int]:
    """One provider whose licence expired on the server's date (yesterday in Beijing), one expiring today."""
    made = {}
    for name, number, expires_on in (
        ("北京昨日到期算力有限公司", "京B1-20240001", SERVER_DATE),
        ("上海今日到期算力有限公司", "沪B1-20240002", BEIJING_TODAY),
    ):
        licence = {**LICENCE, "number_raw": number, "expires_on": expires_on.isoformat()}
        made[name] = create_provider(session, data={"legal_name": name, "licences": [licence]}).id
    return made


def _rules_found(session: Session, provider_id: int) -> set[str]:
    runs = session.exec(select(CheckRun).where(CheckRun.provider_id == provider_id)).all()
    assert runs and all(run.checked_on == BEIJING_TODAY for run in runs)  # the page's check and the daily one
    run = runs[-1]
    return set(session.exec(select(StoredFinding.rule_id).where(StoredFinding.check_run_id == run.id)).all())


def test_every_view_counts_the_beijing_date(app, session, login, providers, immediate_jobs):
    expired_id, today_id = providers["北京昨日到期算力有限公司"], providers["上海今日到期算力有限公司"]
    client = login("analyst")
    with clock.frozen(SERVER_CLOCK):
        assert clock.business_today() == BEIJING_TODAY
        expired_list = _text(client.get("/expiring?stage=expired"))
        for provider_id in providers.values():
            client.post(f"/providers/{provider_id}/credentials/check")
        with app.app_context():
            jobs.enqueue(session, kind="watch.daily", params={"period": BEIJING_TODAY.isoformat()})
        reports = {pid: _text(client.get(f"/providers/{pid}/report?lang=en")) for pid in providers.values()}

    assert "北京昨日到期算力有限公司" in expired_list and "上海今日到期算力有限公司" not in expired_list
    assert "已过期 1 天" in expired_list

    session.expire_all()
    assert "licence.expired" in _rules_found(session, expired_id)
    found_today = _rules_found(session, today_id)
    assert "licence.expired" not in found_today and "licence.expiring" in found_today

    events = {
        e.provider_id: e
        for e in session.exec(select(ChangeEvent).where(ChangeEvent.occurred_on == BEIJING_TODAY))
    }
    assert events[expired_id].kind == "expired"
    assert events[today_id].kind == "expiring" and events[today_id].details["days_left"] == 0

    assert f"expired on {SERVER_DATE}" in reports[expired_id]
    assert "expired on" not in reports[today_id]
