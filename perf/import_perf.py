"""Nested creation and import: linear in size, checking without a write lock, one short write at the end.

Usage:
    .venv/bin/python perf/import_perf.py                     # SQLite file in a temporary folder
    .venv/bin/python perf/import_perf.py --postgres URL      # also PostgreSQL: DROPS every gpuvet table there
    .venv/bin/python perf/import_perf.py --rows 5000 50000   # import sizes (providers, one offer each)

Part 1 creates one provider with 250, 500 and 1,000 offers through the service (the API's path) and prints
seconds, microseconds per offer and the ratio to the smallest size: linear work keeps the per-offer time
flat (the old code compared records by value in a list, 2,000 offers took about 9 s).
Part 2 imports CSV files of N providers through the import service: a dry run, then the real import,
splitting the real import into checking (reads only) and the write transaction (the only time the
database's write lock is held), with the process's peak memory.
Part 3 exports those N providers, changes one cell of every provider (its province) and re-imports the
file: the preview (matching, diffing, no writes), then the apply (preview again, then one transaction
that updates every provider through the ORM with its audit trail).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import sqlalchemy as sa  # noqa: E402
from sqlmodel import Session, SQLModel  # noqa: E402

import app.models  # noqa: E402, F401 - registers every table
from app.core.db import make_engine  # noqa: E402
from app.registry.providers import create_provider  # noqa: E402
from app.registry.transfer.export import export_providers  # noqa: E402
from app.registry.transfer.importing import import_providers  # noqa: E402

OFFER_COUNTS = (250, 500, 1000)


def fresh_engine(url: str) -> sa.Engine:
    """The database emptied and rebuilt from the models."""
    engine = make_engine(url)
    SQLModel.metadata.drop_all(engine)
    SQLModel.metadata.create_all(engine)
    return engine


def nested_creation(url: str) -> None:
    """One provider with many offers, through create_provider."""
    print(f"  {'offers':>8} {'seconds':>9} {'us/offer':>9} {'ratio':>7}")
    first = None
    for count in (OFFER_COUNTS[0], *OFFER_COUNTS):  # the first run warms imports and caches, unprinted
        engine = fresh_engine(url)
        data = {
            "legal_name": "嵌套压测算力有限公司",
            "datacenters": [{"name": "一号", "province": "广东", "city": "深圳"}],
            "offers": [
                {"name": f"套餐{n}", "gpu_model": "H800", "gpus_per_node": 8, "datacenter_name": "一号"}
                for n in range(count)
            ],
        }
        with Session(engine, expire_on_commit=False) as session:
            started = time.perf_counter()
            create_provider(session, data=data)
            seconds = time.perf_counter() - started
        engine.dispose()
        per_offer = seconds / count * 1e6
        if first is None:
            first = 0.0
            continue
        first = first or per_offer
        print(f"  {count:>8} {seconds:>9.3f} {per_offer:>9.0f} {per_offer / first:>7.2f}")


def csv_text(rows: int) -> str:
    """An import file: one provider per row, each with one offer."""
    header = "legal_name,registered_province,offer_name,gpu_model,gpus_per_node,bandwidth_type\n"
    body = "".join(f"导入压测{index:06d}有限公司,广东,H800 x8,H800,8,dedicated\n" for index in range(rows))
    return header + body


def timed_import(url: str, rows: int) -> None:
    """Dry run, then the real import with the checking and the write transaction timed apart."""
    engine = fresh_engine(url)
    text = csv_text(rows)
    with Session(engine, expire_on_commit=False) as session:
        started = time.perf_counter()
        dry = import_providers(session, data=text, format="csv", dry_run=True)
        dry_seconds = time.perf_counter() - started
        assert dry.ok, dry.problems[:3]
        marks: dict[str, float] = {}

        def progress(done: int, total: int, current: str) -> None:
            if done == total and current and "write" not in marks:
                marks["write"] = time.perf_counter()

        started = time.perf_counter()
        report = import_providers(session, data=text, format="csv", progress=progress)
        ended = time.perf_counter()
        assert report.ok and report.created == rows, report.problems[:3]
        check = marks["write"] - started
        write = ended - marks["write"]
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"  {rows:>8} {dry_seconds:>9.2f} {check:>9.2f} {write:>9.2f} {ended - started:>9.2f}"
            f" {rows / (ended - started):>9.0f} {peak_mib:>9.0f}"
        )
        UPDATES.append(timed_update(session, rows))
    engine.dispose()


UPDATES: list[str] = []


def timed_update(session: Session, rows: int) -> str:
    """Export, change every provider's province, preview and apply the re-import; the line to print."""
    exported = export_providers(session, "csv")
    edited = exported.replace(",广东,", ",上海,")
    started = time.perf_counter()
    preview = import_providers(session, data=edited, format="csv", dry_run=True)
    preview_seconds = time.perf_counter() - started
    assert preview.ok and preview.updated == rows, preview.problems[:3]
    marks: dict[str, float] = {}

    def progress(done: int, total: int, current: str) -> None:
        if done == total and current and "write" not in marks:
            marks["write"] = time.perf_counter()

    started = time.perf_counter()
    report = import_providers(
        session, data=edited, format="csv", expected=preview.expected, progress=progress
    )
    ended = time.perf_counter()
    assert report.applied and report.updated == rows, report.problems[:3]
    check, write = marks["write"] - started, ended - marks["write"]
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (
        f"  {rows:>8} {preview_seconds:>9.2f} {check:>9.2f} {write:>9.2f} {ended - started:>9.2f}"
        f" {rows / (ended - started):>9.0f} {peak_mib:>9.0f}"
    )


def run(label: str, url: str, sizes: list[int]) -> None:
    """Both parts on one database."""
    print(f"\n{label}: one provider with many offers (create_provider)")
    nested_creation(url)
    print(f"{label}: CSV import (seconds; write = the one write transaction)")
    columns = ("dry run", "checking", "write", "total", "rows/s", "peak MiB")
    print(f"  {'providers':>8} " + " ".join(f"{name:>9}" for name in columns))
    UPDATES.clear()
    for rows in sizes:
        timed_import(url, rows)
    print(f"{label}: re-import of an edited export, every provider changed (seconds)")
    columns = ("preview", "checking", "write", "apply", "rows/s", "peak MiB")
    print(f"  {'providers':>8} " + " ".join(f"{name:>9}" for name in columns))
    for line in UPDATES:
        print(line)


def main() -> None:
    """Parse arguments and run on SQLite, then on PostgreSQL when given."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--postgres", help="PostgreSQL URL (its gpuvet tables are dropped)")
    parser.add_argument("--rows", type=int, nargs="+", default=[5_000, 50_000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run("SQLite", f"sqlite:///{Path(tmp) / 'import.sqlite3'}", args.rows)
        if args.postgres:
            run("PostgreSQL", args.postgres, args.rows)


if __name__ == "__main__":
    main()
