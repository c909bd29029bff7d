"""The provider's compare tab (issue 27 items 5 and 11): never a run against itself, subjects in words."""

from __future__ import annotations

from bs4 import BeautifulSoup
from sqlmodel import Session

from app.models.checks import CheckRun, StoredFinding
from app.registry import providers
from tests.credentials.checks.test_compare_runs import stored_run
from tests.web.conftest import provider_data


def _finding(session: Session, run: CheckRun, subject: str) -> None:
    session.add(
        StoredFinding(
            check_run_id=run.id,
            provider_id=run.provider_id,
            position=9,
            rule_id="bench.bandwidth_low",
            severity="warning",
            subject=subject,
            message_zh="带宽低于标称",
            message_en="bandwidth below the claim",
        )
    )
    session.commit()


def test_a_run_is_not_compared_with_itself_and_not_offered_against_itself(login, session):
    provider = providers.create_provider(session, data=provider_data(legal_name="成都自比算力有限公司"))
    first = stored_run(session, provider.id, "pass", {}, hours_ago=5)
    second = stored_run(session, provider.id, "fail", {"licence.expiring": "blocker"}, hours_ago=1)
    client = login("viewer")
    same = client.get(f"/providers/{provider.id}/compare?a=run:{second.id}&b=run:{second.id}")
    assert same.status_code == 400
    soup = BeautifulSoup(same.get_data(as_text=True), "html.parser")
    assert "不能与自身对比" in soup.select_one(".compare-error").get_text()
    assert soup.select_one("#compare-summary") is None
    # the earlier side's picker leaves out the run the later side shows
    assert [o["value"] for o in soup.select("#pick-a option")] == [f"run:{first.id}"]
    page = client.get(f"/providers/{provider.id}/compare").get_data(as_text=True)
    soup = BeautifulSoup(page, "html.parser")
    assert [o["value"] for o in soup.select("#pick-a option")] == [f"run:{first.id}"]
    assert [o["value"] for o in soup.select("#pick-b option")] == [f"run:{second.id}"]


def test_a_findings_subject_is_named_not_keyed(login, session):
    provider = providers.create_provider(session, data=provider_data(legal_name="成都主题算力有限公司"))
    stored_run(session, provider.id, "pass", {}, hours_ago=5)
    second = stored_run(session, provider.id, "needs_review", {}, hours_ago=1)
    _finding(session, second, "bench_run:3")
    client = login("viewer")
    html = client.get(f"/providers/{provider.id}/compare").get_data(as_text=True)
    assert "bench_run:3" not in html
    row = BeautifulSoup(html, "html.parser").select_one('tr[data-rule="bench.bandwidth_low"]')
    assert "测试 #3" in row.get_text(" ", strip=True)
    client.get("/lang/en")
    html = client.get(f"/providers/{provider.id}/compare").get_data(as_text=True)
    row = BeautifulSoup(html, "html.parser").select_one('tr[data-rule="bench.bandwidth_low"]')
    assert "Run #3" in row.get_text(" ", strip=True)
