"""Credit red flags: a dead company blocks, lists and enforcement warn, youth and tiny capital ask."""

from __future__ import annotations

from datetime import date, timedelta

from app.credentials import checks, credit
from app.vetting.findings import Severity, verdict
from tests.credentials.credit.conftest import gsxt_values, png_bytes


def _record(session, provider, analyst, enforcements=(), **changes):
    return credit.record_manual(
        session,
        provider_id=provider.id,
        values=gsxt_values(**changes),
        enforcements=list(enforcements),
        screenshot=png_bytes(),
        user=analyst,
    )


def _credit_findings(session, provider):
    run = checks.run_check(session, provider_id=provider.id)
    return [f for f in checks.run_findings(session, check_run_id=run.id) if f.rule_id.startswith("credit.")]


def test_a_clean_alive_record_raises_nothing(session, provider, analyst):
    _record(session, provider, analyst)
    assert _credit_findings(session, provider) == []


def test_a_revoked_company_is_a_blocker_that_fails_the_check(session, provider, analyst):
    record = _record(session, provider, analyst, registration_status="吊销")
    findings = _credit_findings(session, provider)
    assert [(f.rule_id, f.severity) for f in findings] == [("credit.status_not_alive", "blocker")]
    assert "“吊销”" in findings[0].message_zh
    assert "'Business licence revoked'" in findings[0].message_en and "吊销" not in findings[0].message_en
    assert findings[0].evidence[0]["evidence_id"] == record.evidence_id
    assert "91110108EXAMPL995L" in findings[0].how_to_verify_zh
    assert checks.latest_check(session, provider_id=provider.id).verdict == "fail"
    for status in ("存续", "在业", "在营", "开业"):
        _record(session, provider, analyst, registration_status=status)
        assert _credit_findings(session, provider) == []


def test_the_lists_warn_saying_why_and_since_when(session, provider, analyst):
    _record(
        session,
        provider,
        analyst,
        abnormal_listed="yes",
        abnormal_since="2025-07-02",
        abnormal_reason="未依照规定报送年度报告",
        dishonest_listed="on",
        dishonest_since="2026-02-10",
        dishonest_reason="提供虚假材料",
    )
    findings = {f.rule_id: f for f in _credit_findings(session, provider)}
    assert set(findings) == {"credit.abnormal_list", "credit.dishonest_list"}
    abnormal, dishonest = findings["credit.abnormal_list"], findings["credit.dishonest_list"]
    assert abnormal.severity == dishonest.severity == Severity.warning
    assert "2025-07-02" in abnormal.message_zh and "未依照规定报送年度报告" in abnormal.message_zh
    assert "since 2025-07-02" in abnormal.message_en
    assert "2026-02-10" in dishonest.message_zh and "提供虚假材料" in dishonest.message_en


def test_each_enforcement_record_warns_with_its_amount_and_date(session, provider, analyst):
    rows = [
        {"amount_cny": "125000", "filed_on": "2026-05-01", "court": "海淀法院（2026）京0108执1234号"},
        {"amount_cny": "8800.5", "filed_on": "2025-12-24", "court": "朝阳法院（2025）京0105执99号"},
    ]
    _record(session, provider, analyst, enforcements=rows, source="zxgk", registration_status="")
    findings = _credit_findings(session, provider)
    assert [f.rule_id for f in findings] == ["credit.enforcement"] * 2
    texts = sorted(f.message_zh for f in findings)
    assert "125,000.00 元" in texts[0] and "2026-05-01" in texts[0] and "京0108执1234号" in texts[0]
    assert "8,800.50 元" in texts[1] and "2025-12-24" in texts[1]
    assert all(f.severity == "warning" for f in findings)
    assert verdict(findings) == "needs_review"


def test_a_young_company_and_a_tiny_capital_are_questions(session, provider, analyst):
    young = (date.today() - timedelta(days=40)).isoformat()
    _record(session, provider, analyst, founded_on=young, registered_capital_wan="10")
    findings = {f.rule_id: f for f in _credit_findings(session, provider)}
    assert set(findings) == {"credit.recently_founded", "credit.small_capital"}
    assert all(f.severity == "info" for f in findings.values())
    assert young in findings["credit.recently_founded"].message_zh
    assert "10 万元" in findings["credit.small_capital"].message_zh
    assert "CNY 100,000" in findings["credit.small_capital"].message_en


def test_capital_in_another_currency_or_an_old_company_is_not_questioned(session, provider, analyst):
    _record(session, provider, analyst, registered_capital_wan="10", capital_currency="USD")
    assert _credit_findings(session, provider) == []
