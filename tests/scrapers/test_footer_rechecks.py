"""A footer scrape re-runs the credential check and counts as verified (issue 10 item 5)."""

from __future__ import annotations

from sqlmodel import select

from app.credentials import evidence as service
from app.credentials import verdicts
from app.models.checks import CheckRun
from tests.core.jobs.fixtures import immediate_jobs  # noqa: F401 - re-exported fixture
from tests.scrapers.test_footer_service import _provider, analyst, scrape_app, site  # noqa: F401 - fixtures


def test_a_footer_scrape_stores_a_new_check_run(scrape_app, session, site, analyst):  # noqa: F811
    provider = _provider(session, site.url("/"))
    assert "footer" in verdicts.verdict_of(session, provider.id).unverified
    with scrape_app.app_context():
        job = service.start_footer_scrape(session, provider_id=provider.id, user=analyst)
    assert job.state == "succeeded", job.error
    runs = session.exec(select(CheckRun).where(CheckRun.provider_id == provider.id)).all()
    assert len(runs) == 1 and "footer" in runs[0].fact_names
    verdict = verdicts.verdict_of(session, provider.id)
    # the provider holds no licence, filing or offer: the footer is verified, the credit record is not
    assert verdict.check_run_id == runs[0].id and verdict.unverified == ("lookup",)
    statuses = [(item.subject, item.status) for item in verdict.items]
    assert statuses == [("footer", "verified"), ("credit", "unverified")]
