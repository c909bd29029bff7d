"""The provider verdict with per-item verification: time and statements for one page of providers.

Usage:
    .venv/bin/python perf/verdict_perf.py [--providers 200] [--offers 4] [--page 20] [--runs 15]

Seeds --providers providers (each with a licence, an ICP and a PSB filing, two certifications and --offers
offers) on a temporary SQLite file, checks each once, then times, in turn and side by side:
`verdicts_of` for one list page (--page providers) and for every provider, and `verifications_of` alone
(the per-item part), printing medians, their ratio and the SQL statements each sends.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import sqlalchemy as sa  # noqa: E402
from sqlmodel import Session, SQLModel  # noqa: E402

import app.models  # noqa: E402, F401 - registers every table
from app.credentials import checks, verdicts, verification  # noqa: E402
from app.registry.providers import create_provider  # noqa: E402


def _provider(index: int, offers: int) -> dict[str, Any]:
    """One provider's registry data (numbers well formed, one datacenter)."""
    return {
        "legal_name": f"示例核实{index:05d}科技有限公司",
        "registered_province": "北京",
        "website": f"https://p{index}.example",
        "licences": [
            {"number_raw": f"京B1.B2-2025{index:04d}", "business_items": ["B11"], "coverage": ["北京"]}
        ],
        "filings": [
            {"kind": "icp_filing", "number_raw": f"京ICP备2025{index:06d}号"},
            {"kind": "psb_filing", "number_raw": f"京公网安备1101080{index:07d}号"},
        ],
        "certifications": [
            {"kind": "iso27001", "number": f"ISMS-{index}"},
            {"kind": "dengbao", "level": 3, "number": f"DJBH-{index}"},
        ],
        "datacenters": [{"name": "一号机房", "province": "北京"}],
        "offers": [
            {
                "gpu_model": "H800",
                "gpus_per_node": 8,
                "intranet_gbps": 200,
                "public_mbps": 100,
                "storage_type": "local_nvme",
                "nominal_iops": 500000,
                "datacenter_name": "一号机房",
            }
            for _ in range(offers)
        ],
    }


def _median_ms(function: Callable[[], Any], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _statements(engine: sa.Engine, function: Callable[[], Any]) -> int:
    seen: list[str] = []

    def count(_conn, _cursor, statement, *_args):
        seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", count)
    try:
        function()
    finally:
        sa.event.remove(engine, "before_cursor_execute", count)
    return len(seen)


def main() -> None:
    """Seed, then time and print the verdict of a page and of every provider, side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--providers", type=int, default=200)
    parser.add_argument("--offers", type=int, default=4)
    parser.add_argument("--page", type=int, default=20)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        engine = sa.create_engine(f"sqlite:///{Path(folder) / 'verdicts.sqlite3'}")
        SQLModel.metadata.create_all(engine)
        with Session(engine, expire_on_commit=False) as session:
            ids = [create_provider(session, data=_provider(i, args.offers)).id for i in range(args.providers)]
            for provider_id in ids:
                checks.run_check(session, provider_id=provider_id)
            page = ids[: args.page]
            cases = {
                f"verdicts_of, a page of {len(page)}": lambda: verdicts.verdicts_of(session, page),
                f"  of which verifications_of ({len(page)})": lambda: verification.verifications_of(
                    session, page
                ),
                f"verdicts_of, all {len(ids)}": lambda: verdicts.verdicts_of(session, ids),
                f"  of which verifications_of ({len(ids)})": lambda: verification.verifications_of(
                    session, ids
                ),
            }
            results = {name: _median_ms(function, args.runs) for name, function in cases.items()}
            counts = {name: _statements(engine, function) for name, function in cases.items()}
        engine.dispose()
    print(f"{args.providers} providers x {args.offers} offers, median of {args.runs} runs (SQLite)")
    for name, ms in results.items():
        print(f"{name:<42} {ms:8.1f} ms  {counts[name]:3d} statements")
    names = list(results)
    for whole, part in ((names[0], names[1]), (names[2], names[3])):
        print(f"per-item share of {whole.strip()}: {results[part] / results[whole]:.0%}")
    per_provider = results[names[2]] / len(ids)
    print(f"per provider (all): {per_provider:.2f} ms")


if __name__ == "__main__":
    main()
