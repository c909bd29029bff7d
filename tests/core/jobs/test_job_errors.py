"""A job's error in the reader's language (issue 27 item 11): stored as message ids and values, worded
when read, whoever started the job."""

from __future__ import annotations

import flask
import pytest
from flask_babel import force_locale

import tests.core.jobs.kinds  # noqa: F401 - registers the test kinds (test.fail)
from app.core import job_errors, jobs
from app.core.errors import InvalidInput
from app.models.jobs import JobState
from app.web.jobs import job_view


def _failed_check(app, session, language: str):
    with app.test_request_context("/"):
        flask.session["lang"] = language
        return jobs.enqueue(session, kind="vetting.check", params={"provider_id": 999999})


@pytest.mark.parametrize(
    ("started_in", "read_in", "expected"),
    [
        ("zh", "en", "id: provider 999999 does not exist"),
        ("en", "zh", "id: 供应商 999999 不存在"),
        ("zh", "zh", "id: 供应商 999999 不存在"),
    ],
)
def test_the_error_is_worded_in_the_readers_language(
    app, session, immediate_jobs, started_in, read_in, expected
):
    job = _failed_check(app, session, started_in)
    assert job.state == JobState.failed
    ((part,),) = [job.progress["error"]]  # the catalogue has it as %(id)s and as %(id)d: either words it
    assert part["field"] == "id" and part["msgid"].startswith("供应商 %(id)")
    assert str(part["params"]["id"]) == "999999"
    with app.test_request_context("/"), force_locale(read_in):
        # the twin msgids word it "provider ..." and "Provider ...": either is the reader's language
        assert jobs.error_text(job).lower() == expected.lower()
        assert job_view(job)["error"] == jobs.error_text(job)


def test_the_job_page_json_follows_the_readers_language(app, session, immediate_jobs, login):
    job = _failed_check(app, session, "zh")
    client = login("viewer")
    client.get("/lang/en")
    assert (
        client.get(f"/jobs/{job.id}.json").get_json()["error"].lower() == "id: provider 999999 does not exist"
    )


def test_a_message_and_the_message_inside_it_are_recognised():
    text = "运行任务的 worker（host-a:42）已停止；已重新排队"
    found = job_errors.recognise(text, "zh")
    assert found == {
        "msgid": "%(reason)s；已重新排队",
        "params": {
            "reason": {"msgid": "运行任务的 worker（%(worker)s）已停止", "params": {"worker": "host-a:42"}}
        },
    }


def test_rendered_parts_and_unknown_text(app):
    parts = job_errors.text_parts("运行任务的 worker（host-a:42）已停止；已重新排队", "zh")
    with app.test_request_context("/"), force_locale("en"):
        assert job_errors.render(parts) == "the worker running this job (host-a:42) stopped; queued again"
    # what the catalogue does not know is kept as it was written
    assert job_errors.recognise("KeyError: 'x'", "zh") is None
    assert job_errors.error_parts(ValueError("boom"), "zh") is None
    unknown = InvalidInput("这句话不在目录里", field="x")
    assert job_errors.error_parts(unknown, "zh") is None


def test_a_crash_keeps_its_text(app, session, immediate_jobs):
    with app.app_context():
        job = jobs.enqueue(session, kind="test.fail", params={"code": 7})
    assert "error" not in (job.progress or {})
    with app.test_request_context("/"), force_locale("en"):
        assert jobs.error_text(job) == "ValueError: boom 7"


def test_a_host_this_machine_cannot_reach_is_worded_in_one_language(app):
    from scrapers.http import unreachable

    error = unreachable("https://beian.example", "dns")
    assert "(this machine cannot reach" in str(error)  # the text for logs and the CLI stays bilingual
    parts = job_errors.error_parts(error, "zh")
    assert parts == [
        {
            "field": "",
            "msgid": "本机无法连接 %(url)s（%(why)s）：请检查代理/网络，或手工查询后记录结果",
            "params": {"url": "https://beian.example", "why": {"msgid": "域名无法解析", "params": {}}},
        }
    ]
    with app.test_request_context("/"), force_locale("zh"):
        chinese = job_errors.render(parts)
    with app.test_request_context("/"), force_locale("en"):
        english = job_errors.render(parts)
    assert (
        chinese == "本机无法连接 https://beian.example（域名无法解析）：请检查代理/网络，或手工查询后记录结果"
    )
    assert english.startswith("This machine cannot reach https://beian.example (")
    assert "本机" not in english and "this machine" not in chinese
