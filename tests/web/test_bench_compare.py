"""Two benchmark runs compared (issue 27 item 5): never a run against itself, what changed and by how
much (absolute and share), and which claim verdict moved."""

from __future__ import annotations

import pytest
from bs4 import BeautifulSoup

from app.registry.providers import create_provider
from app.trials import bench_uploads
from tests.benchmarks.conftest import DATA


@pytest.fixture
def offer(session):
    provider = create_provider(
        session,
        data={
            "legal_name": "示例对比算力有限公司",
            "offers": [{"gpu_model": "H800", "gpus_per_node": 8, "public_mbps": 1000, "intranet_gbps": 100}],
        },
    )
    return provider.offers[0]


def _upload(session, offer, name):
    return bench_uploads.upload_output(
        session, offer_id=offer.id, tool="ping", output=(DATA / name).read_bytes()
    )


@pytest.fixture
def two_runs(session, offer):
    """0 % loss, rtt avg 0.037 ms; then 33.3333 % loss (stored as 33.33), rtt avg 0.046 ms."""
    return _upload(session, offer, "ping_ok.txt"), _upload(session, offer, "ping_partial_loss.txt")


def _row(soup, metric):
    return [cell.get_text(" ", strip=True) for cell in soup.select_one(f'tr[data-metric="{metric}"]')("td")]


def test_changes_are_shown_with_their_size_and_direction(login, two_runs):
    first, second = two_runs
    client = login("viewer")
    # asked later-first: the page still puts the earlier run first, so the change reads forward in time
    page = client.get(f"/bench-runs/compare?a={second.id}&b={first.id}")
    assert page.status_code == 200
    soup = BeautifulSoup(page.get_data(as_text=True), "html.parser")
    # packet loss 0 % -> 33.33 %: a change of 33.33 percentage points, no share of a zero, and worse
    assert _row(soup, "packet_loss") == ["丢包率", "0%", "33.33%", "+33.33 个百分点", "", "变差"]
    # rtt 0.037 -> 0.046 ms, key figures kept to two decimals: 0.04 -> 0.05 ms, +0.01 ms, 0.01 / 0.04 = 25 %;
    # lower is better, so worse
    assert _row(soup, "rtt_avg") == ["平均延迟", "0.04 毫秒", "0.05 毫秒", "+0.01 毫秒", "+25%", "变差"]
    moved = soup.select_one('#verdict-summary li[data-check="ping_loss"]').get_text(" ", strip=True)
    assert "通过 → 不通过" in moved
    assert soup.select_one('#verdict-changes tr[data-check="ping_loss"]')["data-moved"] == "true"


def test_english_page_words_the_changes_in_english(login, two_runs):
    first, second = two_runs
    client = login("viewer")
    client.get("/lang/en")
    soup = BeautifulSoup(
        client.get(f"/bench-runs/compare?a={first.id}&b={second.id}").get_data(as_text=True), "html.parser"
    )
    assert _row(soup, "packet_loss")[3:] == ["+33.33 percentage points", "", "Worse"]
    moved = soup.select_one('#verdict-summary li[data-check="ping_loss"]')
    assert "Pass → Fail" in moved.get_text(" ", strip=True)


def test_a_run_is_never_compared_with_itself(login, two_runs):
    first, second = two_runs
    client = login("viewer")
    page = client.get(f"/bench-runs/compare?a={first.id}&b={first.id}")
    assert page.status_code == 400
    soup = BeautifulSoup(page.get_data(as_text=True), "html.parser")
    assert "不能与自身对比" in soup.select_one("#compare-refused").get_text()
    assert soup.select_one("#compare") is None
    # the picker offers the other run as the second one, never the first again
    assert [o["value"] for o in soup.select("#cmp-b option")] == [str(second.id)]
    # on a proper pair, neither picker offers the run the other side already shows
    soup = BeautifulSoup(
        client.get(f"/bench-runs/compare?a={first.id}&b={second.id}").get_data(as_text=True), "html.parser"
    )
    assert [o["value"] for o in soup.select("#cmp-a option")] == [str(first.id)]
    assert [o["value"] for o in soup.select("#cmp-b option")] == [str(second.id)]


def test_the_trial_tab_offers_no_comparison_for_a_single_run(login, session, offer):
    _upload(session, offer, "ping_ok.txt")
    tab = login("viewer").get(f"/providers/{offer.provider_id}/trials").get_data(as_text=True)
    assert 'id="compare-form"' not in tab
    _upload(session, offer, "ping_partial_loss.txt")
    tab = login("viewer", "viewer2").get(f"/providers/{offer.provider_id}/trials").get_data(as_text=True)
    assert 'id="compare-form"' in tab
