"""A completed official lookup re-runs the credential check and counts as verified (issue 10 item 5)."""

from __future__ import annotations

from sqlmodel import func, select

from app.credentials import lookups as service
from app.credentials import verdicts
from app.models.checks import CheckRun
from app.models.evidence import LookupState


def test_a_completed_lookup_stores_a_new_check_run(lookup_app, session, provider, analyst, fake):
    assert "lookup" in verdicts.verdict_of(session, provider.id).unverified
    with lookup_app.app_context():
        lookup = service.start_lookup(
            session, provider_id=provider.id, kind="icp", query=None, user=analyst, max_failures=3
        )
        assert session.exec(select(func.count()).select_from(CheckRun)).one() == 0  # a captcha is no evidence
        lookup = service.submit_answer(
            session, lookup_id=lookup.id, answer=str(fake.icp_answer(lookup.captcha_uuid)), user=analyst
        )
    assert lookup.state == LookupState.completed, lookup.message
    runs = session.exec(select(CheckRun).where(CheckRun.provider_id == provider.id)).all()
    assert len(runs) == 1 and "icp_lookup" in runs[0].fact_names
    verdict = verdicts.verdict_of(session, provider.id)
    assert verdict.check_run_id == runs[0].id
    filing = next(item for item in verdict.items if item.kind == "icp_filing")
    assert filing.status == "verified" and filing.lookup_id == lookup.id
    # the ICP lookup verifies the filing it lists; the credit record is another lookup, still to make
    assert [item.kind for item in verdict.unverified_items if item.kind != "footer"] == ["credit"]
