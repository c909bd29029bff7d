"""Change events on the real databases: what changed between check runs, and the expiry watch, each once."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from sqlmodel import Session, select

from app.credentials import checks, watch
from app.models.watch import ChangeEvent
from app.registry.providers import create_provider

TODAY = date(2026, 12, 1)
LICENCE = {
    "number_raw": "京B1.B2-20249901",
    "business_items": ["B11"],
    "b11_includes_resource_collab": True,
    "coverage": ["北京"],
    "issued_on": "2024-03-15",
    "expires_on": (TODAY + timedelta(days=20)).isoformat(),
    "status": "正常",
}


@pytest.fixture
def provider(session: Session):
    return create_provider(
        session,
        data={
            "legal_name": "示例变化算力有限公司",
            "licences": [LICENCE],
            "certifications": [{"kind": "iso27001", "expires_on": (TODAY + timedelta(days=200)).isoformat()}],
            "datacenters": [{"name": "示例机房", "province": "北京", "city": "北京"}],
        },
    )


def events(session: Session, provider_id: int) -> list[ChangeEvent]:
    return list(session.exec(select(ChangeEvent).where(ChangeEvent.provider_id == provider_id)).all())


def test_each_expiry_threshold_is_recorded_once(session: Session, provider):
    assert watch.watch_expiry(session, today=TODAY) == 1  # 20 days left: the 30-day threshold
    assert watch.watch_expiry(session, today=TODAY) == 0  # the same day again: nothing new
    assert watch.watch_expiry(session, today=TODAY + timedelta(days=1)) == 0  # still inside 30 days
    [first] = events(session, provider.id)
    assert first.kind == "expiring" and first.details["threshold_days"] == 30 and first.severity == "info"
    assert "京B1.B2-20249901" in first.message_zh and "20 days left" in first.message_en
    assert watch.watch_expiry(session, today=TODAY + timedelta(days=14)) == 1  # 6 days left: the 7-day one
    assert watch.watch_expiry(session, today=TODAY + timedelta(days=21)) == 1  # expired
    kinds = [
        (event.kind, event.severity) for event in sorted(events(session, provider.id), key=lambda e: e.id)
    ]
    assert kinds == [("expiring", "info"), ("expiring", "warning"), ("expired", "blocker")]


def test_a_renewed_licence_is_watched_again(session: Session, provider):
    watch.watch_expiry(session, today=TODAY)
    licence = provider.licences[0]
    licence.expires_on = TODAY + timedelta(days=25)  # renewed to another (still close) date
    session.add(licence)
    session.commit()
    assert watch.watch_expiry(session, today=TODAY) == 1


def test_certifications_far_from_expiry_raise_nothing_until_they_near_it(session: Session, provider):
    watch.watch_expiry(session, today=TODAY)
    assert not [e for e in events(session, provider.id) if e.subject.startswith("certification")]
    assert watch.watch_expiry(session, today=TODAY + timedelta(days=120)) >= 1
    certification = [e for e in events(session, provider.id) if e.subject.startswith("certification")]
    assert [e.details["threshold_days"] for e in certification] == [90]


def test_check_runs_record_added_findings_and_the_changed_verdict_once(session: Session, provider):
    first = checks.run_check(session, provider_id=provider.id, today=TODAY)
    assert events(session, provider.id) == []  # a first run is a snapshot, not a change
    later = checks.run_check(session, provider_id=provider.id, today=TODAY + timedelta(days=30))
    recorded = events(session, provider.id)  # storing the run recorded what changed
    assert recorded and all(event.check_run_id == later.id for event in recorded)
    assert watch.record_check_changes(session, later) == 0  # recorded once
    found = {event.kind: event for event in recorded}
    assert "finding_added" in found or "severity_changed" in found
    if first.verdict != later.verdict:
        assert found["verdict_changed"].details == {"before": first.verdict, "after": later.verdict}


def test_finding_changes_is_pure_and_complete():
    from app.models.checks import StoredFinding

    def finding(rule: str, severity: str, subject: str = "") -> StoredFinding:
        return StoredFinding(
            check_run_id=1,
            provider_id=1,
            rule_id=rule,
            severity=severity,
            subject=subject,
            message_zh=f"{rule} 中文",
            message_en=f"{rule} text",
        )

    before = [finding("a", "warning"), finding("b", "info"), finding("c", "info", "x")]
    after = [finding("a", "blocker"), finding("c", "info", "x"), finding("d", "warning")]
    drafts = watch.finding_changes(before, after, "needs_review", "fail")
    assert [(d.kind, d.subject) for d in drafts] == [
        ("verdict_changed", ""),
        ("finding_added", "d:"),
        ("finding_cleared", "b:"),
        ("severity_changed", "a:"),
    ]
    assert "警告变为阻断" in drafts[-1].message_zh and "from warning to blocker" in drafts[-1].message_en
    assert watch.finding_changes(after, after, "fail", "fail") == []
