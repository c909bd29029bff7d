"""Daily re-check performance: rules over every provider, runs and change events stored (<= 10 s at 5,000).

Usage:
    .venv/bin/python perf/recheck_perf.py                      # SQLite file in a temporary folder
    .venv/bin/python perf/recheck_perf.py --providers 5000 --sample 200
    .venv/bin/python perf/recheck_perf.py --database-url postgresql+psycopg://...   # an EMPTY database

Seeds providers with perf/registry_perf.py's bulk inserts (a licence, an ICP filing, a datacenter and 4
offers each), gives every provider a stored footer scrape (home page plus one followed page, as the weekly
scrape leaves) and every other one an official ICP lookup with its stored reply, then:
  1. a first daily re-check (day 1: every run is a first snapshot);
  2. a tenth of the licences expire and a tenth of the scrapes change, then the timed daily re-check
     (day 2): the job's own code path (checks.check_all_job), with runs, findings and change events stored;
  3. the old per-provider path (checks.run_check) on --sample providers, extrapolated to all, for the ratio.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import sqlalchemy as sa  # noqa: E402
from sqlmodel import Session, func, select  # noqa: E402

from app.credentials import checks  # noqa: E402
from app.models import Licence  # noqa: E402
from app.models.checks import CheckRun, StoredFinding  # noqa: E402
from app.models.evidence import Evidence, Lookup  # noqa: E402
from app.models.jobs import Job, JobState  # noqa: E402
from app.models.watch import ChangeEvent  # noqa: E402
from perf.registry_perf import StatementCounter, build_app, reset_schema, seed  # noqa: E402

TARGET_S = 10.0
DAY_ONE, DAY_TWO = date(2026, 12, 1), date(2026, 12, 2)


def _evidence_row(pid: int, purpose: str, url: str, at: datetime, **extra: Any) -> dict[str, Any]:
    return {
        "provider_id": pid,
        "purpose": purpose,
        "method": "GET",
        "url": url,
        "final_url": url,
        "status": 200,
        "content_type": "text/html",
        "headers": {},
        "redirects": [],
        "peer": "",
        "sha256": f"{pid:064d}",
        "size": 0,
        "truncated": False,
        "body": b"",
        "fetched_at": at,
        "elapsed_ms": 10,
        "triggered_by_name": "perf",
        **extra,
    }


def seed_evidence(url: str, count: int, at: datetime, *, changed_share: int = 0) -> None:
    """A footer scrape per provider (the weekly schedule's), and an ICP lookup for every other provider."""
    engine = sa.create_engine(url)
    table = Evidence.__table__
    with engine.begin() as connection:
        homes = []
        for pid in range(1, count + 1):
            number = (
                f"京ICP备{pid:08d}号" if not changed_share or pid % changed_share else f"沪ICP备{pid:08d}号"
            )
            extracted = {"identifiers": [{"kind": "icp_filing", "normalized": number, "source": "text"}]}
            homes.append(_evidence_row(pid, "footer", f"https://p{pid}.example.cn/", at, extracted=extracted))
        home_ids = [row.id for row in connection.execute(sa.insert(table).returning(table.c.id), homes)]
        home_of = dict(zip(range(1, count + 1), sorted(home_ids), strict=True))
        pages = [
            _evidence_row(pid, "footer_page", f"https://p{pid}.example.cn/about", at, parent_id=home_of[pid])
            | {"extracted": {"identifiers": [], "company_name": f"公司{pid}"}}
            for pid in range(1, count + 1)
        ]
        connection.execute(sa.insert(table), pages)
        if not changed_share:
            replies = [
                _evidence_row(pid, "lookup", f"https://beian.example/{pid}", at)
                for pid in range(1, count + 1, 2)
            ]
            reply_ids = sorted(
                row.id for row in connection.execute(sa.insert(table).returning(table.c.id), replies)
            )
            lookups = [
                {
                    "provider_id": pid,
                    "kind": "icp",
                    "query": f"p{pid}.example.cn",
                    "state": "completed",
                    "captcha_extra": {},
                    "failures": 0,
                    "result_evidence_id": reply_id,
                    "records": [
                        {
                            "unitName": f"公司{pid}",
                            "natureName": "企业",
                            "serviceLicence": f"京ICP备{pid:08d}号",
                        }
                    ],
                    "created_by_name": "perf",
                    "created_at": at,
                    "updated_at": at,
                    "completed_at": at,
                }
                for pid, reply_id in zip(range(1, count + 1, 2), reply_ids, strict=True)
            ]
            connection.execute(sa.insert(Lookup.__table__), lookups)
        connection.execute(sa.text("ANALYZE"))
    engine.dispose()


def expire_some_licences(url: str, share: int) -> None:
    """Every `share`-th provider's licence expired yesterday: verdicts and findings change."""
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        connection.execute(
            sa.update(Licence.__table__)
            .where(Licence.__table__.c.provider_id % share == 0)
            .values(expires_on=DAY_TWO - timedelta(days=1))
        )
    engine.dispose()


def daily(session: Session, day: date) -> tuple[float, dict[str, Any]]:
    """The daily job's re-check of every provider (check_all_job under a stored job); seconds and result."""
    job = Job(kind="vetting.check_all", params={}, state=JobState.running, created_by_name="perf")
    session.add(job)
    session.commit()
    started, cpu = time.perf_counter(), time.process_time()
    result = checks.check_all_job(session, job, today=day.isoformat())
    return time.perf_counter() - started, result | {"cpu_s": time.process_time() - cpu}


def count(session: Session, model: Any, *where: Any) -> int:
    """Rows of a table (matching `where`)."""
    return session.exec(select(func.count()).select_from(model).where(*where)).one()


def measure(url: str, count_providers: int, sample: int, instance: Path) -> dict[str, Any]:
    """Seed, run the two daily re-checks and the per-provider sample; the figures."""
    reset_schema(url)
    seed(url, count_providers)
    seed_evidence(url, count_providers, datetime(2026, 11, 30, tzinfo=UTC))
    app = build_app(url, instance)
    engine = app.extensions["gpuvet.engine"]
    with app.app_context(), Session(engine, expire_on_commit=False) as session:
        first_s, _first = daily(session, DAY_ONE)
        expire_some_licences(url, 10)
        seed_evidence(url, count_providers, datetime(2026, 12, 1, 20, tzinfo=UTC), changed_share=10)
        counter = StatementCounter(engine)
        runs_before, events_before = count(session, CheckRun), count(session, ChangeEvent)
        findings_before = count(session, StoredFinding)
        batch_s, result = daily(session, DAY_TWO)
        statements = counter.count
        runs = count(session, CheckRun) - runs_before
        events = count(session, ChangeEvent) - events_before
        findings = count(session, StoredFinding) - findings_before
        ids = list(session.exec(select(CheckRun.provider_id).distinct().limit(sample)).all())
        counter.count = 0
        started, cpu = time.perf_counter(), time.process_time()
        for provider_id in ids:
            checks.run_check(session, provider_id=provider_id, today=DAY_TWO + timedelta(days=1))
        single_s, single_cpu = time.perf_counter() - started, time.process_time() - cpu
        single_statements = counter.count
    engine.dispose()
    per_provider = single_s / max(1, len(ids))
    return {
        "providers": count_providers,
        "first_s": first_s,
        "batch_s": batch_s,
        "batch_cpu_s": result["cpu_s"],
        "statements": statements,
        "runs": runs,
        "findings": findings,
        "events": events,
        "verdicts": result["verdicts"],
        "sample": len(ids),
        "single_ms": per_provider * 1000,
        "single_statements": single_statements / max(1, len(ids)),
        "single_all_s": per_provider * count_providers,
        "single_all_cpu_s": single_cpu / max(1, len(ids)) * count_providers,
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--providers", type=int, default=5000)
    parser.add_argument("--sample", type=int, default=200, help="providers checked one by one (default 200)")
    parser.add_argument("--database-url", help="an empty database to use instead of a temporary SQLite file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gpuvet-recheck-perf-") as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'recheck.sqlite3'}"
        print(f"seeding {args.providers} providers ...", file=sys.stderr)
        r = measure(url, args.providers, args.sample, Path(folder) / "instance")
    backend = sa.make_url(url).get_backend_name()
    print(f"\ngpuvet daily re-check - {backend}, {r['providers']} providers (rules only, facts stored)\n")
    print(f"{'':34} {'batched (daily job)':>20} {'one by one (run_check)':>24}")
    print(f"{'seconds for all providers':34} {r['batch_s']:>20.2f} {r['single_all_s']:>24.1f}")
    print(f"{'  of which this process on a CPU':34} {r['batch_cpu_s']:>20.2f} {r['single_all_cpu_s']:>24.1f}")
    print(f"{'ms per provider':34} {r['batch_s'] / r['providers'] * 1000:>20.2f} {r['single_ms']:>24.2f}")
    per_statement = r["statements"] / r["providers"]
    print(f"{'SQL statements per provider':34} {per_statement:>20.3f} {r['single_statements']:>24.1f}")
    stored = f"{r['runs']} runs, {r['findings']} findings, {r['events']} change events"
    print(f"\nbatched: {r['statements']} statements; stored {stored}")
    print(f"verdicts: {r['verdicts']}; first re-check (no previous runs) took {r['first_s']:.2f} s")
    print(f"one by one: {r['sample']} providers timed, extrapolated to {r['providers']}")
    load, cpus = os.getloadavg()[0], os.cpu_count()
    print(f"machine: load average {load:.1f} on {cpus} CPUs (wall time above CPU time is waiting for a CPU)")
    ratio = r["single_all_s"] / r["batch_s"] if r["batch_s"] else float("nan")
    print(f"batched is x{ratio:.0f} faster")
    ok = r["batch_s"] <= TARGET_S
    verdict = "met" if ok else "MISSED"
    print(f"target: daily re-check of {r['providers']} providers <= {TARGET_S:.0f} s: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
