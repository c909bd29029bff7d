"""One provider verdict (issue 10 item 5): honest about coverage, the same on every page and the PDF cover,
per-record statuses that agree with the findings, and a check that re-runs when new evidence lands."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from html import escape
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, func, select

from app.credentials import checks, rechecks, verdicts
from app.credentials import report_exports as reports
from app.models import Provider
from app.models.checks import CheckRun
from app.models.evidence import Lookup, LookupKind, LookupState
from app.registry.demo import load_demo
from app.trials import bench_uploads

DATA = Path(__file__).resolve().parents[2] / "data" / "bench"
COMPLIANT = "示例星河算力科技有限公司"
# Each item still unverified is named, four of them, then a count (issue 24: never a whole category).
REGISTRY_ONLY_ZH = (
    "通过（仅依据登记数据；未核实：许可证 京B1.B2-20259901 未经官方查询；"
    "ICP 备案 京ICP备2025099901号-1 未经官方查询；网站页脚 https://xinghe-compute.example 未核查；"
    "公安备案 京公网安备11010802099901号 待人工核实；等 19 项）"
)
REGISTRY_ONLY_EN = (
    "passes on registry data; not verified: licence 京B1.B2-20259901 not looked up; ICP filing "
    "京ICP备2025099901号-1 not looked up; website footer https://xinghe-compute.example not checked; "
    "public-security filing 京公网安备11010802099901号 to be verified by hand; and 19 more"
)


@pytest.fixture
def compliant(session: Session) -> Provider:
    """The compliant demo provider, checked once on its registry data only."""
    load_demo(session)
    provider = session.exec(select(Provider).where(Provider.legal_name == COMPLIANT)).one()
    checks.run_check(session, provider_id=provider.id)
    return provider


def _check_runs(session: Session, provider_id: int) -> int:
    session.expire_all()
    return session.exec(select(func.count()).where(CheckRun.provider_id == provider_id)).one()


def _upload_gpus(session: Session, provider: Provider):
    offer = next(offer for offer in provider.offers if offer.gpu_model == "H800")
    raw = (DATA / "nvidia-smi" / "inventory_8xh800.csv").read_bytes()  # 8 x H800, as claimed
    return bench_uploads.upload_output(session, offer_id=offer.id, tool="nvidia-smi", output=raw)


def test_a_provider_with_only_registry_data_says_so(session, compliant):
    verdict = verdicts.verdict_of(session, compliant.id)
    assert verdict.level == "pass" and verdict.unverified == ("lookup", "footer", "trial")
    assert verdict.label("zh") == REGISTRY_ONLY_ZH and verdict.label("en") == REGISTRY_ONLY_EN


def test_an_unchecked_provider_and_a_failing_one_carry_no_coverage_note(session, compliant):
    other = session.exec(select(Provider).where(Provider.legal_name == "虚构吊销通信有限公司")).one()
    assert verdicts.verdict_of(session, other.id).label("zh") == "未核验"
    checks.run_check(session, provider_id=other.id)
    assert verdicts.verdict_of(session, other.id).label("en") == "fails"


def test_the_check_reruns_when_an_upload_lands_and_names_what_is_still_unverified(session, compliant):
    before = _check_runs(session, compliant.id)
    run = _upload_gpus(session, compliant)
    assert _check_runs(session, compliant.id) == before + 1
    verdict = verdicts.verdict_of(session, compliant.id)
    # one uploaded output vouches for what it measured (by hand), never for the whole trial
    assert verdict.level == "pass" and verdict.unverified == ("lookup", "footer", "trial")
    by_subject = {item.subject: item for item in verdict.items}
    assert by_subject[f"offer:{run.offer_id}:gpu_count"].status == "verified_by_hand"
    assert by_subject[f"offer:{run.offer_id}:intranet_gbps"].status == "unverified"
    assert verdict.label("zh").startswith("通过（未核实：许可证 京B1.B2-20259901 未经官方查询；")
    # idempotent: the same evidence does not store a second run
    assert rechecks.recheck(session, provider_id=compliant.id, since=run.finished_at, cause="test") is None
    assert _check_runs(session, compliant.id) == before + 1


def test_a_failing_recheck_never_fails_the_upload(session, compliant, monkeypatch):
    before = _check_runs(session, compliant.id)

    def broken(*_args, **_kwargs):
        raise RuntimeError("rules exploded")

    monkeypatch.setattr(checks, "run_check", broken)
    run = _upload_gpus(session, compliant)
    assert run.id is not None and run.state == "succeeded"
    assert _check_runs(session, compliant.id) == before


def test_verdicts_of_a_page_takes_a_constant_number_of_statements(session, compliant):
    ids = list(session.exec(select(Provider.id)).all())
    engine = session.get_bind()
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args):
        statements.append(statement)

    def statements_for(provider_ids: list[int]) -> tuple[dict, int]:
        statements.clear()
        sa.event.listen(engine, "before_cursor_execute", count)
        try:
            found = verdicts.verdicts_of(session, provider_ids)
        finally:
            sa.event.remove(engine, "before_cursor_execute", count)
        return found, len(statements)

    found, many = statements_for(ids)
    _one, single = statements_for(ids[:1])
    assert set(found) == set(ids) and len(ids) >= 10
    assert many == single and many <= 12


def test_a_verdict_page_finds_the_latest_check_runs_once_through_the_pointer(session, compliant):
    checks.run_check(session, provider_id=compliant.id)
    latest = checks.run_check(session, provider_id=compliant.id)
    engine = session.get_bind()
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args):
        statements.append(statement)

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        found = verdicts.verdicts_of(session, [compliant.id])[compliant.id]
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    finding_latest = [
        s for s in statements if "latest_check_run_id" in s or re.search(r"max\(check_run\.id\)", s)
    ]
    pointer = session.exec(select(Provider.latest_check_run_id).where(Provider.id == compliant.id)).one()
    assert found.check_run_id == latest.id == pointer
    assert len(finding_latest) == 1 and "latest_check_run_id" in finding_latest[0]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_list_overview_credentials_and_pdf_cover_show_the_same_verdict(app, login, session, compliant):
    client = login("viewer")
    listing = client.get("/providers?per_page=100").get_data(as_text=True)
    overview = _text(client.get(f"/providers/{compliant.id}").get_data(as_text=True))
    credentials = _text(client.get(f"/providers/{compliant.id}/credentials").get_data(as_text=True))
    html = reports.provider_report_html(
        session, provider_id=compliant.id, language="zh", author=reports.Author(None, "测试")
    )
    cover = re.search(r'id="verdict">([^<]*)<', html)
    assert cover is not None and cover.group(1) == REGISTRY_ONLY_ZH
    for page in (overview, credentials):
        assert REGISTRY_ONLY_ZH in page
    # The list shows a short pill; the whole worded verdict is its title (the same words).
    assert f'title="{escape(REGISTRY_ONLY_ZH)}"' in listing
    english = reports.provider_report_html(
        session, provider_id=compliant.id, language="en", author=reports.Author(None, "test")
    )
    assert re.search(r'id="verdict">([^<]*)<', english).group(1) == REGISTRY_ONLY_EN


def test_a_licence_warned_about_by_number_is_not_shown_as_clean(app, login, session, compliant):
    licence = next(lic for lic in compliant.licences if lic.number)
    expires = (date.today() + timedelta(days=30)).isoformat()
    session.add(
        Lookup(
            provider_id=compliant.id,
            kind=LookupKind.licence,
            query=compliant.legal_name,
            state=LookupState.completed,
            completed_at=datetime.now(UTC),
            records=[
                {
                    "licenceNo": licence.number,
                    "companyName": compliant.legal_name,
                    "status": "正常",
                    "expiryDate": expires,
                }
            ],
        )
    )
    session.commit()
    run = checks.run_check(session, provider_id=compliant.id)
    (warned,) = [
        f for f in checks.run_findings(session, check_run_id=run.id) if f.rule_id == "lookup.licence_expiring"
    ]
    assert warned.subject == f"licence_lookup:{licence.number}"  # named by number, not by record id
    verdict = verdicts.verdict_of(session, compliant.id)
    items = {item.subject: item for item in verdict.items}
    assert items[f"licence:{licence.id}"].status == "verified"  # listed by the lookup; expiry is a finding
    assert "lookup" in verdict.unverified  # the licence lookup never clears the ICP and PSB filings
    html = reports.provider_report_html(
        session, provider_id=compliant.id, language="zh", author=reports.Author(None, "测试")
    )
    row = re.search(r'<table id="licences">.*?</table>', html, re.S).group(0)
    assert "核查未发现问题" not in row and warned.message_zh in row
    page = login("viewer").get(f"/providers/{compliant.id}").get_data(as_text=True)
    cell = re.search(rf'data-record="licence:{licence.id}">(.*?)</td>', page, re.S).group(1)
    assert "核查未发现问题" not in cell and 'data-state="warning"' in cell and warned.message_zh in cell


def test_a_licence_named_only_by_number_in_a_finding_gets_that_finding():
    from app.vetting.subjects import findings_by_record, record_numbers

    numbers = record_numbers([("licence", 3, "京B1.B2-20180001"), ("filing", 5, "京ICP备10046444号")])
    found = findings_by_record(
        [
            {"severity": "warning", "subject": "licence_lookup:京B1.B2-20180001", "evidence": []},
            {"severity": "info", "subject": "footer:icp_filing:京ICP备10046444号-1", "evidence": []},
            {
                "severity": "blocker",
                "subject": "item:B11",
                "evidence": [{"kind": "registry", "entity": "licence", "id": 3}],
            },
        ],
        numbers,
    )
    assert [f["severity"] for f in found["licence:3"]] == ["blocker", "warning"]
    assert [f["severity"] for f in found["filing:5"]] == ["info"]


def test_a_trial_without_the_claimed_gpus_fails_on_the_cover_and_the_list(app, login, session, compliant):
    from tests.credentials.checks.test_benchmark_findings import executed_run

    offer = next(offer for offer in compliant.offers if offer.gpu_model == "H800")
    executed_run(session, compliant, offer, ("inventory", "inventory_no_gpu.txt", {}))
    checks.run_check(session, provider_id=compliant.id)
    html = reports.provider_report_html(
        session, provider_id=compliant.id, language="zh", author=reports.Author(None, "测试")
    )
    assert re.search(r'id="verdict">([^<]*)<', html).group(1) == "不通过"
    assert "0 块 GPU" in html
    row = re.search(
        rf'<a class="fw-semibold" href="/providers/{compliant.id}">.*?</tr>',
        login("viewer").get("/providers?per_page=100").get_data(as_text=True),
        re.S,
    )
    assert 'data-level="fail"' in row.group(0) and "不通过" in row.group(0)


def test_vet_check_prints_the_verdict_as_the_pages_show_it(app, session, compliant):
    import json

    result = app.test_cli_runner().invoke(args=["vet", "check", str(compliant.id)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    assert out["verdict"] == "pass" and out["verdict_label_zh"] == REGISTRY_ONLY_ZH
    assert out["verdict_label_en"] == REGISTRY_ONLY_EN and out["unverified"] == ["lookup", "footer", "trial"]
