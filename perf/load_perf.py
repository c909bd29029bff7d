"""Load on a real server: 200 concurrent list requests and 20 concurrent writers, then count lost writes.

Usage:
    .venv/bin/python perf/load_perf.py                     # SQLite file in a temporary folder
    .venv/bin/python perf/load_perf.py --postgres URL      # also PostgreSQL: DROPS every gpuvet table there

For each database it seeds providers through the services, starts gunicorn with several worker processes
(as scripts/run.sh serves the app) and, from as many client threads, sends at the same moment:
  - readers: GET /api/v1/providers?page=N (the API list, each on its own connection);
  - writers: read a provider, PATCH it with the version read and a unique note, retry on 409 (bounded);
    all writers share a few providers so that they collide.
It prints median / p95 latency, errors (any status other than 200 / 409) and lost writes: acknowledged
PATCHes (200) whose note is missing from the provider's audit trail, or a final version that does not
equal 1 + the acknowledged writes. Lost writes must be 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import requests  # noqa: E402
import sqlalchemy as sa  # noqa: E402
from sqlmodel import Session, SQLModel, select  # noqa: E402

import app.models  # noqa: E402, F401 - registers every table
from app.accounts import users  # noqa: E402
from app.models import AuditEntry, Provider  # noqa: E402
from app.registry.providers import create_provider  # noqa: E402
from tests.live_server import gunicorn_server  # noqa: E402

PASSWORD = "perf-load-password-123"
MAX_TRIES = 50  # per write, against 409s


@dataclass
class Tally:
    """Latencies and statuses of one kind of request."""

    latencies_ms: list[float] = field(default_factory=list)
    statuses: Counter = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, started: float, status: int) -> None:
        """Record one request that started at `started` (perf_counter) and ended now."""
        with self.lock:
            self.latencies_ms.append((time.perf_counter() - started) * 1000)
            self.statuses[status] += 1

    def line(self, name: str) -> str:
        """One row of the results table."""
        values = sorted(self.latencies_ms) or [0.0]
        p95 = values[min(len(values) - 1, int(0.95 * len(values)))]
        errors = sum(count for status, count in self.statuses.items() if status not in (200, 409))
        return (
            f"  {name:<22} {len(values):>6} {statistics.median(values):>9.1f} {p95:>9.1f} {errors:>7}"
            f"  {dict(sorted(self.statuses.items()))}"
        )


def seed(url: str, providers: int) -> str:
    """Fresh tables, `providers` providers with four offers each, and an admin token."""
    engine = sa.create_engine(url)
    SQLModel.metadata.drop_all(engine)
    SQLModel.metadata.create_all(engine)
    with Session(engine, expire_on_commit=False) as session:
        for index in range(providers):
            offers = [{"name": f"套餐{n}", "gpu_model": "H800", "gpus_per_node": 8} for n in range(4)]
            create_provider(session, data={"legal_name": f"压测算力{index:05d}有限公司", "offers": offers})
        users.create_user(session, username="perf-admin", password=PASSWORD, role="admin")
        token = users.issue_token(session, username="perf-admin")
    engine.dispose()
    return token


def read_list(
    base: str, headers: dict[str, str], index: int, tally: Tally, barrier: threading.Barrier
) -> None:
    """One list request on its own connection, released with the others."""
    barrier.wait()
    started = time.perf_counter()
    try:
        status = requests.get(
            f"{base}/api/v1/providers?page={index % 20 + 1}", headers=headers, timeout=120
        ).status_code
    except requests.RequestException:
        status = 0
    tally.add(started, status)


def write_notes(
    base: str, headers: dict[str, str], writer: int, rounds: int, targets: list[int], tally: Tally,
    acknowledged: list[tuple[int, str]], barrier: threading.Barrier,
) -> None:  # fmt: skip
    """`rounds` acknowledged changes by one writer, each retried on 409 with the fresh version."""
    barrier.wait()
    with requests.Session() as http:
        for round_ in range(rounds):
            provider_id = targets[(writer + round_) % len(targets)]
            note = f"writer {writer} round {round_}"
            for _ in range(MAX_TRIES):
                version = http.get(
                    f"{base}/api/v1/providers/{provider_id}", headers=headers, timeout=120
                ).json()["version"]
                started = time.perf_counter()
                try:
                    response = http.patch(
                        f"{base}/api/v1/providers/{provider_id}",
                        json={"version": version, "notes": note},
                        headers=headers,
                        timeout=120,
                    )
                    status = response.status_code
                except requests.RequestException:
                    status = 0
                tally.add(started, status)
                if status == 200:
                    with tally.lock:
                        acknowledged.append((provider_id, note))
                    break
                if status != 409:
                    break


def lost_writes(url: str, acknowledged: list[tuple[int, str]]) -> int:
    """Acknowledged notes missing from the audit trail, plus versions that disagree with the count."""
    engine = sa.create_engine(url)
    lost = 0
    with Session(engine) as session:
        per_provider = Counter(provider_id for provider_id, _ in acknowledged)
        for provider_id, count in per_provider.items():
            provider = session.get(Provider, provider_id)
            lost += abs(provider.version - 1 - count)
            entries = session.exec(
                select(AuditEntry).where(
                    AuditEntry.entity == "provider",
                    AuditEntry.entity_id == provider_id,
                    AuditEntry.action == "update",
                )
            ).all()
            audited = {entry.changes.get("notes", [None, None])[1] for entry in entries}
            lost += sum(1 for pid, note in acknowledged if pid == provider_id and note not in audited)
    engine.dispose()
    return lost


def run(label: str, url: str, args: argparse.Namespace, folder: Path) -> None:
    """Seed, serve, load, verify; print one block of results."""
    token = seed(url, args.providers)
    headers = {"Authorization": f"Bearer {token}"}
    instance = folder / f"instance-{label}"
    with gunicorn_server(database_url=url, instance_path=instance, workers=args.workers) as base:
        requests.get(f"{base}/api/v1/providers", headers=headers, timeout=120)  # warm every import
        readers, writers = Tally(), Tally()
        acknowledged: list[tuple[int, str]] = []
        targets = list(range(1, args.hot_providers + 1))
        barrier = threading.Barrier(args.readers + args.writers, timeout=120)
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.readers + args.writers) as pool:
            for index in range(args.readers):
                pool.submit(read_list, base, headers, index, readers, barrier)
            for writer in range(args.writers):
                pool.submit(
                    write_notes, base, headers, writer, args.rounds, targets, writers, acknowledged, barrier
                )
        wall = time.perf_counter() - started
    lost = lost_writes(url, acknowledged)
    print(f"\n{label}: gunicorn x{args.workers} workers, {args.providers} providers, wall {wall:.1f} s")
    print(f"  {'requests':<22} {'count':>6} {'p50 ms':>9} {'p95 ms':>9} {'errors':>7}  statuses")
    print(readers.line(f"list x{args.readers}"))
    print(writers.line(f"PATCH x{args.writers} writers"))
    print(f"  acknowledged writes {len(acknowledged)} of {args.writers * args.rounds}; lost writes: {lost}")


def main() -> None:
    """Parse arguments and run on SQLite, then on PostgreSQL when given."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--postgres", help="PostgreSQL URL (its gpuvet tables are dropped)")
    parser.add_argument("--providers", type=int, default=300)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--writers", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5, help="acknowledged writes per writer")
    parser.add_argument("--hot-providers", type=int, default=3, help="providers all writers share")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        run("SQLite", f"sqlite:///{folder / 'load.sqlite3'}", args, folder)
        if args.postgres:
            run("PostgreSQL", args.postgres, args, folder)


if __name__ == "__main__":
    main()
