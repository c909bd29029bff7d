"""Official lookups end to end against the fake official server: every outcome gives a clear state
and every exchange is kept as evidence."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from app.core.errors import Conflict, InvalidInput
from app.credentials import lookups as service
from app.credentials.facts import gather_facts
from app.models.evidence import Evidence, Lookup, LookupState
from scrapers.official import sniff_image


def _start(session, provider, analyst, kind="icp", query=None):
    return service.start_lookup(
        session, provider_id=provider.id, kind=kind, query=query, user=analyst, max_failures=3
    )


def _answer(session, lookup, analyst, answer):
    return service.submit_answer(session, lookup_id=lookup.id, answer=answer, user=analyst)


def _purposes(session, lookup_id):
    rows = session.exec(select(Evidence).where(Evidence.lookup_id == lookup_id).order_by(Evidence.id)).all()
    return [row.purpose for row in rows]


def test_icp_correct_answer_completes_with_records_and_evidence(lookup_app, session, provider, analyst, fake):
    with lookup_app.app_context():
        lookup = _start(session, provider, analyst)
        assert lookup.state == LookupState.awaiting_answer and lookup.captcha_uuid
        image = session.get(Evidence, lookup.captcha_evidence_id)
        assert image.content_type == "image/png" and sniff_image(image.body) == "image/png"
        lookup = _answer(session, lookup, analyst, str(fake.icp_answer(lookup.captcha_uuid)))
        assert lookup.state == LookupState.completed, lookup.message
        assert lookup.records[0]["mainLicence"] == "京ICP备19012345号"
        assert lookup.records[0]["natureName"] == "企业"
        assert _purposes(session, lookup.id) == [
            "icp_auth",
            "icp_captcha",
            "captcha_image",
            "captcha_image",
            "icp_check",
            "icp_query",
        ]
        result = session.get(Evidence, lookup.result_evidence_id)
        assert result.purpose == "icp_query" and b"mainLicence" in result.body and result.status == 200
        assert result.triggered_by_name == "analyst1" and result.job_id is not None
        facts = gather_facts(session, provider)
        assert facts["icp_lookup"]["records"] == lookup.records
        assert facts["icp_lookup"]["evidence"][0]["sha256"] == result.sha256
    # The auth key followed the documented md5("testtest" + timestamp) (the fake refuses anything else).
    assert fake.count("icp_auth") == 1 and fake.count("icp_query") == 1
    query_headers = next(call for name, call in fake.calls if name == "icp_query")["headers"]
    assert {"token", "sign", "uuid"} <= set(query_headers)


def test_wrong_answer_clears_the_captcha_and_shows_a_new_one(lookup_app, session, provider, analyst, fake):
    with lookup_app.app_context():
        lookup = _start(session, provider, analyst)
        first_uuid = lookup.captcha_uuid
        wrong = str((fake.icp_answer(first_uuid) + 100) % 300)
        lookup = _answer(session, lookup, analyst, wrong)
        assert lookup.state == LookupState.awaiting_answer
        assert lookup.failures == 1 and lookup.captcha_uuid != first_uuid
        assert "第 1/3 次" in lookup.message
        assert "Wrong captcha answer (1 of 3)" in service.message_text(lookup, "en")
        assert fake.captchas[first_uuid]["failures"] == 1  # never reused: far from the lock at six
        lookup = _answer(session, lookup, analyst, str(fake.icp_answer(lookup.captcha_uuid)))
        assert lookup.state == LookupState.completed


def test_too_many_wrong_answers_stop_before_the_official_lock(lookup_app, session, provider, analyst, fake):
    with lookup_app.app_context():
        lookup = _start(session, provider, analyst)
        for _ in range(3):
            lookup = _answer(session, lookup, analyst, str((fake.icp_answer(lookup.captcha_uuid) + 50) % 300))
        assert lookup.state == LookupState.failed and lookup.failures == 3
        assert "Stopped after 3 wrong answers" in service.message_text(lookup, "en")
        assert "连续答错 3 次" in lookup.message and lookup.captcha_uuid is None
        assert max(captcha["failures"] for captcha in fake.captchas.values()) == 1
        with pytest.raises(Conflict):
            _start(session, provider, analyst)  # cool-down for this kind
        with pytest.raises(Conflict):
            service.retry_lookup(session, lookup_id=lookup.id, user=analyst, max_failures=3)
        assert _start(session, provider, analyst, kind="licence").state == LookupState.awaiting_answer


def test_expired_token_gets_a_new_token_and_captcha_without_counting_a_failure(
    lookup_app, session, provider, analyst, fake
):
    with lookup_app.app_context():
        lookup = _start(session, provider, analyst)
        answer = str(fake.icp_answer(lookup.captcha_uuid))
        fake.expire_tokens()
        lookup = _answer(session, lookup, analyst, answer)
        assert lookup.state == LookupState.awaiting_answer and lookup.failures == 0
        assert "token expired" in service.message_text(lookup, "en") and "令牌已过期" in lookup.message
        assert fake.count("icp_auth") == 2
        lookup = _answer(session, lookup, analyst, str(fake.icp_answer(lookup.captcha_uuid)))
        assert lookup.state == LookupState.completed


def test_token_known_to_be_expired_is_renewed_before_the_answer_is_spent(
    lookup_app, session, provider, analyst, fake
):
    with lookup_app.app_context():
        lookup = _start(session, provider, analyst)
        stored = session.get(Lookup, lookup.id)
        stored.token_expires_at = datetime.now(UTC) - timedelta(seconds=1)
        session.add(stored)
        session.commit()
        lookup = _answer(session, lookup, analyst, "123")
        assert lookup.state == LookupState.awaiting_answer
        assert "token expired" in service.message_text(lookup, "en")
        assert fake.count("icp_check") == 0 and lookup.failures == 0


def test_malformed_reply_fails_clearly_keeps_the_bytes_and_can_be_retried(
    lookup_app, session, provider, analyst, fake
):
    with lookup_app.app_context():
        lookup = _start(session, provider, analyst)
        fake.malformed.add("icp_query")
        lookup = _answer(session, lookup, analyst, str(fake.icp_answer(lookup.captcha_uuid)))
        assert lookup.state == LookupState.failed
        assert "reply is not JSON (HTTP 200" in service.message_text(lookup, "en")
        assert "不是 JSON" in lookup.message and "reply" not in lookup.message
        broken = session.exec(
            select(Evidence).where(Evidence.lookup_id == lookup.id, Evidence.purpose == "icp_query")
        ).one()
        assert broken.body.startswith(b'{"code":200') and broken.status == 200
        fake.malformed.clear()
        lookup = service.retry_lookup(session, lookup_id=lookup.id, user=analyst, max_failures=3)
        assert lookup.state == LookupState.awaiting_answer
        lookup = _answer(session, lookup, analyst, str(fake.icp_answer(lookup.captcha_uuid)))
        assert lookup.state == LookupState.completed
        assert _purposes(session, lookup.id).count("icp_query") == 2  # the broken reply is still kept


def test_timeout_fails_within_the_deadline_and_keeps_a_record(lookup_app, session, provider, analyst, fake):
    with lookup_app.app_context():
        lookup = _start(session, provider, analyst)
        fake.delays["icp_query"] = 4.0
        started = time.monotonic()
        lookup = _answer(session, lookup, analyst, str(fake.icp_answer(lookup.captcha_uuid)))
        assert time.monotonic() - started < 3.5
        assert lookup.state == LookupState.failed and "超时" in lookup.message
        assert "timed out: no reply within the time limit" in service.message_text(lookup, "en")
        failed = session.exec(
            select(Evidence).where(Evidence.lookup_id == lookup.id, Evidence.purpose == "icp_query")
        ).one()
        assert failed.error_code == "timeout" and failed.status is None and failed.body == b""


def test_licence_lookup_correct_wrong_and_expired_captcha(lookup_app, session, provider, analyst, fake):
    with lookup_app.app_context():
        lookup = _start(session, provider, analyst, kind="licence")
        assert lookup.state == LookupState.awaiting_answer
        first = lookup.captcha_uuid
        lookup = _answer(session, lookup, analyst, "ZZZZ")
        assert lookup.failures == 1 and lookup.captcha_uuid != first
        fake.licence_captchas[lookup.captcha_uuid]["used"] = True  # the system dropped it
        lookup = _answer(session, lookup, analyst, "ABCD")
        assert lookup.state == LookupState.awaiting_answer and lookup.failures == 1
        assert "The captcha expired" in service.message_text(lookup, "en")
        lookup = _answer(session, lookup, analyst, fake.licence_answer(lookup.captcha_uuid).lower())
        assert lookup.state == LookupState.completed
        record = lookup.records[0]
        assert record["businessItems"] == ["B11", "B14"] and record["b11ExcludesResourceCollab"] is False
        assert record["coverage"] == ["北京", "上海", "广东"] and record["expiryDate"] == "2029-05-20"
        assert gather_facts(session, provider)["licence_lookup"]["records"] == lookup.records


def test_bad_answers_and_out_of_turn_answers_are_refused_with_the_field(
    lookup_app, session, provider, analyst, fake
):
    with lookup_app.app_context():
        lookup = _start(session, provider, analyst)
        with pytest.raises(InvalidInput) as bad:
            _answer(session, lookup, analyst, "left a bit")
        assert bad.value.errors[0].field == "answer"
        assert session.get(Lookup, lookup.id).state == LookupState.awaiting_answer
        lookup = _answer(session, lookup, analyst, str(fake.icp_answer(lookup.captcha_uuid)))
        with pytest.raises(Conflict) as late:
            _answer(session, lookup, analyst, "12")
        assert late.value.errors[0].field == "answer"
        with pytest.raises(InvalidInput) as kind:
            _start(session, provider, analyst, kind="gsxt")
        assert kind.value.errors[0].field == "kind"
        with pytest.raises(InvalidInput):
            _start(session, provider, analyst, query="x" * 201)


def test_no_facts_before_any_completed_lookup(lookup_app, session, provider):
    facts = gather_facts(session, provider)
    assert "icp_lookup" not in facts and "licence_lookup" not in facts and "footer" not in facts


def test_a_lookup_whose_job_died_can_be_retried(lookup_app, session, provider, analyst, fake):
    from app.models.jobs import Job, JobState

    with lookup_app.app_context():
        lookup = _start(session, provider, analyst)
        with pytest.raises(Conflict):
            service.retry_lookup(session, lookup_id=lookup.id, user=analyst, max_failures=3)
        stored = session.get(Lookup, lookup.id)
        stored.state = LookupState.checking  # as if the worker died while checking the answer
        job = session.get(Job, stored.job_id)
        job.state = JobState.interrupted
        session.add_all([stored, job])
        session.commit()
        assert service.can_retry(session, stored, max_failures=3)
        lookup = service.retry_lookup(session, lookup_id=lookup.id, user=analyst, max_failures=3)
        assert lookup.state == LookupState.awaiting_answer
