"""Batched check runs (the daily re-check) store the runs, findings and events run_check stores one by one."""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from app.core.jobs import JobCancelled
from app.credentials import check_batch, checks
from app.credentials.batch_facts import BATCH_SOURCES
from app.credentials.evidence import FOOTER_HOME, FOOTER_PAGE
from app.models import Licence, Provider
from app.models.checks import CheckRun, StoredFinding
from app.models.credit import CreditRecord
from app.models.evidence import Evidence, Lookup, LookupKind, LookupState
from app.models.jobs import Job, JobState
from app.models.watch import ChangeEvent
from app.registry.demo import load_demo
from app.trials import bench_uploads, campaigns
from tests.credentials.checks.test_benchmark_findings import INTRANET, executed_run
from tests.disclosure.test_review import submitted

DAY_ONE, DAY_TWO = date(2026, 12, 1), date(2026, 12, 2)
BENCH = Path(__file__).resolve().parents[2] / "data" / "bench"


def _evidence(provider_id: int, purpose: str, url: str, *, fetched: datetime, **fields) -> Evidence:
    body = url.encode()
    return Evidence(
        provider_id=provider_id,
        purpose=purpose,
        method="GET",
        url=url,
        final_url=url,
        status=200,
        sha256=hashlib.sha256(body).hexdigest(),
        size=len(body),
        body=body,
        fetched_at=fetched,
        triggered_by_name="test",
        **fields,
    )


def _footer(session: Session, provider_id: int, *, at: datetime, icp: str, company: str) -> None:
    """A stored footer scrape: the home page and one page it followed."""
    home = _evidence(
        provider_id,
        FOOTER_HOME,
        f"https://p{provider_id}.example/",
        fetched=at,
        extracted={"identifiers": [{"kind": "icp_filing", "normalized": icp, "source": "text"}]},
    )
    session.add(home)
    session.flush()
    page = {"identifiers": [], "company_name": company}
    session.add(
        _evidence(
            provider_id,
            FOOTER_PAGE,
            f"https://p{provider_id}.example/about",
            fetched=at,
            extracted=page,
            parent_id=home.id,
        )
    )
    session.commit()


def _lookup(
    session: Session,
    provider_id: int,
    kind: LookupKind,
    state: LookupState,
    *,
    at: datetime,
    records,
    evidence=True,
) -> None:
    result = None
    if evidence:
        result = _evidence(provider_id, "lookup", f"https://beian.example/{provider_id}/{kind}", fetched=at)
        session.add(result)
        session.flush()
    extra = {"manual": {"by": "analyst1", "looked_at": at.isoformat()}} if state == LookupState.manual else {}
    session.add(
        Lookup(
            provider_id=provider_id,
            kind=kind,
            query="q",
            state=state,
            records=records,
            result_evidence_id=result.id if result else None,
            captcha_extra=extra,
            completed_at=at,
        )
    )
    session.commit()


@pytest.fixture
def arranged(session: Session) -> dict[str, int]:
    """The demo providers with footer scrapes, official lookups (automatic and manual) and benchmark runs."""
    load_demo(session, today=DAY_ONE)
    ids = {p.legal_name: p.id for p in session.exec(select(Provider).order_by(Provider.id)).all()}
    first, second, third, fourth = list(ids.values())[:4]
    start = datetime(2026, 11, 1, tzinfo=UTC)
    _footer(session, first, at=start, icp="京ICP备00000001号", company="旧公司")
    _footer(session, first, at=start + timedelta(days=7), icp="京ICP备19012345号-1", company="别的公司")
    _footer(session, second, at=start, icp="沪ICP备12345678号", company="")
    records = [{"unitName": "别的公司", "natureName": "个人", "serviceLicence": "京ICP备19012345号-1"}]
    _lookup(session, first, LookupKind.icp, LookupState.completed, at=start, records=[])
    _lookup(
        session, first, LookupKind.icp, LookupState.completed, at=start + timedelta(days=1), records=records
    )
    _lookup(session, second, LookupKind.icp, LookupState.manual, at=start, records=[], evidence=False)
    _lookup(session, third, LookupKind.licence, LookupState.manual, at=start, records=[])
    _lookup(
        session, third, LookupKind.licence, LookupState.completed, at=start, records=[{"companyName": "x"}]
    )
    compliant = session.get(Provider, ids["示例星河算力科技有限公司"])
    offer = next(offer for offer in compliant.offers if offer.gpu_model == "H800")
    trial = executed_run(session, compliant, offer, ("iperf3", "iperf3_single.json", INTRANET))
    campaigns.demo_campaign(session, server_id=trial.trial_server_id)  # a finished peak-hour campaign
    revoked = session.get(Provider, third)  # a credit record: the "credit" fact
    session.add(
        CreditRecord(
            provider_id=third, source="gsxt", uscc=revoked.uscc, registration_status="吊销", looked_at=start
        )
    )
    declared = submitted(session, provider_id=second)  # a reviewed questionnaire: the "disclosure" fact
    declared.status, declared.reviewed_at = "reviewed", datetime.now(UTC)
    session.add(declared)
    session.commit()
    bench_uploads.upload_output(
        session, offer_id=offer.id, tool="fio", output=(BENCH / "fio_randread.json").read_bytes()
    )
    other = session.get(Provider, fourth)
    if other.offers:
        bench_uploads.upload_output(
            session,
            offer_id=other.offers[0].id,
            tool="iperf3",
            output=(BENCH / "iperf3_single.json").read_bytes(),
            path="intranet",
        )
    return ids


def _snapshot(session: Session, run_ids: list[int]) -> dict[int, tuple]:
    """What a set of runs stored, by provider, without ids and times (they differ between two stores)."""
    runs = session.exec(select(CheckRun).where(sa.column("id").in_(run_ids))).all()
    result = {}
    for run in runs:
        findings = session.exec(
            select(StoredFinding).where(StoredFinding.check_run_id == run.id).order_by(StoredFinding.position)
        ).all()
        events = session.exec(
            select(ChangeEvent).where(ChangeEvent.check_run_id == run.id).order_by(ChangeEvent.dedupe_key)
        ).all()
        result[run.provider_id] = (
            run.model_dump(exclude={"id", "created_at"}),
            [f.model_dump(exclude={"id", "check_run_id"}) for f in findings],
            [
                e.model_dump(exclude={"id", "created_at", "check_run_id"})
                | {"dedupe_key": e.dedupe_key.replace(f"run:{run.id}:", "run:")}
                for e in events
            ],
        )
    return result


def _forget(session: Session, run_ids: list[int]) -> None:
    session.execute(sa.delete(ChangeEvent).where(ChangeEvent.check_run_id.in_(run_ids)))
    session.execute(sa.delete(StoredFinding).where(StoredFinding.check_run_id.in_(run_ids)))
    session.execute(sa.delete(CheckRun).where(CheckRun.id.in_(run_ids)))
    session.commit()


def test_a_batch_stores_what_run_check_stores_one_by_one(session: Session, arranged: dict[str, int]):
    ids = sorted(arranged.values())
    for provider_id in ids[::2]:  # half have a previous run, so changes are recorded against it
        checks.run_check(session, provider_id=provider_id, today=DAY_ONE)
    expired = session.exec(select(Licence).where(Licence.provider_id == ids[0])).first()
    expired.expires_on = DAY_TWO - timedelta(days=1)  # a change: the verdict and findings move
    session.add(expired)
    session.commit()

    batch = check_batch.check_providers(session, ids, today=DAY_TWO, chunk=5)
    assert batch.runs == len(ids) and sum(batch.verdicts.values()) == len(ids)
    batched = _snapshot(session, batch.run_ids)
    assert batch.events == sum(len(events) for _run, _findings, events in batched.values()) > 0
    _forget(session, batch.run_ids)
    singles = [checks.run_check(session, provider_id=i, today=DAY_TWO).id for i in ids]
    one_by_one = _snapshot(session, singles)

    assert set(batched) == set(ids)
    for provider_id in ids:
        assert batched[provider_id] == one_by_one[provider_id], provider_id
    fact_names = {name for run, _f, _e in batched.values() for name in run["fact_names"]}
    assert set(BATCH_SOURCES) <= fact_names  # every batch source used


def test_statements_per_chunk_do_not_grow_with_providers(app, session: Session, arranged: dict[str, int]):
    ids = sorted(arranged.values())
    engine = app.extensions["gpuvet.engine"]
    seen: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        counts = []
        for part in (ids[:3], ids):
            seen.clear()
            check_batch.check_providers(session, part, today=DAY_TWO)
            counts.append(len(seen))
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    assert counts[0] == counts[1] < 45, counts  # 42 on PostgreSQL (a savepoint per source) with "credit"


def test_the_check_all_job_reports_progress_per_chunk_and_stops_when_cancelled(
    session: Session, arranged, monkeypatch
):
    monkeypatch.setattr(check_batch, "CHUNK", 4)
    ids = sorted(arranged.values())
    job = Job(kind="vetting.check_all", params={}, state=JobState.running)
    session.add(job)
    session.commit()
    result = checks.check_all_job(session, job, today=DAY_TWO.isoformat())
    assert result["checked"] == len(ids) and sum(result["verdicts"].values()) == len(ids)
    assert job.progress == {"done": len(ids), "total": len(ids), "current": ""}
    runs = session.exec(select(CheckRun).where(CheckRun.job_id == job.id)).all()
    assert sorted(run.provider_id for run in runs) == ids and {run.checked_on for run in runs} == {DAY_TWO}

    job.cancel_requested = True
    session.add(job)
    session.commit()
    with pytest.raises(JobCancelled, match=f"0/{len(ids)}"):
        checks.check_all_job(session, job, today=DAY_TWO.isoformat())
    assert len(session.exec(select(CheckRun).where(CheckRun.job_id == job.id)).all()) == len(ids)


def test_a_provider_deleted_before_its_chunk_is_left_out(session: Session, arranged):
    ids = sorted(arranged.values())
    session.delete(session.get(Provider, ids[-1]))
    session.commit()
    outcome = check_batch.check_providers(session, ids, today=DAY_TWO)
    assert outcome.runs == len(ids) - 1
