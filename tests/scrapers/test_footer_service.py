"""The footer scrape as a background job: every page stored as immutable evidence, merged into the fact."""

from __future__ import annotations

import pytest
from sqlmodel import select

from app.accounts import users
from app.core.errors import InvalidInput
from app.credentials import evidence as service
from app.credentials.facts import gather_facts
from app.models.evidence import Evidence, EvidenceImmutable
from app.registry import providers as provider_service
from tests.core.jobs.fixtures import immediate_jobs  # noqa: F401 - re-exported fixture
from tests.fakes.web import SiteServer
from tests.scrapers.conftest import FOOTERS


@pytest.fixture
def site():
    with SiteServer(FOOTERS / "site") as server:
        yield server


@pytest.fixture
def scrape_app(immediate_jobs):  # noqa: F811 - pytest fixture injection
    app = immediate_jobs
    app.config["GPUVET_SETTINGS"] = app.config["GPUVET_SETTINGS"].model_copy(
        update={"fetch_allow_cidrs": ("127.0.0.0/8",), "fetch_min_interval_s": 0.0, "fetch_retries": 0}
    )
    return app


@pytest.fixture
def analyst(session):
    return users.create_user(session, username="analyst1", password="correct horse battery", role="analyst")


def _provider(session, website):
    return provider_service.create_provider(
        session,
        data={"legal_name": "陕西长安智算科技有限公司", "registered_province": "陕西", "website": website},
    )


def test_scrape_job_stores_every_page_and_the_fact_merges_them(scrape_app, session, site, analyst):
    provider = _provider(session, site.url("/"))
    with scrape_app.app_context():
        job = service.start_footer_scrape(session, provider_id=provider.id, user=analyst)
    assert job.state == "succeeded", job.error
    assert job.result["ok"] and len(job.result["evidence_ids"]) == 4
    query = select(Evidence).where(Evidence.provider_id == provider.id).order_by(Evidence.id)
    home, *linked = session.exec(query).all()
    assert home.purpose == "footer" and home.parent_id is None and home.url == site.url("/")
    assert [row.purpose for row in linked] == ["footer_page"] * 3
    assert all(row.parent_id == home.id for row in linked)
    assert {row.final_url.rsplit("/", 1)[1]: row.status for row in linked} == {
        "about.html": 200,
        "zizhi.html": 200,
        "license.html": 404,
    }
    missing = next(row for row in linked if row.status == 404)
    assert "404" in missing.error and missing.extracted is None
    assert home.triggered_by_name == "analyst1" and home.job_id == job.id and len(home.sha256) == 64
    assert home.body.startswith(b"<!DOCTYPE html>") and home.extracted["encoding"] == "gb18030"

    fact = gather_facts(session, provider)["footer"]
    assert fact["ok"] and fact["company_name"] == "陕西长安智算科技有限公司"
    by_number = {item["normalized"]: item for item in fact["identifiers"]}
    assert by_number["陕ICP备2020011223号-1"]["evidence"]["evidence_id"] == home.id
    about = next(row for row in linked if row.final_url.endswith("about.html"))
    assert by_number["陕B1-20210099"]["evidence"] == service.evidence_ref(about)
    assert by_number["91610131MA6W8H3T3G"]["kind"] == "uscc"


def test_evidence_cannot_be_changed_or_deleted(scrape_app, session, site, analyst):
    provider = _provider(session, site.url("/"))
    with scrape_app.app_context():
        service.start_footer_scrape(session, provider_id=provider.id, user=analyst)
    row = session.exec(select(Evidence).where(Evidence.provider_id == provider.id)).first()
    row.body = b"tampered"
    with pytest.raises(EvidenceImmutable):
        session.commit()
    session.rollback()
    with pytest.raises(EvidenceImmutable):
        session.delete(session.get(Evidence, row.id))
        session.commit()
    session.rollback()
    assert session.get(Evidence, row.id).body != b"tampered"


def test_evidence_goes_with_its_provider(scrape_app, session, site, analyst):
    provider = _provider(session, site.url("/"))
    with scrape_app.app_context():
        service.start_footer_scrape(session, provider_id=provider.id, user=analyst)
    provider_service.delete_provider(session, provider_id=provider.id)
    session.expire_all()
    assert session.exec(select(Evidence).where(Evidence.provider_id == provider.id)).all() == []


def test_a_refused_site_is_stored_as_a_failed_fetch_and_a_failed_fact(
    immediate_jobs,  # noqa: F811 - pytest fixture injection
    session,
    site,
    analyst,
):
    provider = _provider(session, site.url("/"))  # loopback, not allow-listed here
    with immediate_jobs.app_context():
        job = service.start_footer_scrape(session, provider_id=provider.id, user=analyst)
    assert job.state == "succeeded" and job.result["ok"] is False
    assert job.result["outcome"] == "failed" and "回环地址" in job.result["outcome_message_zh"]
    row = session.exec(select(Evidence).where(Evidence.provider_id == provider.id)).one()
    assert row.error_code == "blocked_address" and row.status is None and row.body == b""
    assert site.hits["/"] == 0
    fact = gather_facts(session, provider)["footer"]
    assert fact["ok"] is False and "回环地址" in fact["error"]


def test_no_website_is_a_field_error(scrape_app, session, analyst):
    provider = _provider(session, None)
    with scrape_app.app_context(), pytest.raises(InvalidInput) as missing:
        service.start_footer_scrape(session, provider_id=provider.id, user=analyst)
    assert missing.value.errors[0].field == "url"
    with scrape_app.app_context(), pytest.raises(InvalidInput) as bad:
        service.start_footer_scrape(session, provider_id=provider.id, user=analyst, url="ftp://x.example/")
    assert bad.value.errors[0].field == "url"
