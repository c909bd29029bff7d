"""Peak-hour campaigns without SSH: planning in local time, bad input, claiming a window once, missed
windows, cancellation, the verdict reaching the provider's check, and the pages, API and CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from bs4 import BeautifulSoup
from sqlmodel import Session, func, select

from app.core import clock as localtime
from app.core.errors import Conflict, InvalidInput
from app.credentials import checks
from app.models.campaigns import BenchCampaign, CampaignWindow
from app.models.checks import StoredFinding
from app.models.jobs import Job, JobState
from app.models.trials import BenchRun, RunState, TrialServer
from app.notify import schedules
from app.reports.evidence_text import fact_text
from app.reports.labels import Labels
from app.trials import campaign_reads, campaigns
from app.trials import servers as trials

SHANGHAI = localtime._zone("Asia/Shanghai")
FINGERPRINT = "SHA256:" + "A" * 43
# 2026-12-01 19:00 in Shanghai: the first peak window opens at 20:00, the first off-peak at 03:00 next day
BEFORE = datetime(2026, 12, 1, 19, 0, tzinfo=SHANGHAI)
REPEATS = "params.stability_repeats"


def local(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=SHANGHAI)


@pytest.fixture
def server(session: Session, provider, offer, cipher, policy) -> TrialServer:
    """A trial server with a pinned host key (nothing listens: no run here reaches SSH)."""
    data = {
        "name": "试用机 P",
        "host": "127.0.0.1",
        "port": 22,
        "username": "root",
        "auth_method": "password",
        "password": "s3cret",
        "offer_id": offer.id,
    }
    created = trials.create_server(session, provider_id=provider.id, data=data, cipher=cipher, policy=policy)
    return trials.pin_host_key(session, server_id=created.id, fingerprint=FINGERPRINT)


def windows(session: Session, campaign: BenchCampaign) -> list[tuple[str, str, str]]:
    """(kind, local start, state) of each window in time order."""
    session.expire_all()
    return [
        (w.kind, localtime.aware(w.starts_at).astimezone(SHANGHAI).strftime("%m-%d %H:%M"), w.state)
        for w in campaign_reads.windows_of(session, campaign_id=campaign.id)
    ]


def count(session: Session, model, *where) -> int:
    return session.exec(select(func.count()).select_from(model).where(*where)).one()


def test_windows_are_planned_in_local_time(session: Session, server: TrialServer):
    campaign = campaigns.create_campaign(session, server_id=server.id, days=2, now=BEFORE)
    assert (campaign.peak_window, campaign.offpeak_window, campaign.timezone) == (
        "20:00-23:00",
        "03:00-06:00",
        "Asia/Shanghai",
    )
    assert windows(session, campaign) == [
        ("peak", "12-01 20:00", "planned"),
        ("offpeak", "12-02 03:00", "planned"),
        ("peak", "12-02 20:00", "planned"),
        ("offpeak", "12-03 03:00", "planned"),
    ]
    ends = [
        localtime.aware(w.ends_at) - localtime.aware(w.starts_at) for w in campaign_windows(session, campaign)
    ]
    assert ends == [timedelta(hours=3)] * 4
    campaigns.cancel_campaign(session, campaign_id=campaign.id)

    # after midnight, a window across midnight that is still open is the first one
    crossing = campaigns.create_campaign(
        session,
        server_id=server.id,
        days=1,
        peak="23:00-01:00",
        offpeak="04:00-05:00",
        now=local("2026-12-02 00:30"),
    )
    assert windows(session, crossing) == [
        ("peak", "12-01 23:00", "planned"),
        ("offpeak", "12-02 04:00", "planned"),
    ]


def campaign_windows(session: Session, campaign: BenchCampaign) -> list[CampaignWindow]:
    return campaign_reads.windows_of(session, campaign_id=campaign.id)


BAD_INPUT = [
    ({"days": 0}, {"days"}),
    ({"days": 15}, {"days"}),
    ({"days": "three"}, {"days"}),
    ({"days": 2, "peak": "25:00-26:00"}, {"peak"}),
    ({"days": 2, "peak": "20:00-20:00"}, {"peak"}),
    ({"days": 2, "offpeak": "21:00-22:00"}, {"offpeak"}),  # overlaps the peak window
    ({"days": 2, "params": {"stability_repeats": 1}}, {REPEATS}),
    # 7 tests of 10 s, 5 minutes apart, take 31 minutes: longer than a half-hour window
    ({"days": 2, "offpeak": "04:00-04:30", "params": {"stability_repeats": 7}}, {REPEATS}),
    ({"days": 99, "peak": "x", "params": {"nope": 1}}, {"days", "peak", "params.nope"}),
]


def test_bad_input_names_every_field_and_one_campaign_runs_at_a_time(session: Session, server: TrialServer):
    for values, fields in BAD_INPUT:
        with pytest.raises(InvalidInput) as caught:
            campaigns.create_campaign(session, server_id=server.id, now=BEFORE, **values)
        assert {error.field for error in caught.value.errors} == fields, values
    assert count(session, BenchCampaign) == 0
    campaigns.create_campaign(session, server_id=server.id, days=1, now=BEFORE)
    with pytest.raises(Conflict):
        campaigns.create_campaign(session, server_id=server.id, days=1, now=BEFORE)
    server.host_key_fingerprint = None
    session.add(server)
    session.commit()
    with pytest.raises(InvalidInput) as caught:
        campaigns.create_campaign(session, server_id=server.id, days=1, now=BEFORE)
    assert caught.value.errors[0].field == "host_key_fingerprint"


def test_the_tick_starts_a_due_window_once(app, session: Session, server: TrialServer):
    campaign = campaigns.create_campaign(session, server_id=server.id, days=1, now=BEFORE)
    at_peak = local("2026-12-01 20:00")
    with app.app_context():  # the real queue, no worker: the window's job waits
        assert campaigns.tick(session, local("2026-12-01 19:59")) == []
        [job] = schedules.tick(session, at_peak)[-1:]
        assert job.kind == campaigns.WINDOW_KIND
        assert campaigns.tick(session, at_peak + timedelta(minutes=1)) == []
        with Session(app.extensions["gpuvet.engine"]) as second_worker:
            assert campaigns.tick(second_worker, at_peak + timedelta(minutes=2)) == []
    assert count(session, BenchRun) == 1 and count(session, Job, Job.kind == campaigns.WINDOW_KIND) == 1
    [run] = session.exec(select(BenchRun)).all()
    assert (run.suite, run.state, run.job_id) == ("stability", RunState.queued, job.id)
    assert job.params == {"window_id": campaign_windows(session, campaign)[0].id, "run_id": run.id}
    assert windows(session, campaign)[0] == ("peak", "12-01 20:00", "running")


def test_windows_passed_without_a_worker_are_missed(app, session: Session, server: TrialServer, login):
    campaign = campaigns.create_campaign(session, server_id=server.id, days=2, now=BEFORE)
    with app.app_context():
        schedules.tick(session, local("2026-12-01 20:05"))  # the first window's run is queued ...
        campaigns.tick(session, local("2026-12-04 12:00"))  # ... and no worker ran until days later
    assert [state for _kind, _start, state in windows(session, campaign)] == ["missed"] * 4
    [run] = session.exec(select(BenchRun)).all()
    assert run.state == RunState.cancelled  # it never ran late, outside its window
    assert session.get(Job, run.job_id).state == JobState.cancelled
    session.refresh(campaign)
    assert campaign.state == "finished" and campaign.result["verdict"] == "info"
    html = login("viewer").get(f"/campaigns/{campaign.id}").get_data(as_text=True)
    page = BeautifulSoup(html, "html.parser")
    assert {cell.get_text() for cell in page.select("#windows td.note")} == {"窗口结束时没有 worker 运行"}
    assert page.select_one("#verdict")["data-verdict"] == "info" and page.select_one("#no-chart") is not None


def test_cancelling_stops_the_queued_run_and_the_planned_windows(app, session: Session, server, login):
    campaign = campaigns.create_campaign(session, server_id=server.id, days=2, now=BEFORE)
    with app.app_context():
        campaigns.tick(session, local("2026-12-01 20:05"))
    client = login("analyst")
    page = client.post(f"/campaigns/{campaign.id}/cancel", follow_redirects=True)
    assert page.status_code == 200
    assert [state for _kind, _start, state in windows(session, campaign)] == ["cancelled"] * 4
    [run] = session.exec(select(BenchRun)).all()
    assert run.state == RunState.cancelled and session.get(Job, run.job_id).state == JobState.cancelled
    session.refresh(campaign)
    assert campaign.state == "cancelled"
    again = client.post(f"/campaigns/{campaign.id}/cancel", follow_redirects=True).get_data(as_text=True)
    assert "高峰测试已结束，无法取消" in again
    with app.app_context():
        assert campaigns.tick(session, local("2026-12-02 20:05")) == []  # nothing starts any more


def peak_findings(session: Session, run) -> list[StoredFinding]:
    """The check run's "sags at peak" findings."""
    statement = select(StoredFinding).where(
        StoredFinding.check_run_id == run.id, StoredFinding.rule_id == "benchmarks.sags_at_peak"
    )
    return list(session.exec(statement).all())


def sagging(session: Session, server: TrialServer) -> BenchCampaign:
    """A finished demo campaign: about 930 Mbit/s at night, 400-530 in the evening."""
    return campaigns.demo_campaign(session, server_id=server.id, now=datetime(2026, 12, 10, tzinfo=UTC))


def test_a_peak_sag_is_red_flag_12_in_the_provider_check(app, session: Session, server: TrialServer, login):
    campaign = sagging(session, server)
    result = campaign.result
    assert result["verdict"] == "fail" and result["red_flag"] == 12
    assert result["peak"]["count"] == result["offpeak"]["count"] == 12
    assert result["share"] == pytest.approx(result["peak"]["median"] / result["offpeak"]["median"], abs=1e-3)
    assert {row["hour"] for row in result["by_hour"]} == {20, 21, 22, 3, 4, 5}  # spread over the windows
    with app.app_context():
        run = checks.run_check(session, provider_id=server.provider_id)
    [finding] = peak_findings(session, run)
    assert (finding.severity, finding.red_flag) == ("warning", 12) and "低于 70%" in finding.message_zh
    assert finding.evidence[0]["campaign_id"] == campaign.id
    page = login("viewer").get(f"/providers/{server.provider_id}/credentials").get_data(as_text=True)
    assert f'href="/campaigns/{campaign.id}"' in page  # the finding's evidence links to the campaign
    in_report = fact_text(finding.evidence[0], Labels("en"))  # and reads as text in an exported report
    assert in_report.startswith(f"peak-hour campaign #{campaign.id} · peak median: 451.9 Mbit/s")
    assert in_report.endswith("peak / off-peak: 48% (threshold 70%)")


def test_an_even_campaign_is_not_flagged(app, session: Session, server: TrialServer):
    steady = [[930.0, 925.5, 931.2]] * 2
    campaign = campaigns.demo_campaign(
        session, server_id=server.id, peak_mbps=[[900.0, 880.0, 910.0]] * 2, offpeak_mbps=steady
    )
    assert campaign.result["verdict"] == "pass" and campaign.result["red_flag"] is None
    with app.app_context():
        run = checks.run_check(session, provider_id=server.provider_id)
    assert peak_findings(session, run) == []


def test_campaign_page_shows_figures_chart_and_verdict(session: Session, server, login):
    campaign = sagging(session, server)
    client = login("viewer")
    words = {
        "zh": ("晚高峰带宽下降（红旗 12）", "演示数据"),
        "en": ("Bandwidth sags at peak (red flag 12)", "Demo data"),
    }
    for language, (verdict, demo) in words.items():
        client.get(f"/lang/{language}?next=/")
        html = client.get(f"/campaigns/{campaign.id}").get_data(as_text=True)
        soup = BeautifulSoup(html, "html.parser")
        assert soup.select_one("#verdict")["data-verdict"] == "fail"
        assert verdict in soup.select_one("#verdict").get_text() and demo in html
        assert "70%" in soup.select_one("#verdict").get_text()  # the threshold as a figure, not its key
        assert "peak_min_share" not in html and "benchmarks.yaml" not in html
        peak = soup.select_one('#figures tr[data-kind="peak"]')
        assert peak.select_one(".count").get_text() == "12"
        assert soup.select_one("#chart svg") is not None
        assert len(soup.select("#windows tr[data-window]")) == 6
        assert soup.select_one("#cancel-campaign") is None  # finished: nothing to cancel


def test_server_page_card_plans_a_campaign_and_reports_bad_input(session: Session, server, login):
    client = login("analyst")
    page = BeautifulSoup(client.get(f"/trial-servers/{server.id}").get_data(as_text=True), "html.parser")
    form = page.select_one("#campaign-form")
    assert form["action"] == f"/trial-servers/{server.id}/campaigns"
    assert form.select_one("#c-peak")["value"] == "20:00-23:00"
    bad = client.post(form["action"], data={"days": "30", "peak": "20:00-23:00", "offpeak": "3-6"})
    assert bad.status_code == 422
    soup = BeautifulSoup(bad.get_data(as_text=True), "html.parser")
    assert "1 到 14" in soup.select_one("#c-days-error").get_text()
    assert "时:分-时:分" in soup.select_one("#c-offpeak-error").get_text()
    made = client.post(form["action"], data={"days": "2", "peak": "19:30-22:30", "offpeak": "02:00-05:00"})
    assert made.status_code == 302
    [campaign] = session.exec(select(BenchCampaign)).all()
    assert made.headers["Location"].endswith(f"/campaigns/{campaign.id}")
    assert (campaign.days, campaign.peak_window, campaign.created_by_name) == (2, "19:30-22:30", "analyst")
    listed = BeautifulSoup(client.get(f"/trial-servers/{server.id}").get_data(as_text=True), "html.parser")
    assert listed.select_one(f'#campaign-list tr[data-campaign="{campaign.id}"]') is not None
    assert client.get(f"/trial-servers/{server.id}/campaigns/new").status_code == 200

    viewer = login("viewer", "viewer")
    assert viewer.post(f"/trial-servers/{server.id}/campaigns", data={"days": "1"}).status_code == 403
    assert viewer.post(f"/campaigns/{campaign.id}/cancel").status_code == 403
    seen = BeautifulSoup(viewer.get(f"/trial-servers/{server.id}").get_data(as_text=True), "html.parser")
    assert seen.select_one("#campaign-form") is None and seen.select_one("#campaign-list") is not None


def test_api_and_cli(app, session: Session, server, token_for):
    client = app.test_client()
    headers = token_for("analyst")
    bad = client.post(
        f"/api/v1/trial-servers/{server.id}/campaigns", json={"days": 0, "when": 1}, headers=headers
    )
    assert bad.status_code == 422
    assert {error["field"] for error in bad.get_json()["errors"]} >= {"when"}
    made = client.post(
        f"/api/v1/trial-servers/{server.id}/campaigns",
        json={"days": 1, "params": {"stability_repeats": 3}},
        headers=headers,
    )
    assert made.status_code == 201, made.get_json()
    body = made.get_json()
    assert (
        body["state"] == "active" and len(body["windows"]) == 2 and body["params"] == {"stability_repeats": 3}
    )
    assert client.get(made.headers["Location"], headers=token_for("viewer")).get_json()["id"] == body["id"]
    cancelled = client.post(f"/api/v1/campaigns/{body['id']}/cancel", headers=headers)
    assert cancelled.get_json()["state"] == "cancelled"
    assert client.post(f"/api/v1/campaigns/{body['id']}/cancel", headers=headers).status_code == 409

    result = app.test_cli_runner().invoke(
        args=["bench", "campaign", str(server.id), "--days", "3", "--peak", "21:00-23:00"]
    )
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert (printed["days"], printed["peak"], len(printed["windows"])) == (3, "21:00-23:00", 6)
    refused = app.test_cli_runner().invoke(args=["bench", "campaign", str(server.id), "--days", "20"])
    assert refused.exit_code == 1 and "days" in refused.output
