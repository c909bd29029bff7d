"""Compare over time: two check runs or report exports side by side, and the provider report's section of
change events since the previous export."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import Session, select

from app.core.errors import InvalidInput, NotFound
from app.credentials import compare_runs
from app.credentials import report_exports as report_service
from app.credentials.report_inputs import provider_inputs
from app.models.checks import CheckRun, StoredFinding
from app.models.reports import ExportRecord
from app.models.watch import ChangeEvent
from app.registry import providers
from app.reports.assemble import snapshot_sha256
from tests.web.conftest import provider_data

NOW = datetime.now(UTC)
AUTHOR = report_service.Author(id=None, name="分析员")


def stored_run(session: Session, provider_id: int, verdict: str, findings: dict[str, str], hours_ago: int):
    """A check run with findings {rule_id: severity} (subject "provider"), made `hours_ago` hours ago."""
    run = CheckRun(
        provider_id=provider_id,
        verdict=verdict,
        checked_on=NOW.date(),
        rules_version="test",
        created_at=NOW - timedelta(hours=hours_ago),
    )
    session.add(run)
    session.commit()
    for position, (rule_id, severity) in enumerate(findings.items()):
        session.add(
            StoredFinding(
                check_run_id=run.id,
                provider_id=provider_id,
                position=position,
                rule_id=rule_id,
                severity=severity,
                subject="provider",
                message_zh=f"{rule_id} 中文说明",
                message_en=f"{rule_id} in English",
            )
        )
    session.commit()
    return run


@pytest.fixture
def make_provider(session: Session):
    """Create a provider through the registry service."""
    return lambda **fields: providers.create_provider(session, data=provider_data(**fields))


@pytest.fixture
def two_runs(session, make_provider):
    provider = make_provider(legal_name="深圳对比算力有限公司")
    first = stored_run(
        session,
        provider.id,
        "needs_review",
        {"licence.expiring": "warning", "uscc.missing": "blocker", "icp.unchecked": "info"},
        hours_ago=48,
    )
    second = stored_run(
        session,
        provider.id,
        "fail",
        {"licence.expiring": "blocker", "icp.unchecked": "info", "footer.missing": "warning"},
        hours_ago=1,
    )
    return provider, first, second


def test_compare_two_runs(session, two_runs):
    provider, first, second = two_runs
    before = compare_runs.load_side(session, provider.id, f"run:{first.id}", "a")
    after = compare_runs.load_side(session, provider.id, f"run:{second.id}", "b")
    comparison = compare_runs.compare(before, after)
    assert {row.rule_id: row.status for row in comparison.rows} == {
        "footer.missing": "added",
        "uscc.missing": "cleared",
        "licence.expiring": "severity_changed",
        "icp.unchecked": "unchanged",
    }
    assert [row.status for row in comparison.rows] == ["added", "cleared", "severity_changed", "unchanged"]
    assert comparison.verdict_changed and comparison.changed
    same = compare_runs.compare(after, after)
    assert not same.changed and same.count("unchanged") == 3


def test_references_are_checked(session, two_runs, make_provider):
    provider, first, _second = two_runs
    other = make_provider(legal_name="杭州别家算力有限公司")
    for bad in ("", "run", "run:abc", "job:1", "run:99999999999"):
        with pytest.raises(InvalidInput) as caught:
            compare_runs.load_side(session, provider.id, bad, "a")
        assert caught.value.errors[0].field == "a"
    with pytest.raises(NotFound):
        compare_runs.load_side(session, other.id, f"run:{first.id}", "b")


def test_compare_page_defaults_to_the_latest_two_runs(login, two_runs):
    provider, first, second = two_runs
    client = login("viewer")
    response = client.get(f"/providers/{provider.id}/compare")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    sides = re.findall(r'class="card shadow-sm h-100 compare-side" data-ref="([^"]+)"', html)
    assert sides == [f"run:{first.id}", f"run:{second.id}"]
    statuses = re.findall(r'<tr class="compare-row status-(\w+)"', html)
    assert sorted(statuses) == ["added", "cleared", "severity_changed", "unchanged"]
    assert 'id="verdict-changed"' in html and "结论由“需复核”变为“不通过”" in html
    client.get("/lang/en")
    english = client.get(f"/providers/{provider.id}/compare").get_data(as_text=True)
    assert "footer.missing in English" in english and "Compare over time" in english


def test_compare_page_names_bad_parameters(login, two_runs, make_provider):
    provider, first, _second = two_runs
    other = make_provider(legal_name="杭州别家算力有限公司")
    client = login("viewer")
    response = client.get(f"/providers/{provider.id}/compare?a=nonsense")
    assert response.status_code == 422
    assert "run:&lt;编号&gt;" in response.get_data(as_text=True)
    foreign = client.get(f"/providers/{other.id}/compare?b=run:{first.id}")
    assert foreign.status_code == 404
    empty = client.get(f"/providers/{other.id}/compare")
    assert empty.status_code == 200 and 'id="compare-empty"' in empty.get_data(as_text=True)


def _event(session: Session, provider_id: int, key: str, text: str, created_at: datetime) -> None:
    session.add(
        ChangeEvent(
            provider_id=provider_id,
            kind="finding_added",
            dedupe_key=key,
            severity="warning",
            message_zh=f"新发现：{text}",
            message_en=f"new finding: {text}",
            occurred_on=created_at.date(),
            created_at=created_at,
        )
    )
    session.commit()


def _export(session: Session, provider_id: int, language: str, days_ago: int = 0) -> ExportRecord:
    """Record an export of the provider report with its real input snapshot (the PDF bytes are not read)."""
    inputs = provider_inputs(session, provider_id=provider_id, today=NOW.date())
    seq = len(session.exec(select(ExportRecord.id)).all()) + 1
    record = ExportRecord(
        number=report_service.format_number(2026, seq),
        year=2026,
        seq=seq,
        kind="provider",
        subject_id=provider_id,
        subject_name=inputs["provider"]["legal_name"],
        provider_id=provider_id,
        language=language,
        created_by=AUTHOR.name,
        verdict=(inputs["sources"]["checks"].get("data") or {}).get("verdict"),
        pages=1,
        size_bytes=4,
        sha256="0" * 64,
        inputs_sha256=snapshot_sha256(inputs),
        inputs_json={"meta": {"number": None, "language": language, "author": AUTHOR.name}, "inputs": inputs},
        pdf_bytes=b"%PDF",
        created_at=datetime.now(UTC) - timedelta(days=days_ago),
    )
    session.add(record)
    session.commit()
    return record


def test_report_lists_changes_since_the_previous_export(session, two_runs, login):
    provider, _first, _second = two_runs
    _event(session, provider.id, "k:old", "旧变化", NOW - timedelta(days=3))
    first_export = _export(session, provider.id, "zh", days_ago=2)
    first_changes = first_export.inputs_json["inputs"]["sources"]["changes"]["data"]
    assert first_changes["previous_export"] is None
    assert [event["message_zh"] for event in first_changes["events"]] == ["新发现：旧变化"]
    _event(session, provider.id, "k:new", "新变化", datetime.now(UTC))
    html = report_service.provider_report_html(session, provider_id=provider.id, language="en", author=AUTHOR)
    section = re.search(r'<section id="changes">(.*?)</section>', html, re.S).group(1)
    assert first_export.number in section and "new finding: 新变化" in section
    assert "旧变化" not in section
    # today's Chinese and English copies share the baseline: the same change list, the same inputs hash
    second_export, copy = _export(session, provider.id, "zh"), _export(session, provider.id, "en")
    stored = second_export.inputs_json["inputs"]["sources"]["changes"]
    assert stored["status"] == "ok" and stored["data"]["previous_export"]["number"] == first_export.number
    assert copy.inputs_json["inputs"]["sources"]["changes"] == stored
    assert copy.inputs_sha256 == second_export.inputs_sha256
    # two exports compare like two runs: each snapshot holds the check it printed
    compared = login("viewer").get(
        f"/providers/{provider.id}/compare?a=export:{first_export.id}&b=export:{second_export.id}"
    )
    assert compared.status_code == 200
    html = compared.get_data(as_text=True)
    assert f'data-ref="export:{second_export.id}"' in html and "两次结果相同" in html


def test_report_without_new_changes_says_so(session, two_runs):
    provider, _first, _second = two_runs
    html = report_service.provider_report_html(session, provider_id=provider.id, language="en", author=AUTHOR)
    section = re.search(r'<section id="changes">(.*?)</section>', html, re.S).group(1)
    assert "first report" in section and 'id="no-changes"' in section


def test_a_report_after_an_export_earlier_today_never_calls_itself_the_first(session, two_runs):
    provider, _first, _second = two_runs
    earlier = _export(session, provider.id, "zh")
    html = report_service.provider_report_html(session, provider_id=provider.id, language="en", author=AUTHOR)
    section = re.search(r'<section id="changes">(.*?)</section>', html, re.S).group(1)
    assert "first report" not in section
    assert f"report {earlier.number} was exported today" in section
