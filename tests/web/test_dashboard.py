"""The dashboard (home page): every figure counted from real rows, linked to the list that shows those rows,
in a constant number of SQL statements; the lists' filters; bad filters named, never a server error."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from html import unescape

import pytest
import sqlalchemy as sa
from sqlmodel import Session

from app.core import clock
from app.models import Certification, Licence
from app.models.checks import CheckRun
from app.models.disclosure import Invitation
from app.models.evidence import Lookup
from app.models.jobs import Job
from app.models.reports import ExportRecord
from app.models.trials import BenchRun
from app.models.watch import ChangeEvent
from app.registry import dashboard

NOW = datetime.now(UTC)
FIGURE = re.compile(
    r'<a class="dash-figure[^"]*"\s+data-figure="([^"]+)" href="([^"]+)">\s*'
    r'<span class="dash-value[^"]*">(\d+)</span>'
)


def figures(html: str) -> dict[str, tuple[int, str]]:
    """{figure name: (number, link)} of the dashboard's linked figures."""
    return {name: (int(value), unescape(href)) for name, href, value in FIGURE.findall(html)}


def run(session: Session, provider_id: int, verdict: str, days_ago: float) -> CheckRun:
    """A stored check run of `provider_id`, made `days_ago` days ago."""
    at = NOW - timedelta(days=days_ago)
    stored = CheckRun(
        provider_id=provider_id,
        verdict=verdict,
        checked_on=at.date(),
        rules_version="test",
        created_at=at,
    )
    session.add(stored)
    session.commit()
    return stored


@pytest.fixture
def world(session: Session, make_provider):
    """Four providers (fail, stale needs-review, pass, never checked) and one row of everything else."""
    today = clock.business_today()
    failing = make_provider(legal_name="北京失败算力有限公司", uscc=None)
    stale = make_provider(legal_name="上海陈旧算力有限公司")
    passing = make_provider(legal_name="广州通过算力有限公司")
    never = make_provider(legal_name="成都未查算力有限公司")
    run(session, failing.id, "pass", 3)
    run(session, failing.id, "fail", 1)  # the latest run counts
    run(session, stale.id, "needs_review", 40)
    run(session, passing.id, "pass", 2)
    for provider_id, number, days in (
        (failing.id, "京B1-20190001", -3),
        (stale.id, "沪B1-20190002", 5),
        (passing.id, "粤B1-20190003", 20),
        (passing.id, "粤B2-20190004", 200),  # outside the 90-day horizon
    ):
        session.add(
            Licence(provider_id=provider_id, number_raw=number, expires_on=today + timedelta(days=days))
        )
    session.add(Certification(provider_id=never.id, kind="iso27001", expires_on=today + timedelta(days=60)))
    session.add(Lookup(provider_id=stale.id, kind="icp", query="沪ICP备1号", state="awaiting_answer"))
    session.add(Lookup(provider_id=stale.id, kind="icp", query="沪ICP备2号", state="completed"))
    session.add(Job(kind="vetting.check", state="running"))
    session.add(Job(kind="vetting.check", state="queued"))
    session.add(Job(kind="vetting.check", state="failed", error="boom"))
    session.add(Job(kind="vetting.check", state="failed", created_at=NOW - timedelta(days=30)))
    session.add(BenchRun(provider_id=passing.id, suite="quick", state="running", origin="uploaded"))
    session.add(BenchRun(provider_id=passing.id, suite="quick", state="failed", origin="uploaded"))
    session.add(
        ChangeEvent(
            provider_id=failing.id,
            kind="verdict_changed",
            dedupe_key="t:1",
            severity="warning",
            message_zh="核查结论由“通过”变为“不通过”",
            message_en="verdict changed from pass to fail",
            occurred_on=today,
        )
    )
    session.add(
        ExportRecord(
            number="GV-2026-000001",
            year=2026,
            seq=1,
            kind="provider",
            subject_id=passing.id,
            subject_name=passing.legal_name,
            provider_id=passing.id,
            language="zh",
            created_by="analyst",
            pages=1,
            size_bytes=4,
            sha256="0" * 64,
            inputs_sha256="0" * 64,
            pdf_bytes=b"%PDF",
        )
    )
    for status, expires in (("sent", 5), ("submitted", 5), ("submitted", -1), ("reviewed", 5)):
        session.add(
            Invitation(
                provider_id=never.id,
                legal_name=never.legal_name,
                token_hash=f"{status}{expires}".ljust(64, "0"),
                status=status,
                expires_at=NOW + timedelta(days=expires),
            )
        )
    session.commit()
    return {"failing": failing, "stale": stale, "passing": passing, "never": never}


EXPECTED = {
    "verdict-fail": 1,
    "verdict-needs_review": 1,
    "verdict-pass": 1,
    "verdict-unchecked": 1,
    "checked-never": 1,
    "checked-stale": 1,
    "expiry-expired": 1,
    "expiry-7": 1,
    "expiry-30": 1,
    "expiry-90": 1,
    "lookups-awaiting": 1,
    "jobs-active": 2,
    "jobs-failed": 1,
    "runs-active": 1,
    "runs-failed": 1,
}
# What the list behind each figure shows, as a pattern counted in its HTML.
ROW_PATTERNS = {
    "verdict": r'<a class="fw-semibold" href="/providers/\d+">',
    "checked": r'<a class="fw-semibold" href="/providers/\d+">',
    "expiry": r'<tr class="expiring-row"',
    "lookups": r'<tr class="lookup-row"',
    "jobs": r'<tr>\s*<td><a href="/jobs/\d+">',
    "runs": r'<tr class="bench-run-row"',
}


def test_figures_count_rows_and_link_to_the_same_rows(login, world):
    client = login("viewer")
    response = client.get("/")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    found = figures(html)
    assert {name: value for name, (value, _link) in found.items()} == EXPECTED
    for name, (value, link) in found.items():
        listed = client.get(link)
        assert listed.status_code == 200, (name, link)
        rows = re.findall(ROW_PATTERNS[name.split("-")[0]], listed.get_data(as_text=True))
        assert len(rows) == value, (name, link)
    assert found["verdict-fail"][1] == "/providers?verdict=fail"
    assert found["jobs-failed"][1] == "/jobs?state=failed&days=7"
    fail_list = client.get("/providers?verdict=fail").get_data(as_text=True)
    assert "北京失败算力有限公司" in fail_list and "广州通过算力有限公司" not in fail_list
    stale_list = client.get(found["checked-stale"][1]).get_data(as_text=True)
    assert "上海陈旧算力有限公司" in stale_list


def test_recent_events_exports_and_pending_invitations(login, world):
    analyst = login("analyst")
    html = analyst.get("/").get_data(as_text=True)
    assert "核查结论由“通过”变为“不通过”" in html and 'href="/changes"' in html
    assert "GV-2026-000001" in html and 'href="/reports"' in html
    invitations = re.search(
        r'<ul class="list-unstyled mb-0 small pending-invitations">(.*?)</ul>', html, re.S
    )
    # sent (link valid) and both submitted ones (waiting on the analyst); not reviewed
    assert invitations and invitations.group(1).count("<li") == 3
    assert re.search(r'data-figure="invitations-pending"[^>]*>\s*<span class="dash-value[^"]*">3<', html)
    assert figures(html)["invitations-pending"] == (3, "/invitations?status=pending")
    listed = analyst.get("/invitations?status=pending").get_data(as_text=True)
    assert listed.count("成都未查算力有限公司") >= 3
    changes = analyst.get("/changes?kind=verdict_changed").get_data(as_text=True)
    assert changes.count('<tr class="change-event"') == 1
    assert analyst.get("/reports").get_data(as_text=True).count('<tr class="export-row"') == 1
    # a viewer sees the number but no link to the invitation list (analysts only)
    viewer = login("viewer").get("/").get_data(as_text=True)
    assert "invitations-pending" not in figures(viewer) and 'data-figure="invitations-pending"' in viewer


def test_stale_days_is_configurable(login, world, app):
    client = login("viewer")
    assert figures(client.get("/?stale_days=1").get_data(as_text=True))["checked-stale"][0] == 3
    app.config["GPUVET_SETTINGS"] = app.config["GPUVET_SETTINGS"].model_copy(
        update={"dashboard_stale_days": 50}
    )
    found = figures(client.get("/").get_data(as_text=True))
    assert found["checked-stale"] == (0, "/providers?checked=stale&stale_days=50")


def test_old_list_links_are_redirected(login):
    response = login("viewer").get("/?q=星河&status=approved")
    assert response.status_code == 301
    assert response.headers["Location"].startswith("/providers?")
    assert "status=approved" in response.headers["Location"]


BAD_FILTERS = [
    ("/providers?verdict=great", "verdict"),
    ("/providers?checked=yesterday", "checked"),
    ("/providers?checked=stale&stale_days=0", "stale_days"),
    ("/?stale_days=abc", "stale_days"),
    ("/jobs?state=exploded", "state"),
    ("/jobs?days=-1", "days"),
    ("/changes?kind=nothing", "kind"),
    ("/changes?provider_id=x", "provider_id"),
    ("/lookups?state=asleep", "state"),
    ("/bench-runs?state=asleep", "state"),
    ("/expiring?stage=5", "stage"),
    ("/reports?page=zero", "page"),
]


def test_bad_filters_are_named(login):
    client = login("viewer")
    for url, field in BAD_FILTERS:
        response = client.get(url)
        assert response.status_code == 422, url
        assert field in response.get_data(as_text=True), url


def _statements(session: Session) -> int:
    count = 0

    def _count(*_args):
        nonlocal count
        count += 1

    engine = session.get_bind()
    sa.event.listen(engine, "before_cursor_execute", _count)
    try:
        dashboard.dashboard(session)
    finally:
        sa.event.remove(engine, "before_cursor_execute", _count)
    return count


def test_constant_statements(session, world, make_provider):
    before = _statements(session)
    for index in range(6):
        extra = make_provider(legal_name=f"杭州新增算力第{index}有限公司")
        for days in (1, 2, 3):
            run(session, extra.id, "pass", days)
    session.expire_all()
    assert _statements(session) == before <= 7
    board = dashboard.dashboard(session)
    assert board.providers == 10 and board.verdicts["pass"] == 7


def test_expiry_stages_are_exclusive():
    today = date(2026, 12, 1)
    assert dashboard.expiry_range("7", today) == (today, today + timedelta(days=7))
    assert dashboard.expiry_range("30", today) == (today + timedelta(days=8), today + timedelta(days=30))
    assert dashboard.expiry_range("expired", today) == (None, today - timedelta(days=1))


def test_api_list_filters_by_verdict_and_check_age(app, world, token_for):
    client, headers = app.test_client(), token_for("viewer")

    def names(query: str) -> set[str]:
        response = client.get(f"/api/v1/providers?{query}", headers=headers)
        assert response.status_code == 200, response.get_json()
        return {item["legal_name"] for item in response.get_json()["items"]}

    assert names("verdict=fail") == {"北京失败算力有限公司"}
    assert names("verdict=unchecked") == names("checked=never") == {"成都未查算力有限公司"}
    assert names("checked=stale&stale_days=30") == {"上海陈旧算力有限公司"}
    refused = client.get("/api/v1/providers?verdict=great", headers=headers)
    assert refused.status_code == 422 and refused.get_json()["errors"][0]["field"] == "verdict"
