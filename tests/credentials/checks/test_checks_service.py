"""Check runs on the real database: demo providers, stored history, facts, overview, CLI."""

from __future__ import annotations

import json
from datetime import date

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from app.accounts.users import create_user
from app.core.errors import InvalidInput, NotFound
from app.credentials import checks, facts
from app.models import Provider
from app.models.checks import CheckRun, StoredFinding
from app.registry.demo import load_demo
from app.vetting import findings as registry
from tests.vetting.test_rules import registry_rule_ids

REGISTRY_RULES_OF_COMPLIANT_DEMO = {"licence.bandwidth_without_b14"}  # an info note at most

# Demo provider (legal name) -> rules its notes say it demonstrates (app/knowledge/demo_providers.yaml).
DEMO_FLAGS = {
    "虚构极光云科技有限公司": {"licence.missing_item"},
    "虚构弹性算力有限公司": {"licence.b11_no_resource_collab"},
    "虚构跨省数据科技有限公司": {"licence.coverage"},
    "虚构全网算力有限公司": {"licence.coverage"},
    "虚构吊销通信有限公司": {"licence.bad_status"},
    "虚构过期许可科技有限公司": {"licence.expired"},
    "虚构临期算力有限公司": {"licence.expiring", "filing.province_mismatch"},
    "虚构未来许可有限公司": {"licence.issued_in_future", "names.mismatch"},
    "虚构个人备案科技有限公司": {"filing.nature", "psb.province_mismatch"},
    "虚构乱码数据有限公司": {"identifier.malformed"},
    "虚构外资智算有限公司": {"licence.foreign_invested"},
    "虚构备案冒充有限公司": {"licence.is_icp_filing", "licence.missing_item"},
    "虚构黑盒算力有限公司": {"disclosure.refused", "filing.missing"},
}
COMPLIANT = (
    "示例星河算力科技有限公司",
    "示例蓝海智算有限公司",
    "示例川云计算有限公司",
    "示例东数西算科技有限公司",
)


@pytest.fixture
def demo(session: Session) -> dict[str, int]:
    """The demo providers loaded; legal name -> id."""
    load_demo(session, today=date.today())
    return {p.legal_name: p.id for p in session.exec(select(Provider)).all()}


def _rules(session: Session, provider_id: int) -> dict[str, set[str]]:
    """Rule ids by severity, from the registry rules (and any fact-source failure)."""
    evaluation = checks.evaluate(session, provider_id=provider_id)
    ours = {*registry_rule_ids(), checks.FACT_ERROR_RULE}
    found: dict[str, set[str]] = {}
    for finding in evaluation.findings:
        if finding.rule_id not in ours:
            continue
        found.setdefault(finding.severity.value, set()).add(finding.rule_id)
    return found


def test_every_demo_red_flag_is_raised_and_compliant_demo_providers_pass(session, demo):
    for name, expected in DEMO_FLAGS.items():
        found = set().union(*_rules(session, demo[name]).values())
        assert expected <= found, (name, expected - found)
    raised_by_flagged = set().union(*DEMO_FLAGS.values())
    for name in COMPLIANT:
        found = _rules(session, demo[name])
        assert not found.get("blocker") and not found.get("warning"), (name, found)
        assert set(found.get("info", set())) <= REGISTRY_RULES_OF_COMPLIANT_DEMO
        assert not set().union(*found.values()) & raised_by_flagged


def test_run_check_stores_each_run_with_its_findings(session, demo):
    user = create_user(session, username="ana", password="correct horse battery", role="analyst")
    provider_id = demo["虚构吊销通信有限公司"]
    first = checks.run_check(session, provider_id=provider_id, user=user, today=date(2026, 1, 5))
    second = checks.run_check(session, provider_id=provider_id)
    assert first.verdict == "fail" and first.blockers == 2 and first.created_by_name == "ana"
    assert first.checked_on == date(2026, 1, 5) and first.rules_version.startswith("v1-")
    assert "licence.bad_status" in first.rule_ids and first.provider_version == 1
    assert [run.id for run in checks.check_history(session, provider_id=provider_id)] == [second.id, first.id]
    assert checks.latest_check(session, provider_id=provider_id).id == second.id
    latest = checks.latest_findings(session, provider_id=provider_id)
    assert latest and {f.check_run_id for f in latest} == {second.id}
    assert [f.severity for f in latest] == sorted((f.severity for f in latest), key=checks.SEVERITY_ORDER.get)
    bad = [f for f in latest if f.rule_id == "licence.bad_status"]
    assert {"吊销", "注销"} <= {e["value"] for f in bad for e in f.evidence}
    assert bad[0].red_flag == 4 and bad[0].message("en") == bad[0].message_en
    stored = session.exec(select(sa.func.count()).select_from(StoredFinding)).one()
    assert (
        stored
        == first.blockers + first.warnings + first.infos + second.blockers + second.warnings + second.infos
    )


def test_run_check_of_a_missing_provider_is_not_found(session):
    with pytest.raises(NotFound):
        checks.run_check(session, provider_id=424242)


def test_deleting_a_provider_removes_its_check_history(session, demo):
    from app.registry.providers import delete_provider

    provider_id = demo["虚构弹性算力有限公司"]
    checks.run_check(session, provider_id=provider_id)
    delete_provider(session, provider_id=provider_id, expected_version=1)
    assert session.exec(select(CheckRun).where(CheckRun.provider_id == provider_id)).all() == []


def test_fact_sources_feed_rules_and_a_failing_source_is_reported(session, demo, monkeypatch):
    seen = {}

    def probe(context):
        seen.update(context.facts)
        return iter(())

    monkeypatch.setitem(registry.RULES, "test.probe", registry.Rule("test.probe", "探针", "probe", probe))
    monkeypatch.setitem(facts.FACT_SOURCES, "test_value", lambda _s, provider: {"name": provider.legal_name})
    monkeypatch.setitem(facts.FACT_SOURCES, "test_nothing", lambda _s, _p: None)

    def broken(_session, _provider):
        raise RuntimeError("lookup store offline")

    monkeypatch.setitem(facts.FACT_SOURCES, "test_broken", broken)
    run = checks.run_check(session, provider_id=demo["示例星河算力科技有限公司"])
    assert seen["test_value"] == {"name": "示例星河算力科技有限公司"}
    assert "test_value" in run.fact_names and "test_nothing" not in run.fact_names
    assert "lookup store offline" in run.fact_errors["test_broken"]
    assert run.verdict == "needs_review"  # incomplete facts are never a silent pass
    warned = [
        f
        for f in checks.latest_findings(session, provider_id=run.provider_id)
        if f.subject == "facts:test_broken"
    ]
    assert (
        warned
        and warned[0].rule_id == checks.FACT_ERROR_RULE
        and "lookup store offline" in warned[0].message_zh
    )


def test_duplicate_fact_source_raises(monkeypatch):
    monkeypatch.setattr(facts, "FACT_SOURCES", {})
    facts.fact_source("x")(lambda _s, _p: 1)
    with pytest.raises(ValueError, match="registered twice"):
        facts.fact_source("x")(lambda _s, _p: 2)


# ---------------------------------------------------------------- overview
def _checked_demo(session, demo) -> None:
    for provider_id in demo.values():
        checks.run_check(session, provider_id=provider_id)


def test_overview_filters_by_verdict_rule_severity_province_and_name(session, demo):
    _checked_demo(session, demo)
    query = checks.parse_overview_query
    fail = checks.findings_overview(session, query=query({"verdict": "fail", "per_page": 100}))
    assert fail.total == len(fail.rows) > 0 and all(run.verdict == "fail" for run, _p in fail.rows)
    assert "虚构过期许可科技有限公司" in {p.legal_name for _r, p in fail.rows}
    expiring = checks.findings_overview(
        session, query=query({"view": "findings", "rule": "licence.expiring"})
    )
    assert [(f.rule_id, p.legal_name) for f, _r, p in expiring.rows] == [
        ("licence.expiring", "虚构临期算力有限公司")
    ]
    blockers = checks.findings_overview(
        session, query=query({"view": "findings", "severity": "blocker", "per_page": 100})
    )
    assert blockers.total > 5 and {f.severity for f, _r, _p in blockers.rows} == {"blocker"}
    guangdong = checks.findings_overview(session, query=query({"province": "粤"}))
    assert {p.legal_name for _r, p in guangdong.rows} == {
        "虚构弹性算力有限公司",
        "虚构过期许可科技有限公司",
        "虚构个人备案科技有限公司",
    }
    by_rule = checks.findings_overview(session, query=query({"rule": "licence.coverage"}))
    assert {p.legal_name for _r, p in by_rule.rows} == {"虚构跨省数据科技有限公司", "虚构全网算力有限公司"}
    assert all(by_rule.findings_by_run[run.id] for run, _p in by_rule.rows)
    named = checks.findings_overview(session, query=query({"q": "黑盒"}))
    assert [p.legal_name for _r, p in named.rows] == ["虚构黑盒算力有限公司"]
    page2 = checks.findings_overview(session, query=query({"per_page": 5, "page": 2}))
    assert len(page2.rows) == 5 and page2.total == len(demo) and page2.pages == 4 and page2.never_checked == 0


def test_overview_shows_only_the_latest_run_and_counts_never_checked(session, demo):
    provider_id = demo["虚构临期算力有限公司"]
    checks.run_check(session, provider_id=provider_id, today=date.today().replace(year=date.today().year - 3))
    checks.run_check(session, provider_id=provider_id)
    page = checks.findings_overview(session, query=checks.parse_overview_query({}))
    assert (
        len(page.rows) == 1 and page.rows[0][0].id == checks.latest_check(session, provider_id=provider_id).id
    )
    assert page.never_checked == len(demo) - 1


def test_overview_query_errors_name_the_field_and_accepted_values():
    with pytest.raises(InvalidInput) as caught:
        checks.parse_overview_query(
            {"verdict": "maybe", "rule": "nope", "province": "火星", "page": "0", "view": "x"}
        )
    fields = {error.field: error.message for error in caught.value.errors}
    assert set(fields) == {"verdict", "rule", "province", "page", "view"}
    assert "needs_review" in fields["verdict"] and "licence.expiring" in fields["rule"]


class _Counter:
    def __init__(self, engine):
        self.count = 0
        sa.event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, *_args):
        self.count += 1


def test_overview_sends_the_same_number_of_statements_for_few_and_many_rows(app, session, demo):
    counter = _Counter(app.extensions["gpuvet.engine"])
    ids = list(demo.values())
    counts = []
    for batch in (ids[:3], ids[3:]):
        for provider_id in batch:
            checks.run_check(session, provider_id=provider_id)
        for view in ("providers", "findings"):
            counter.count = 0
            with Session(app.extensions["gpuvet.engine"]) as fresh:
                checks.findings_overview(
                    fresh, query=checks.parse_overview_query({"view": view, "per_page": 100})
                )
            counts.append((view, counter.count))
    assert counts[:2] == counts[2:] and all(count <= 4 for _view, count in counts)


# ---------------------------------------------------------------- CLI
def test_cli_vet_check_prints_json_and_stores_a_run(app, session, demo):
    provider_id = demo["虚构外资智算有限公司"]
    result = app.test_cli_runner().invoke(args=["vet", "check", str(provider_id)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["provider_id"] == provider_id and data["verdict"] == "needs_review"
    assert "合字B1.B2" in result.output  # ensure_ascii=False: Chinese printed as is
    rules = {f["rule_id"] for f in data["findings"]}
    assert "licence.foreign_invested" in rules
    assert {"rule_id", "severity", "message_zh", "message_en", "how_to_verify_zh", "evidence"} <= set(
        data["findings"][0]
    )
    assert checks.latest_check(session, provider_id=provider_id).id == data["check_run_id"]


def test_cli_vet_check_dry_run_stores_nothing_and_bad_ids_fail(app, session, demo):
    runner = app.test_cli_runner()
    result = runner.invoke(
        args=["vet", "check", str(demo["虚构黑盒算力有限公司"]), "--dry-run", "--today", "2026-02-01"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["check_run_id"] is None
    assert session.exec(select(CheckRun)).all() == []
    missing = runner.invoke(args=["vet", "check", "999999"])
    assert missing.exit_code == 1 and "供应商 999999 不存在" in missing.output
    assert runner.invoke(args=["vet", "check", "abc"]).exit_code == 2


# ---------------------------------------------------------------- API
def test_api_latest_check_and_history(app, session, demo, token_for):
    provider_id = demo["虚构个人备案科技有限公司"]
    client = app.test_client()
    viewer = token_for("viewer")
    never = client.get(f"/api/v1/providers/{provider_id}/checks/latest", headers=viewer)
    assert never.status_code == 404 and never.get_json()["errors"][0]["field"] == "provider_id"
    first = checks.run_check(session, provider_id=provider_id)
    run = checks.run_check(session, provider_id=provider_id)
    latest = client.get(f"/api/v1/providers/{provider_id}/checks/latest", headers=viewer).get_json()
    assert latest["id"] == run.id and latest["verdict"] == "needs_review"
    assert {"filing.nature", "psb.province_mismatch"} <= {f["rule_id"] for f in latest["findings"]}
    history = client.get(f"/api/v1/providers/{provider_id}/checks", headers=viewer).get_json()
    assert [item["id"] for item in history["items"]] == [run.id, first.id]
    assert client.get(f"/api/v1/providers/{provider_id}/checks").status_code == 401
    assert client.get("/api/v1/providers/999999/checks", headers=viewer).status_code == 404
