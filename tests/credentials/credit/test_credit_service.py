"""The credit record service: storing with evidence and audit, checking the input, the verification status."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select

from app.core.errors import InvalidInput
from app.credentials import credit
from app.models import AuditEntry, Provider
from app.models.credit import CreditRecord
from app.models.evidence import Evidence, EvidenceImmutable
from tests.credentials.credit.conftest import PDF, USCC, gsxt_values, png_bytes


def _record(session, provider, analyst, values=None, enforcements=(), screenshot=None):
    return credit.record_manual(
        session,
        provider_id=provider.id,
        values=values or gsxt_values(),
        enforcements=list(enforcements),
        screenshot=png_bytes() if screenshot is None else screenshot,
        filename="gsxt.png",
        user=analyst,
    )


def _fields(exc: pytest.ExceptionInfo) -> dict[str, str]:
    return {error.field: error.message for error in exc.value.errors}


def test_a_record_is_stored_with_its_screenshot_as_immutable_evidence_and_audited(session, provider, analyst):
    picture = png_bytes()
    enforcement = {
        "amount_cny": "125,000",
        "filed_on": "2026-05-01",
        "court": "北京市海淀区人民法院（2026）京0108执1234号",
    }
    record = _record(session, provider, analyst, screenshot=picture, enforcements=[enforcement])

    assert record.uscc == USCC and record.registration_status == "存续" and record.method == "manual"
    assert record.registered_capital == 50_000_000 and credit.capital_wan(record) == "5000"
    assert record.looked_at.astimezone(UTC) == datetime(2026, 11, 30, 2, 15, tzinfo=UTC)
    assert record.enforcements == [
        {"amount_cny": "125000.00", "filed_on": "2026-05-01", "court": enforcement["court"]}
    ]
    assert record.recorded_by_name == "analyst1"
    evidence = session.get(Evidence, record.evidence_id)
    assert evidence.purpose == "credit_manual" and evidence.url == "https://www.gsxt.gov.cn/"
    assert evidence.body == picture and evidence.sha256 == hashlib.sha256(picture).hexdigest()
    assert evidence.content_type == "image/png" and evidence.extracted["filename"] == "gsxt.png"
    assert evidence.extracted["registration_status"] == "存续"
    evidence.body = b"tampered"
    session.add(evidence)
    with pytest.raises(EvidenceImmutable):
        session.commit()
    session.rollback()

    audit = session.exec(select(AuditEntry).where(AuditEntry.entity == "credit_record")).one()
    assert audit.entity_id == record.id and audit.actor_name == "analyst1" and audit.action == "create"
    assert audit.changes["sha256"] == [None, evidence.sha256]
    assert audit.changes["registration_status"] == [None, "存续"]
    assert audit.changes["enforcements"][1][0]["amount_cny"] == "125000.00"


def test_a_pdf_print_is_accepted_and_a_text_file_is_refused(session, provider, analyst):
    record = _record(session, provider, analyst, screenshot=PDF)
    assert session.get(Evidence, record.evidence_id).content_type == "application/pdf"
    with pytest.raises(InvalidInput) as refused:
        _record(session, provider, analyst, screenshot=b"<html>not a picture</html>")
    assert "screenshot" in _fields(refused)


def test_the_uscc_must_be_the_providers(session, provider, analyst):
    with pytest.raises(InvalidInput) as other:
        _record(session, provider, analyst, values=gsxt_values(uscc="91310115EXAMPL020C"))
    assert USCC in _fields(other)["uscc"]
    lower = _record(session, provider, analyst, values=gsxt_values(uscc=" 91110108exampl995l "))
    assert lower.uscc == USCC
    bare = Provider(legal_name="无代码有限公司")
    session.add(bare)
    session.commit()
    with pytest.raises(InvalidInput) as missing:
        credit.record_manual(
            session,
            provider_id=bare.id,
            values=gsxt_values(),
            enforcements=[],
            screenshot=png_bytes(),
            user=None,
        )
    assert "尚未登记统一社会信用代码" in _fields(missing)["uscc"]


def test_each_bad_field_is_named(session, provider, analyst):
    values = gsxt_values(
        source="qichacha",
        registration_status="营业中",
        registered_capital_wan="a lot",
        capital_currency="BTC",
        founded_on="2099-01-01",
        abnormal_listed="yes",
        dishonest_listed="maybe",
        penalties_count="-1",
        seen="",
        looked_at="yesterday",
    )
    rows = [
        {"amount_cny": "0", "filed_on": "2026-13-01", "court": ""},
        {"amount_cny": "1.005", "filed_on": "2026-01-01", "court": "x"},
    ]
    with pytest.raises(InvalidInput) as bad:
        _record(session, provider, analyst, values=values, enforcements=rows)
    fields = _fields(bad)
    assert "gsxt" in fields["source"] and "存续" in fields["registration_status"]
    assert "万元" in fields["registered_capital_wan"] and "CNY" in fields["capital_currency"]
    assert fields["founded_on"] == "日期不能晚于今天"
    assert fields["abnormal_since"] == "必填项" and fields["abnormal_reason"] == "必填项"
    assert "yes" in fields["dishonest_listed"] and "整数" in fields["penalties_count"]
    assert fields["seen"] == "必填项" and "YYYY-MM-DD HH:MM" in fields["looked_at"]
    assert {"enforcements.0.amount_cny", "enforcements.0.filed_on", "enforcements.0.court"} <= set(fields)
    assert "enforcements.1.amount_cny" in fields and "enforcements.1.court" not in fields
    assert session.exec(select(CreditRecord)).all() == []


def test_a_gsxt_record_needs_the_status_and_the_court_site_does_not(session, provider, analyst):
    with pytest.raises(InvalidInput) as bad:
        _record(session, provider, analyst, values=gsxt_values(registration_status=""))
    assert _fields(bad)["registration_status"] == "必填项"
    court = gsxt_values(source="zxgk", registration_status="", registered_capital_wan="", founded_on="")
    record = _record(session, provider, analyst, values=court)
    assert record.registration_status is None and record.source == "zxgk"


def test_the_status_reads_without_its_bracketed_gloss(session, provider, analyst):
    record = _record(
        session, provider, analyst, values=gsxt_values(registration_status="存续（在营、开业、在册）")
    )
    assert record.registration_status == "存续"


def test_too_many_enforcement_rows_are_refused(session, provider, analyst):
    rows = [{"amount_cny": "1", "filed_on": "2026-01-01", "court": "x"}] * (credit.MAX_ENFORCEMENTS + 1)
    with pytest.raises(InvalidInput) as bad:
        _record(session, provider, analyst, enforcements=rows)
    assert "enforcements" in _fields(bad)


def test_verification_status_follows_the_latest_record(session, provider, analyst):
    assert credit.credit_verification(session, provider.id)["status"] == "unverified"
    record = _record(session, provider, analyst)
    looked = record.looked_at.astimezone(UTC)
    soon = looked + timedelta(days=10)
    status = credit.credit_verification(session, provider.id, now=soon)
    assert status["status"] == "verified_by_hand" and status["by"] == "analyst1"
    assert status["evidence_id"] == record.evidence_id and status["record_id"] == record.id
    assert datetime.fromisoformat(status["at"]) == looked
    late = looked + timedelta(days=91)
    assert credit.credit_verification(session, provider.id, now=late)["status"] == "expired"
    assert credit.credit_verification(session, provider.id, now=late, max_age=120)["status"] == (
        "verified_by_hand"
    )
    provider = session.get(Provider, provider.id)
    provider.uscc = "91310115EXAMPL020C"
    session.add(provider)
    session.commit()
    assert credit.credit_verification(session, provider.id, now=soon)["status"] == "contradicted"


def test_facts_hold_the_latest_record_of_each_system(session, provider, analyst):
    assert credit.credit_facts(session, provider) is None
    _record(session, provider, analyst, values=gsxt_values(looked_at="2026-11-01T09:00"))
    newer = _record(session, provider, analyst, values=gsxt_values(registration_status="吊销"))
    court = _record(session, provider, analyst, values=gsxt_values(source="zxgk", registration_status=""))
    facts = credit.credit_facts(session, session.get(Provider, provider.id))
    assert sorted((r["source"], r["id"]) for r in facts["records"]) == [
        ("gsxt", newer.id),
        ("zxgk", court.id),
    ]


def test_deleting_the_provider_removes_its_credit_records(session, provider, analyst):
    from app.registry import providers as provider_service

    _record(session, provider, analyst)
    provider_service.delete_provider(session, provider_id=provider.id)
    assert session.exec(select(CreditRecord)).all() == []
    assert session.exec(select(Evidence)).all() == []


def test_the_credit_record_is_an_item_of_the_per_item_verification(session, provider, analyst):
    from app.credentials import verdicts, verification

    (before,) = [item for item in verification.verification_of(session, provider.id) if item.kind == "credit"]
    assert before.status == "unverified" and before.name == USCC
    record = _record(session, provider, analyst)
    session.expire_all()
    (after,) = [item for item in verification.verification_of(session, provider.id) if item.kind == "credit"]
    assert after.status == "verified_by_hand" and after.evidence_id == record.evidence_id
    assert after.status == credit.credit_verification(session, provider.id)["status"]  # the two agree
    assert "credit" not in {item.kind for item in verdicts.verdict_of(session, provider.id).unverified_items}
