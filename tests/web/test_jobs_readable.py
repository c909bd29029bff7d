"""Job pages read as words: the subject by name, labelled fields, local labelled times, no JSON escapes."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from app.core import jobs
from tests.core.jobs.fixtures import immediate_jobs  # noqa: F401 - fixture

pytestmark = pytest.mark.usefixtures("immediate_jobs")

ISO_MICROSECONDS = re.compile(r"\d{2}:\d{2}:\d{2}\.\d{3,6}")
ISO_T = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}")


def _visible(html: str) -> str:
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style"]):
        tag.decompose()
    return soup.get_text(" ")


def _page(client, path: str, language: str) -> tuple[str, str]:
    client.get(f"/lang/{language}?next=/jobs")
    html = client.get(path).get_data(as_text=True)
    return html, _visible(html)


def _no_developer_text(html: str, text: str) -> None:
    assert "\\u" not in html, "a JSON \\u escape reached the page"
    assert not ISO_MICROSECONDS.search(html), "an ISO time with microseconds reached the page"
    assert not ISO_T.search(text), "a raw ISO time is shown"


def test_check_job_names_its_provider_and_labels_its_result(app, session, login, make_provider):
    provider = make_provider(legal_name="北京官方示例科技有限公司", short_name="官方示例")
    with app.app_context():
        job = jobs.enqueue(
            session, kind="vetting.check", params={"provider_id": provider.id}, provider_id=provider.id
        )
    client = login("viewer")
    for language, title, verdict_word, label in (
        ("zh", "资质核查", "结论", "UTC+8"),
        ("en", "Credential check", "Verdict", "UTC+8"),
    ):
        html, text = _page(client, f"/jobs/{job.id}", language)
        _no_developer_text(html, text)
        assert "官方示例" in text and f'href="/providers/{provider.id}"' in html
        assert f"#{provider.id}" not in text.replace(f"#{job.id}", "")
        assert "vetting.check" not in text and title in text
        assert verdict_word in text and label in text
        assert "provider_id" not in text and "check_run_id" not in text
        assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\+8", text)
        html, text = _page(client, "/jobs", language)
        _no_developer_text(html, text)
        assert "官方示例" in text and f'href="/providers/{provider.id}"' in html
        assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\+8", text)


def test_failed_scrape_shows_chinese_text_and_evidence_links(app, session, login, make_provider):
    provider = make_provider(short_name="页脚示例")
    with app.app_context():
        job = jobs.enqueue(
            session,
            kind="scrape.footer",
            params={"provider_id": provider.id, "url": "http://127.0.0.1:9/"},
            provider_id=provider.id,
        )
    result = job.result
    assert result["ok"] is False and result["evidence_ids"], result
    client = login("admin")
    html, text = _page(client, f"/jobs/{job.id}", "zh")
    _no_developer_text(html, text)
    assert "回环地址" in text  # the service's Chinese error, as characters
    assert "是否成功" in text and "否" in text
    for evidence_id in result["evidence_ids"]:
        assert f'href="/evidence/{evidence_id}"' in html
    raw = BeautifulSoup(html, "html.parser").find(id="job-raw")
    assert raw is not None and "回环地址" in raw.get_text() and '"evidence_ids"' in raw.get_text()
    html, text = _page(client, f"/jobs/{job.id}", "en")
    _no_developer_text(html, text)
    assert "Succeeded" in text and "是否成功" not in text and "证据" not in text


def test_raw_view_is_for_admins_only_and_durations_are_words(app, session, login):
    import tests.core.jobs.kinds  # noqa: F401 - registers the test kinds

    with app.app_context():
        job = jobs.enqueue(session, kind="test.echo", params={"note": "官方"})
    html, text = _page(login("viewer"), f"/jobs/{job.id}", "zh")
    assert 'id="job-raw"' not in html
    _no_developer_text(html, text)
    assert "官方" in text
    duration = BeautifulSoup(html, "html.parser").select_one(".job-duration")
    assert duration is not None and re.search(r"\d+\s*秒", duration.get_text())
    html, _text = _page(login("admin"), f"/jobs/{job.id}", "en")
    assert 'id="job-raw"' in html and "官方" in html and "\\u5b98" not in html
    duration = BeautifulSoup(html, "html.parser").select_one(".job-duration")
    assert duration is not None and re.search(r"\d+ seconds?", duration.get_text())


def test_job_json_times_have_no_microseconds(app, session, login):
    import tests.core.jobs.kinds  # noqa: F401 - registers the test kinds

    with app.app_context():
        job = jobs.enqueue(session, kind="test.echo", params={})
    data = login("viewer").get(f"/jobs/{job.id}.json").get_json()
    for key in ("created_at", "started_at", "finished_at"):
        assert data[key] and not ISO_MICROSECONDS.search(data[key]), data[key]
    assert data["created_text"].endswith("UTC+8")


def test_import_job_lists_its_problems_as_sentences(app, session, login):
    import json

    from app.registry.import_jobs import start_import

    document = json.dumps({"providers": [{"legal_name": ""}]}, ensure_ascii=False).encode()
    with app.app_context():
        job = start_import(session, data=document, filename="供应商.json", format="json", dry_run=True)
    assert job.result["problems"], job.result
    client = login("viewer")
    html, text = _page(client, f"/jobs/{job.id}", "zh")
    _no_developer_text(html, text)
    result = BeautifulSoup(html, "html.parser").find(id="job-result").get_text(" ", strip=True)
    assert "问题" in result and "第 1 行" in result
    assert "供应商.json" in text and f'href="/transfer?job={job.id}"' in html
    for raw in ("dry_run", "problems", "'row'", '"row"', "upload_id", "filename"):
        assert raw not in text, raw
    params = BeautifulSoup(html, "html.parser").find(id="job-params").get_text(" ", strip=True)
    assert "只检查不写入" in params and "是" in params
