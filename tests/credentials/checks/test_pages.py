"""The credentials tab, the findings overview and the job pages, by role."""

from __future__ import annotations

import re
from datetime import date

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from app.core import jobs
from app.credentials import checks
from app.models import Provider
from app.models.jobs import Job, JobState
from app.registry.demo import load_demo


@pytest.fixture
def demo(session: Session) -> dict[str, int]:
    load_demo(session, today=date.today())
    return {p.legal_name: p.id for p in session.exec(select(Provider)).all()}


def text(response) -> str:
    """Visible text of a page, whitespace collapsed."""
    html = response.get_data(as_text=True)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_viewer_sees_the_tab_but_cannot_run_a_check(login, demo):
    client = login("viewer")
    url = f"/providers/{demo['虚构跨省数据科技有限公司']}/credentials"
    response = client.get(url)
    html = response.get_data(as_text=True)
    assert response.status_code == 200 and 'id="never-checked"' in html and 'id="run-check"' not in html
    assert "资质核查" in text(response)  # the tab label
    assert client.post(url + "/check").status_code == 403
    detail = client.get(f"/providers/{demo['虚构跨省数据科技有限公司']}").get_data(as_text=True)
    assert url in detail  # the provider page links the tab


def test_analyst_runs_a_check_and_sees_verdict_findings_evidence_and_history(login, demo, immediate_jobs):
    client = login("analyst")
    provider_id = demo["虚构跨省数据科技有限公司"]
    url = f"/providers/{provider_id}/credentials"
    assert 'id="run-check"' in client.get(url).get_data(as_text=True)
    response = client.post(url + "/check")
    assert response.status_code == 302 and re.search(rf"{url}\?job=\d+$", response.location)
    page = client.get(response.location)
    body, html = text(page), page.get_data(as_text=True)
    assert page.status_code == 200
    assert "不通过" in body and "verdict-fail" in html
    assert "跨省贵安机房" in body and "浙B1-" in body  # the message names the datacenter and the licence
    assert "dxzhgl.miit.gov.cn" in body  # how to verify by hand
    assert "机房 #" in body and "贵州" in body  # evidence: the registry values
    assert 'data-job-final="true"' in html and "已完成" in body  # the job that ran it, finished
    assert 'class="table align-middle mb-0 small check-history"' in html
    client.post(url + "/check")
    runs = checks.check_history(Session(immediate_jobs.extensions["gpuvet.engine"]), provider_id=provider_id)
    assert len(runs) == 2
    old = client.get(f"{url}?run={runs[1].id}")
    assert old.status_code == 200 and "这是历史核查记录" in text(old)
    assert client.get(f"{url}?run=abc").status_code == 404
    other = demo["虚构弹性算力有限公司"]
    assert client.get(f"/providers/{other}/credentials?run={runs[0].id}").status_code == 404


def test_tab_speaks_english_when_chosen(login, demo, immediate_jobs):
    client = login("analyst")
    provider_id = demo["虚构过期许可科技有限公司"]
    client.post(f"/providers/{provider_id}/credentials/check")
    client.get("/lang/en?next=/")
    body = text(client.get(f"/providers/{provider_id}/credentials"))
    assert "expired on" in body and "Look the company up by name" in body


def test_a_queued_check_shows_a_live_status_box_that_works_without_javascript(app, login, demo, session):
    client = login("analyst")  # no immediate mode: the job stays queued (no worker in this test)
    provider_id = demo["虚构黑盒算力有限公司"]
    response = client.post(f"/providers/{provider_id}/credentials/check")
    job_id = int(response.location.rsplit("=", 1)[1])
    html = client.get(response.location).get_data(as_text=True)
    assert f'data-job-url="/jobs/{job_id}.json"' in html and 'data-job-final="false"' in html
    assert "job-refresh" in html and "/static/jobs.js" in html and "排队中" in html
    assert "<script>" not in html  # CSP: no inline scripts
    status = client.get(f"/jobs/{job_id}.json")
    assert status.status_code == 200 and status.headers["Cache-Control"] == "no-store"
    assert status.get_json()["state"] == "queued" and status.get_json()["can_cancel"] is True
    assert client.get("/static/jobs.js").status_code == 200


def test_job_pages_and_cancel_by_role(app, login, demo, session):
    analyst = login("analyst")
    analyst.post(f"/providers/{demo['虚构黑盒算力有限公司']}/credentials/check")
    job = session.exec(select(Job)).one()
    viewer = login("viewer")
    assert viewer.get(f"/jobs/{job.id}").status_code == 200
    assert viewer.get("/jobs").status_code == 200 and "资质核查" in text(viewer.get("/jobs"))
    assert viewer.post(f"/jobs/{job.id}/cancel").status_code == 403
    assert (
        viewer.get("/jobs/999999").status_code == 404 and viewer.get("/jobs/999999.json").status_code == 404
    )
    cancelled = analyst.post(f"/jobs/{job.id}/cancel", data={"next": "//evil.example/"})
    assert cancelled.status_code == 302 and cancelled.location.endswith(f"/jobs/{job.id}")
    session.expire_all()
    assert session.get(Job, job.id).state == JobState.cancelled
    again = analyst.post(f"/jobs/{job.id}/cancel", follow_redirects=True)
    assert "无法取消" in text(again)


def test_failed_job_says_why(login, demo, immediate_jobs, session):
    client = login("analyst")
    provider_id = demo["虚构黑盒算力有限公司"]
    with immediate_jobs.app_context():
        job = jobs.enqueue(
            session, kind="vetting.check", params={"provider_id": 123456}, provider_id=provider_id
        )
    page = client.get(f"/providers/{provider_id}/credentials?job={job.id}")
    assert "失败" in text(page) and "供应商 123456 不存在" in text(page)
    assert client.get(f"/jobs/{job.id}.json").get_json()["error"].endswith("供应商 123456 不存在")


# ---------------------------------------------------------------- overview
def _check_all(session, demo, ids=None):
    for provider_id in ids or demo.values():
        checks.run_check(session, provider_id=provider_id)


def test_overview_lists_latest_verdicts_with_filters(login, demo, session):
    _check_all(session, demo)
    client = login("viewer")
    page = client.get("/findings?verdict=fail")
    body = text(page)
    assert (
        page.status_code == 200 and "虚构吊销通信有限公司" in body and "示例星河算力科技有限公司" not in body
    )
    expiring = text(client.get("/findings?view=findings&rule=licence.expiring"))
    assert (
        "虚构临期算力有限公司" in expiring and "天后" in expiring and "虚构吊销通信有限公司" not in expiring
    )
    province = text(client.get("/findings?province=四川"))
    assert "示例川云计算有限公司" in province and "虚构吊销通信有限公司" not in province
    paged = client.get("/findings?per_page=5&page=2")
    assert paged.status_code == 200 and "第 2/4 页" in text(paged)
    assert 'id="check-all"' not in paged.get_data(as_text=True)  # viewers cannot start the bulk check


def test_overview_reports_bad_filters_under_their_field(login, demo):
    client = login("viewer")
    response = client.get("/findings?verdict=maybe&rule=x&page=0")
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    for name in ("verdict", "rule", "page"):
        assert f'id="filter-{name}-error"' in html
    assert "needs_review" in html


def test_overview_statements_per_request_do_not_grow_with_rows(app, login, demo, session):
    client = login("viewer")
    engine = app.extensions["gpuvet.engine"]
    seen = []

    # The settings edited at run time are read through a 5-second cache: whether a request reads them
    # depends on the clock, not on the rows, so those statements are not counted.
    def count(_conn, _cursor, statement, *_rest) -> None:
        if "runtime_setting" not in statement:
            seen.append(1)

    sa.event.listen(engine, "before_cursor_execute", count)
    ids = list(demo.values())
    counts = []
    for batch in (ids[:2], ids[2:]):
        _check_all(session, demo, batch)
        for url in ("/findings?per_page=100", "/findings?view=findings&per_page=100"):
            seen.clear()
            assert client.get(url).status_code == 200
            counts.append(len(seen))
    assert counts[:2] == counts[2:], counts


def test_analyst_checks_every_provider_in_one_job(login, demo, immediate_jobs, session):
    client = login("analyst")
    assert 'id="check-all"' in client.get("/findings").get_data(as_text=True)
    response = client.post("/findings/check-all")
    assert response.status_code == 302 and "/jobs/" in response.location
    job = client.get(response.location + ".json").get_json()
    assert job["state"] == "succeeded" and job["result"]["checked"] == len(demo)
    assert job["progress"]["done"] == job["progress"]["total"] == len(demo)
    body = text(client.get("/findings?per_page=100"))
    assert f"共 {len(demo)} 家已核查的供应商" in body
    only_new = client.post("/findings/check-all", data={"only_unchecked": "y"})
    assert client.get(only_new.location + ".json").get_json()["result"]["checked"] == 0
