"""The provider list's verdicts (issue 27 item 13): a pill that does not wrap, sorting by verdict, and
filters by verdict, by never checked (未核验) and by credentials not verified at their source."""

from __future__ import annotations

from bs4 import BeautifulSoup

from app.registry import providers
from tests.credentials.checks.test_compare_runs import stored_run
from tests.web.conftest import provider_data


def _names(client, query: str) -> list[str]:
    soup = BeautifulSoup(client.get(f"/providers?{query}").get_data(as_text=True), "html.parser")
    return [link.get_text() for link in soup.select("table.providers td a.fw-semibold")]


def _make(session):
    """甲 fails, 乙 passes with its licence not verified at the source, 丙 needs review, 丁 never checked."""
    made = {}
    for name in ("甲", "乙", "丙", "丁"):
        made[name] = providers.create_provider(
            session, data=provider_data(legal_name=f"{name}列表算力有限公司")
        )
    stored_run(session, made["甲"].id, "fail", {}, hours_ago=2)
    stored_run(session, made["乙"].id, "pass", {}, hours_ago=2)
    stored_run(session, made["丙"].id, "needs_review", {}, hours_ago=2)
    return made


def test_sorted_by_verdict_worst_or_best_first(login, session):
    _make(session)
    client = login("viewer")
    assert _names(client, "sort=verdict") == [
        "甲列表算力有限公司",
        "丙列表算力有限公司",
        "乙列表算力有限公司",
        "丁列表算力有限公司",
    ]
    assert _names(client, "sort=-verdict") == [
        "乙列表算力有限公司",
        "丙列表算力有限公司",
        "甲列表算力有限公司",
        "丁列表算力有限公司",
    ]


def test_filtered_by_verdict_never_checked_and_not_verified(login, session):
    _make(session)
    client = login("viewer")
    assert _names(client, "verdict=fail") == ["甲列表算力有限公司"]
    assert _names(client, "verdict=unchecked") == ["丁列表算力有限公司"]
    # 乙 passes and 丙 needs review on registry data alone: nothing was verified at its source
    assert sorted(_names(client, "verdict=unverified")) == ["丙列表算力有限公司", "乙列表算力有限公司"]
    assert _names(client, "verdict=unverified&q=乙") == ["乙列表算力有限公司"]
    assert client.get("/providers?verdict=maybe").status_code == 422
    soup = BeautifulSoup(client.get("/providers").get_data(as_text=True), "html.parser")
    offered = {option["value"]: option.get_text() for option in soup.select("#verdict option")}
    assert offered["unchecked"].startswith("未核验") and "unverified" in offered


def test_the_pill_is_one_short_word_with_what_was_not_verified_below(login, session):
    _make(session)
    client = login("viewer")
    soup = BeautifulSoup(client.get("/providers").get_data(as_text=True), "html.parser")
    pills = {
        pill.find_parent("tr").select_one("a.fw-semibold").get_text(): pill
        for pill in soup.select(".list-verdict")
    }
    assert pills["甲列表算力有限公司"].get_text() == "不通过"
    assert pills["丁列表算力有限公司"].get_text() == "未核验"
    passed = pills["乙列表算力有限公司"]
    assert passed.get_text() == "通过" and "text-nowrap" in passed["class"]
    assert "未核实" in passed["title"]  # the whole worded verdict stays at hand
    assert "未经官方核实" in passed.find_parent("td").select_one(".unverified-note").get_text()
    client.get("/lang/en")
    soup = BeautifulSoup(client.get("/providers").get_data(as_text=True), "html.parser")
    assert sorted(pill.get_text() for pill in soup.select(".list-verdict")) == [
        "Fail",
        "Needs review",
        "Not verified",
        "Pass",
    ]
