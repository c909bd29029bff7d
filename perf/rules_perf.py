"""Vetting-rules performance: every rule over 500 and 5,000 bulk-seeded providers, no network.

Usage:
    .venv/bin/python perf/rules_perf.py                   # SQLite files in a temporary folder
    .venv/bin/python perf/rules_perf.py --small 100 --large 1000 --store 200

Seeds providers with perf/registry_perf.py's bulk inserts (each with a licence, an ICP filing, a
datacenter and 4 offers; the seeded numbers trip several rules, so findings are really built), loads
them with their records in a few statements, and times:
  - rules: run_rules on every provider (what the 5 s target is about), total and per-provider median;
  - check runs: checks.run_check (load, facts, rules, store the run and its findings) for --store
    providers, to show the database's share.
Both sizes are printed side by side; the rules total should grow linearly and stay within the target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import sqlalchemy as sa  # noqa: E402
from sqlalchemy.orm import selectinload  # noqa: E402
from sqlmodel import Session, SQLModel, select  # noqa: E402

import app.models  # noqa: E402, F401 - registers every table
from app.credentials import checks  # noqa: E402
from app.models import Provider  # noqa: E402
from app.vetting.findings import RuleContext, load_rules, run_rules  # noqa: E402
from app.vetting.rules._common import load_knowledge, parsed  # noqa: E402
from perf.registry_perf import seed  # noqa: E402

TARGET_S = 5.0


def _load(session: Session) -> list[Provider]:
    """Every provider with its records, in one statement per collection."""
    return list(
        session.exec(
            select(Provider)
            .order_by(Provider.id)
            .options(
                selectinload(Provider.licences),
                selectinload(Provider.filings),
                selectinload(Provider.certifications),
                selectinload(Provider.datacenters),
                selectinload(Provider.offers),
            )
        ).all()
    )


def measure(count: int, store: int, folder: Path) -> dict[str, float]:
    """Seed `count` providers and time the rules (and `store` full check runs)."""
    url = f"sqlite:///{folder / f'rules-{count}.sqlite3'}"
    engine = sa.create_engine(url)
    SQLModel.metadata.create_all(engine)
    engine.dispose()
    seed(url, count)
    engine = sa.create_engine(url)
    knowledge, today = load_knowledge(), date.today()
    load_rules()
    parsed.cache_clear()  # no warm number cache from an earlier size
    with Session(engine) as session:
        started = time.perf_counter()
        providers = _load(session)
        load_s = time.perf_counter() - started
        per_provider, findings = [], 0
        started = time.perf_counter()
        for provider in providers:
            one = time.perf_counter()
            findings += len(run_rules(RuleContext(provider, today, knowledge)))
            per_provider.append(time.perf_counter() - one)
        rules_s = time.perf_counter() - started
    with Session(engine) as session:
        ids = [provider.id for provider in providers[:store]]
        started = time.perf_counter()
        for provider_id in ids:
            checks.run_check(session, provider_id=provider_id, today=today)
        store_s = time.perf_counter() - started
    engine.dispose()
    return {
        "providers": count,
        "load_s": load_s,
        "rules_s": rules_s,
        "median_ms": statistics.median(per_provider) * 1000,
        "p95_ms": sorted(per_provider)[int(0.95 * (len(per_provider) - 1))] * 1000,
        "findings": findings,
        "stored": len(ids),
        "store_ms": store_s / max(1, len(ids)) * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--small", type=int, default=500)
    parser.add_argument("--large", type=int, default=5000)
    parser.add_argument("--store", type=int, default=300, help="full check runs timed per size (default 300)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gpuvet-rules-perf-") as folder:
        results = []
        for size in (args.small, args.large):
            print(f"seeding {size} providers ...", file=sys.stderr)
            results.append(measure(size, min(args.store, size), Path(folder)))
    print(f"\ngpuvet vetting rules - SQLite, {len(load_rules())} rules, no network\n")
    header = (
        f"{'providers':>9} {'rules total s':>13} {'median ms':>9} {'p95 ms':>7} {'findings':>9}"
        f" {'load s':>7} {'run_check ms':>12}"
    )
    print(header)
    print("-" * len(header))
    for r in results:
        print(
            f"{r['providers']:>9} {r['rules_s']:>13.2f} {r['median_ms']:>9.3f} {r['p95_ms']:>7.3f}"
            f" {r['findings']:>9} {r['load_s']:>7.2f} {r['store_ms']:>12.1f}"
        )
    small, large = results
    ratio = large["rules_s"] / small["rules_s"] if small["rules_s"] else float("nan")
    size_ratio = large["providers"] / small["providers"]
    print(f"\nrules total grows x{ratio:.1f} for x{size_ratio:.0f} providers")
    stored = large["stored"]
    print(f"run_check ms: mean of {stored} full stored checks (load, facts, rules, insert run + findings)")
    ok = large["rules_s"] <= TARGET_S
    verdict = "met" if ok else "MISSED"
    print(f"target: all rules over {large['providers']} providers <= {TARGET_S:.0f} s: {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
