"""Exports through the service (SQLite and PostgreSQL): numbering, hash, snapshot, audit, unverified items."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from sqlmodel import select

from app.core.errors import Conflict, InvalidInput, NotFound
from app.credentials import report_exports as service
from app.models import AuditEntry
from app.models.reports import ExportRecord, ReportKind
from app.registry.providers import create_provider, update_provider
from app.reports.assemble import snapshot_sha256
from tests.registry.conftest import BARE, awkward
from tests.reports.conftest import needs_poppler, pages_text, pdf_text, squash

pytestmark = needs_poppler

AUTHOR = service.Author(id=None, name="审计员")
NOW = datetime(2026, 3, 2, 6, 30, tzinfo=UTC)


def test_export_records_number_hash_snapshot_and_audit(session, renderer):
    provider = create_provider(session, data=awkward())
    first = service.export_provider_report(
        session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
    )
    second = service.export_provider_report(
        session, provider_id=provider.id, language="en", author=AUTHOR, renderer=renderer, now=NOW
    )
    assert (first.number, second.number) == ("GV-2026-000001", "GV-2026-000002")
    for record in (first, second):
        assert record.sha256 == hashlib.sha256(record.pdf_bytes).hexdigest()
        assert record.size_bytes == len(record.pdf_bytes) and record.pages >= 3
        assert record.kind == "provider" and record.subject_id == record.provider_id == provider.id
        assert record.subject_name == provider.legal_name and record.created_by == "审计员"
        snapshot = record.inputs_json
        assert snapshot["meta"]["number"] == record.number and snapshot["meta"]["language"] == record.language
        assert record.inputs_sha256 == snapshot_sha256(snapshot["inputs"])
        assert snapshot["inputs"]["provider"]["legal_name"] == provider.legal_name
        assert len(snapshot["inputs"]["offers"]) == 4
    assert first.inputs_sha256 == second.inputs_sha256  # same data, two languages

    session.expire_all()
    listed = service.list_exports(session, kind=ReportKind.provider, subject_id=provider.id)
    assert [record.number for record in listed] == ["GV-2026-000002", "GV-2026-000001"]
    stored = service.find_export(session, number="gv-2026-000001")
    assert service.verify_export(stored) and stored.id == first.id

    text = pdf_text(stored.pdf_bytes, first=1, last=1)
    assert "GV-2026-000001" in text and "审计员" in text and "示例“引号, 逗号”数据有限公司" in text

    entries = session.exec(select(AuditEntry).where(AuditEntry.entity == "export_record")).all()
    assert len(entries) == 2 and {entry.provider_id for entry in entries} == {provider.id}
    changes = entries[0].changes
    assert changes["number"] == [None, "GV-2026-000001"] and changes["sha256"] == [None, first.sha256]
    assert "pdf_bytes" not in changes and "inputs_json" not in changes


def test_provider_without_any_evidence_is_marked_unverified_throughout(session, renderer):
    provider = create_provider(session, data=BARE)
    record = service.export_provider_report(
        session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
    )
    assert record.verdict is None
    pages = pages_text(record.pdf_bytes)
    cover, body = pages[0], "\n".join(pages[1:])
    assert re.search(r"总体结论\s+未核验", cover) and re.search(r"资质核查\s+未核验", cover)
    assert re.search(r"实测\s+未测试", cover)
    sections = {
        name: body[body.index(start) : body.index(end)]
        for name, start, end in [
            ("licences", "1.2 增值电信业务经营许可证", "1.3"),
            ("filings", "1.3 ICP 备案与公网安备", "1.4"),
            ("certifications", "1.4 认证", "1.5"),
            ("datacenters", "1.5 机房", "2 核查发现"),
            ("findings", "2 核查发现", "3 标称与实测"),
            ("claims", "3 标称与实测", "4 图表"),
            ("checklist", "5 检查清单", "6 建议"),
            ("evidence", "A.1 证据清单", "A.2 数据来源"),
        ]
    }
    for name in ("licences", "filings", "certifications", "datacenters"):
        assert "未登记" in sections[name], name
    for name in ("findings", "claims", "checklist", "evidence"):
        assert "未核验" in sections[name], name
    assert "未登记任何套餐" in sections["claims"]
    assert "未登记" in squash(body[body.index("统一社会信用代码") :][:40])
    recommendations = squash(body[body.index("6 建议") : body.index("A 附录")])
    assert "尚未运行资质核查" in recommendations and "未登记增值电信业务经营许可证" in recommendations


def test_stored_check_run_gives_verdict_and_findings(session, renderer):
    from app.credentials.checks import latest_findings, run_check

    provider = create_provider(session, data=awkward())
    run = run_check(session, provider_id=provider.id)
    findings = latest_findings(session, provider_id=provider.id)
    assert findings, "the awkward provider raises red flags"
    record = service.export_provider_report(
        session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
    )
    assert record.verdict == run.verdict
    data = record.inputs_json["inputs"]["sources"]["checks"]
    assert data["status"] == "ok" and data["data"]["id"] == run.id
    assert len(data["data"]["findings"]) == len(findings)
    text = squash(pdf_text(record.pdf_bytes))
    verdict_label = {"fail": "不通过", "needs_review": "需人工复核", "pass": "通过"}[run.verdict]
    assert f"总体结论{verdict_label}" in text
    # each finding names its rule by title, not by its code
    from app.vetting.findings import load_rules

    title = load_rules()[findings[0].rule_id].title_zh
    assert f"规则:{squash(title)}" in text and findings[0].rule_id not in text


def test_html_view_of_an_export_shows_its_snapshot_not_todays_data(session, renderer):
    provider = create_provider(session, data=awkward())
    record = service.export_provider_report(
        session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
    )
    update_provider(
        session, provider_id=provider.id, patch={"version": provider.version, "legal_name": "改名后公司"}
    )
    html = service.export_html(record)
    assert "GV-2026-000001" in html and "示例“引号, 逗号”数据有限公司" in html and "改名后公司" not in html
    preview = service.provider_report_html(session, provider_id=provider.id, language="en", author=AUTHOR)
    assert "改名后公司" in preview and "Preview (not a recorded export)" in preview


def test_errors_name_the_field(session, renderer):
    provider = create_provider(session, data=BARE)
    with pytest.raises(InvalidInput) as caught:
        service.export_provider_report(
            session, provider_id=provider.id, language="fr", author=AUTHOR, renderer=renderer
        )
    assert caught.value.errors[0].field == "lang" and "zh" in caught.value.errors[0].message
    with pytest.raises(NotFound):
        service.export_provider_report(
            session, provider_id=999_999, language="zh", author=AUTHOR, renderer=renderer
        )
    with pytest.raises(NotFound):
        service.get_export(session, export_id=12345)
    assert session.exec(select(ExportRecord)).all() == []


def test_number_taken_meanwhile_is_retried_then_refused(session, renderer, monkeypatch):
    provider = create_provider(session, data=BARE)
    service.export_provider_report(
        session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
    )
    real = service._next_seq
    answers = iter([1])  # first attempt collides with GV-2026-000001, the retry asks the database again
    monkeypatch.setattr(service, "_next_seq", lambda s, year: next(answers, None) or real(s, year))
    record = service.export_provider_report(
        session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
    )
    assert record.number == "GV-2026-000002"
    monkeypatch.setattr(service, "_next_seq", lambda s, year: 1)
    monkeypatch.setattr(service, "NUMBER_ATTEMPTS", 2)
    with pytest.raises(Conflict):
        service.export_provider_report(
            session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
        )
    assert len(session.exec(select(ExportRecord)).all()) == 2


def test_changed_pdf_fails_verification(session, renderer):
    provider = create_provider(session, data=BARE)
    record = service.export_provider_report(
        session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
    )
    session.execute(
        sa.update(ExportRecord)
        .where(ExportRecord.id == record.id)
        .values(pdf_bytes=record.pdf_bytes + b"%tamper")
    )
    session.commit()
    session.expire_all()
    assert not service.verify_export(service.get_export(session, export_id=record.id))


def test_case_report_has_answers_arithmetic_ranking_checklist_and_faq(session, renderer):
    from app.cases import cases
    from app.registry.demo import load_demo
    from tests.cases.conftest import example

    load_demo(session)
    case = cases.create_case(
        session, answers=example("distributed_training"), owner=cases.Actor(None, "alice")
    )
    record = service.export_case_report(
        session, case_id=case.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
    )
    assert (record.kind, record.subject_id, record.provider_id) == ("case", case.id, None)
    assert record.subject_name == case.title and record.number == "GV-2026-000001"
    advice = record.inputs_json["inputs"]["advice"]
    pages = pages_text(record.pdf_bytes)
    text = "\n".join(pages)
    assert "GPU 算力采购需求评估报告" in pages[0] and case.title in pages[0] and "GV-2026-000001" in pages[0]
    assert "4 节点 × 8 卡 = 32" in text  # a requirement with its arithmetic
    first = next(offer for offer in advice["offers"] if not offer["excluded"])
    assert first["offer_name"] in text and first["provider_name"] in squash(text)
    excluded = next(offer for offer in advice["offers"] if offer["excluded"])
    assert squash(excluded["excluded_because"][0]["message_zh"][:12]) in squash(text)
    assert squash(advice["checklist"][0]["title_zh"][:12]) in squash(text)
    assert squash(advice["faq"][0]["question_zh"]) in squash(text)
    listed = service.list_exports(session, kind=ReportKind.case, subject_id=case.id)
    assert [item.id for item in listed] == [record.id]


def test_a_case_report_keeps_and_lists_the_leading_offers_and_counts_the_rest(session, renderer, monkeypatch):
    from app.cases import cases, report_inputs
    from app.registry.demo import load_demo
    from app.reports import case_document
    from tests.cases.conftest import example

    monkeypatch.setattr(report_inputs, "CASE_REPORT_OFFERS", 2)
    monkeypatch.setattr(case_document, "MAX_EXCLUDED", 1)
    load_demo(session)
    case = cases.create_case(
        session, answers=example("distributed_training"), owner=cases.Actor(None, "alice")
    )
    whole = cases.advise_case(session, case_id=case.id, today=NOW.date())
    assert len(whole.excluded) > 2  # the demo registry has more than the report keeps
    record = service.export_case_report(
        session, case_id=case.id, language="en", author=AUTHOR, renderer=renderer, now=NOW
    )
    advice = record.inputs_json["inputs"]["advice"]
    kept = [offer for offer in advice["offers"] if offer["excluded"]]
    assert len(kept) == 2 and len(advice["offers"]) <= 4
    assert advice["summary"]["excluded"] == len(whole.excluded)  # the counts cover every offer
    text = squash(pdf_text(record.pdf_bytes))
    assert squash(f"{len(whole.excluded) - 1} more excluded offers are not listed") in text


def test_unfinished_case_is_refused_with_the_step(session, renderer):
    from app.cases import cases

    case = cases.start_case(session, workload={"kind": "distributed_training"}, owner=cases.Actor(None, "a"))
    with pytest.raises(InvalidInput) as caught:
        service.export_case_report(session, case_id=case.id, language="en", author=AUTHOR, renderer=renderer)
    assert caught.value.errors[0].field == "step"
    with pytest.raises(NotFound):
        service.export_case_report(session, case_id=987654, language="zh", author=AUTHOR, renderer=renderer)


def test_finished_benchmark_runs_feed_the_report(session, renderer):
    from app.models.trials import BenchRun, BenchStep, RunState, TrialServer
    from tests.reports.test_measurements import run_record, stability_run, standard_run

    provider = create_provider(session, data=awkward())
    offer = provider.offers[0]  # H800 x 8, 200.5 Gbps intranet, 2,000,000 IOPS
    server = TrialServer(
        provider_id=provider.id, offer_id=offer.id, name="试用机A", host="10.0.0.5", secret_encrypted="x"
    )
    session.add(server)
    session.flush()
    for suite, samples, state in (
        ("standard", standard_run(), RunState.succeeded),
        ("stability", stability_run(), RunState.succeeded),
        ("standard", standard_run(), RunState.failed),  # not finished well: ignored
    ):
        record = run_record(0, suite, samples)
        run = BenchRun(
            trial_server_id=server.id,
            provider_id=provider.id,
            offer_id=offer.id,
            suite=suite,
            state=state,
            claims=record["claims"],
            comparisons=record["comparisons"],
        )
        session.add(run)
        session.flush()
        session.add(BenchStep(run_id=run.id, step=suite, probe="recorded", samples=record["samples"]))
    session.commit()

    export = service.export_provider_report(
        session, provider_id=provider.id, language="zh", author=AUTHOR, renderer=renderer, now=NOW
    )
    source = export.inputs_json["inputs"]["sources"]["measurements"]
    assert source["status"] == "ok" and [run["suite"] for run in source["data"]["runs"]] == [
        "standard",
        "stability",
    ]
    claims = {(claim["offer_id"], claim["metric"]): claim for claim in source["data"]["claims"]}
    assert claims[(offer.id, "intranet_gbps")]["value"] == 96.5
    text = pdf_text(export.pdf_bytes)
    assert "96.5" in text and "吞吐随时间变化" in text and "GPU 利用率随时间变化" in text
    assert "实测不符合标称" in squash(text)
