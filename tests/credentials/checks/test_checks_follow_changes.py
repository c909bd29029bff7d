"""Checks follow every change (issue 24 item 4): editing a checked provider's records re-runs its check, and
an import queues a check of every provider it wrote."""

from __future__ import annotations

import io
import json
from datetime import date, timedelta

from sqlmodel import Session, func, select

from app.credentials import checks, verdicts
from app.models import Provider
from app.models.checks import CheckRun
from app.models.jobs import Job
from app.registry import providers
from app.registry.demo import load_demo
from app.registry.transfer.importing import import_providers
from tests.credentials.checks.test_verdicts import COMPLIANT


def _runs(session: Session, provider_id: int) -> int:
    session.expire_all()
    return session.exec(select(func.count()).where(CheckRun.provider_id == provider_id)).one()


def _compliant(session: Session) -> Provider:
    load_demo(session)
    return session.exec(select(Provider).where(Provider.legal_name == COMPLIANT)).one()


def test_a_licence_edited_to_expire_in_five_days_shows_at_once_without_a_click(app, session):
    provider = _compliant(session)
    checks.run_check(session, provider_id=provider.id)
    assert verdicts.verdict_of(session, provider.id).level == "pass"
    licence = provider.licences[0]
    data = {
        "number_raw": licence.number_raw,
        "business_items": licence.business_items,
        "coverage": licence.coverage,
        "b11_includes_resource_collab": licence.b11_includes_resource_collab,
        "expires_on": (date.today() + timedelta(days=5)).isoformat(),
    }
    with app.test_request_context():
        providers.save_child(
            session,
            provider_id=provider.id,
            collection="licences",
            child_id=licence.id,
            data=data,
            expected_version=provider.version,
        )
    verdict = verdicts.verdict_of(session, provider.id)
    assert verdict.level == "needs_review" and not verdict.outdated
    run = session.get(CheckRun, verdict.check_run_id)
    found = {finding.rule_id for finding in checks.run_findings(session, check_run_id=run.id)}
    assert "licence.expiring" in found


def test_an_edit_of_a_provider_never_checked_runs_no_check(app, session):
    provider = _compliant(session)
    with app.test_request_context():
        providers.update_provider(
            session, provider_id=provider.id, patch={"version": provider.version, "short_name": "星河"}
        )
    assert _runs(session, provider.id) == 0


def test_deleting_a_record_of_a_checked_provider_checks_it_again(app, session):
    provider = _compliant(session)
    checks.run_check(session, provider_id=provider.id)
    before = _runs(session, provider.id)
    with app.test_request_context():
        providers.delete_child(
            session,
            provider_id=provider.id,
            collection="licences",
            child_id=provider.licences[0].id,
            expected_version=provider.version,
        )
    assert _runs(session, provider.id) == before + 1
    assert verdicts.verdict_of(session, provider.id).level == "fail"  # no licence at all now


def test_an_import_queues_a_check_of_every_provider_it_wrote(app, session):
    document = {
        "providers": [
            {"legal_name": "示例导入一科技有限公司", "licences": [{"number_raw": "京B9-2025"}]},
            {"legal_name": "示例导入二科技有限公司"},
        ]
    }
    with app.test_request_context():
        report = import_providers(session, data=json.dumps(document, ensure_ascii=False), format="json")
    assert report.applied and report.created == 2
    written = sorted(session.exec(select(Provider.id)).all())
    job = session.exec(select(Job).where(Job.kind == "vetting.check_all")).one()
    assert job.params["provider_ids"] == written
    with app.test_request_context():
        result = checks.check_all_job(session, job, provider_ids=job.params["provider_ids"])
    assert result["checked"] == 2
    statuses = session.exec(select(Provider.status)).all()
    assert set(map(str, statuses)) == {"candidate"}


def test_the_import_preview_names_each_malformed_number_as_the_check_will(app, session, login):
    document = {
        "providers": [
            {"legal_name": "示例导入一科技有限公司", "licences": [{"number_raw": "京B9-2025"}]},
            {
                "legal_name": "示例导入二科技有限公司",
                "filings": [{"kind": "icp_filing", "number_raw": "京ICP备19012345号"}],
            },
        ]
    }
    with app.test_request_context():
        report = import_providers(
            session, data=json.dumps(document, ensure_ascii=False), format="json", dry_run=True
        )
    assert report.ok and report.new == 2  # a malformed number does not refuse the file
    (warning,) = report.warnings
    assert (warning.row, warning.field) == (1, "licences[0].number_raw")
    assert "红旗 9" in warning.message and "京B9-2025" in warning.message
    page = login("analyst").post(
        "/transfer/import",
        data={"file": (io.BytesIO(json.dumps(document, ensure_ascii=False).encode()), "p.json")},
        content_type="multipart/form-data",
    )
    html = page.get_data(as_text=True)
    assert 'id="import-warnings"' in html and "京B9-2025" in html
    # the check on the stored provider flags the same number
    with app.test_request_context():
        import_providers(session, data=json.dumps(document, ensure_ascii=False), format="json")
    provider = session.exec(select(Provider).where(Provider.legal_name == "示例导入一科技有限公司")).one()
    run = checks.run_check(session, provider_id=provider.id)
    flagged = [
        f for f in checks.run_findings(session, check_run_id=run.id) if f.rule_id == "identifier.malformed"
    ]
    assert [f.subject for f in flagged] == [f"licence:{provider.licences[0].id}"]
