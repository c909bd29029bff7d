"""Registry performance: seed many providers, then time the list page, detail page and API list.

Usage:
    .venv/bin/python perf/registry_perf.py                 # SQLite files in a temporary folder
    .venv/bin/python perf/registry_perf.py --postgres URL  # PostgreSQL: DROPS every gpuvet table there

Seeds --small and --large providers (default 500 and 5,000), each with 4 offers, a licence, a filing, a
datacenter and a few audit entries, through bulk SQLAlchemy core inserts (a benchmark fixture, not the
product path; the schema itself comes from the Alembic migrations). Then, with Flask's test client and
an admin user, it measures median and p95 latency and the SQL statements each request sends (counted
with a before_cursor_execute listener on the app's engine), and prints both sizes side by side so that
"statements per request stay constant as rows grow" can be read off directly.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import sqlalchemy as sa  # noqa: E402
from alembic import command  # noqa: E402
from flask import Flask  # noqa: E402
from flask.testing import FlaskClient  # noqa: E402
from sqlmodel import Session, SQLModel  # noqa: E402

import app.models  # noqa: E402, F401 - registers every table
from app import create_app  # noqa: E402
from app.accounts import users  # noqa: E402
from app.cli.db import alembic_config  # noqa: E402
from app.core.config import Settings  # noqa: E402
from app.models import AuditEntry, Datacenter, Filing, Licence, Offer, Provider  # noqa: E402

PASSWORD = "perf-password-123"
BATCH = 2_000
TARGETS_MS = {"list page": 50.0, "detail page": 30.0}

PROVINCES = [  # name, abbreviation, a city
    ("广东", "粤", "深圳"),
    ("北京", "京", "北京"),
    ("上海", "沪", "上海"),
    ("浙江", "浙", "杭州"),
    ("江苏", "苏", "南京"),
    ("贵州", "贵", "贵安"),
    ("内蒙古", "蒙", "乌兰察布"),
    ("四川", "川", "成都"),
    ("宁夏", "宁", "中卫"),
    ("河北", "冀", "张家口"),
]
NAME_WORDS = ["星河", "天衡", "云岭", "曜石", "北辰", "海川", "启明", "算域", "长风", "青岚", "博观", "九章"]
GPUS = ["H800", "A100", "RTX 4090", "H100", "L40S", "910B", "H20", "A800"]
BANDWIDTH = ["dedicated", "shared", "unknown"]
STORAGE = ["local_nvme", "local_sata_ssd", "cloud_disk", "nfs", "parallel_fs", "unknown"]
STATUSES = ["candidate"] * 10 + ["approved"] * 5 + ["rejected"] * 3 + ["suspended"] * 2


# ---------------------------------------------------------------- database
def reset_schema(url: str) -> None:
    """Empty the database and build the schema with the Alembic migrations."""
    engine = sa.create_engine(url)
    SQLModel.metadata.drop_all(engine)
    with engine.begin() as connection:
        connection.execute(sa.text("DROP TABLE IF EXISTS alembic_version"))
    engine.dispose()
    config = alembic_config(url)
    config.attributes["configure_logger"] = False
    command.upgrade(config, "head")


def _rows(count: int) -> Iterator[dict[str, list[dict[str, Any]]]]:
    """Rows for every table, in batches, for providers 1..count."""
    now = datetime.now(UTC)
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in ("provider", "child", "offer", "audit")}
    for pid in range(1, count + 1):
        province, abbr, city = PROVINCES[pid % len(PROVINCES)]
        word = NAME_WORDS[pid % len(NAME_WORDS)]
        created = now - timedelta(days=pid % 700, minutes=pid)
        tables["provider"].append(
            {
                "id": pid,
                "legal_name": f"{word}{pid:05d}算力科技有限公司",
                "short_name": f"{word}{pid}",
                "uscc": f"91{pid % 1_000_000:06d}{pid:010d}",
                "registered_province": province,
                "registered_address": f"{province}{city}高新区{pid}号",
                "website": f"https://p{pid}.example.cn",
                "registered_capital_cny": 10_000_000 + pid,
                "status": STATUSES[pid % len(STATUSES)],
                "version": 1,
                "created_at": created,
                "updated_at": created,
            }
        )
        tables["child"].append(
            {
                "licence": {
                    "id": pid,
                    "provider_id": pid,
                    "number_raw": f"{abbr}B1-2019{pid % 10_000:04d}",
                    "number": f"{abbr}B1-2019{pid % 10_000:04d}",
                    "number_kind": "licence",
                    "categories": ["B1"],
                    "business_items": ["B11", "B14"],
                    "b11_includes_resource_collab": pid % 3 != 0,
                    "coverage": [province],
                    "status": "正常",
                    "issued_on": (created - timedelta(days=400)).date(),
                    "expires_on": (created + timedelta(days=1400)).date(),
                },
                "filing": {
                    "id": pid,
                    "provider_id": pid,
                    "kind": "icp_filing",
                    "number_raw": f"{abbr}ICP备2021{pid:06d}号-1",
                    "number": f"{abbr}ICP备2021{pid:06d}号-1",
                    "entity_name": f"{word}{pid:05d}算力科技有限公司",
                },
                "datacenter": {
                    "id": pid,
                    "provider_id": pid,
                    "name": f"{city}{pid % 7 + 1}号机房",
                    "province": province,
                    "city": city,
                },
            }
        )
        for slot in range(4):
            gpu = GPUS[(pid + slot) % len(GPUS)]
            tables["offer"].append(
                {
                    "id": (pid - 1) * 4 + slot + 1,
                    "provider_id": pid,
                    "datacenter_id": pid,
                    "name": f"{gpu} x8",
                    "offer_kind": "cloud_instance" if slot % 2 else "bare_metal",
                    "gpu_model": gpu,
                    "gpus_per_node": 8,
                    "gpu_memory_gb": 80,
                    "vcpu": 128,
                    "ram_gb": 1024,
                    "intranet_gbps": 200.0,
                    "rdma_type": "roce" if slot == 0 else "none",
                    "rdma_gbps": 400.0 if slot == 0 else None,
                    "public_mbps": 100.0,
                    "bandwidth_type": BANDWIDTH[(pid + slot) % len(BANDWIDTH)],
                    "storage_type": STORAGE[(pid + slot) % len(STORAGE)],
                    "storage_capacity_gb": 7680,
                    "nominal_iops": 500_000,
                    "price_gpu_hour_cny": 8.5 + slot,
                    "price_month_cny": 40_000.0 + 1000 * slot,
                }
            )
        for action in ("create", "update", "update"):
            tables["audit"].append(
                {
                    "at": created,
                    "actor_id": None,
                    "actor_name": "perf",
                    "action": action,
                    "entity": "provider",
                    "entity_id": pid,
                    "provider_id": pid,
                    "changes": {"status": [None, "candidate"]}
                    if action == "create"
                    else {"notes": ["a", "b"]},
                }
            )
        if len(tables["provider"]) >= BATCH or pid == count:
            yield tables
            tables = {name: [] for name in tables}


def seed(url: str, count: int) -> float:
    """Bulk-insert `count` providers with nested records; returns seconds taken."""
    started = time.perf_counter()
    engine = sa.create_engine(url)
    with engine.begin() as connection:
        for batch in _rows(count):
            connection.execute(sa.insert(Provider.__table__), batch["provider"])
            for table, key in ((Licence, "licence"), (Filing, "filing"), (Datacenter, "datacenter")):
                connection.execute(sa.insert(table.__table__), [child[key] for child in batch["child"]])
            connection.execute(sa.insert(Offer.__table__), batch["offer"])
            connection.execute(sa.insert(AuditEntry.__table__), batch["audit"])
        if engine.dialect.name == "postgresql":  # explicit ids do not move the sequences
            for table in ("provider", "licence", "filing", "datacenter", "offer"):
                connection.execute(
                    sa.text(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f"(SELECT MAX(id) FROM {table}))"
                    )
                )
    with engine.begin() as connection:
        connection.execute(sa.text("ANALYZE"))  # fresh statistics, as a live database would have
    engine.dispose()
    return time.perf_counter() - started


# ---------------------------------------------------------------- measuring
@dataclass
class Measurement:
    """Latencies (ms) and statement counts of one endpoint at one database size."""

    name: str
    url_example: str
    latencies_ms: list[float] = field(default_factory=list)
    statements: list[int] = field(default_factory=list)

    @property
    def median(self) -> float:
        """Median latency in ms."""
        return statistics.median(self.latencies_ms)

    @property
    def p95(self) -> float:
        """95th-percentile latency in ms (nearest rank)."""
        ordered = sorted(self.latencies_ms)
        return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]

    @property
    def statements_text(self) -> str:
        """Statements per request, as one number when constant or min-max."""
        low, high = min(self.statements), max(self.statements)
        return str(low) if low == high else f"{low}-{high}"


class StatementCounter:
    """Counts SQL statements sent through an engine."""

    def __init__(self, engine: sa.Engine) -> None:
        self.count = 0
        sa.event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, *_args: Any) -> None:
        self.count += 1


def measure(
    client: FlaskClient,
    counter: StatementCounter,
    name: str,
    urls: Callable[[int], str],
    requests: int,
    headers: dict[str, str] | None = None,
) -> Measurement:
    """Time `requests` GETs (after a short warm-up) and count statements for each."""
    result = Measurement(name=name, url_example=urls(0))
    for index in range(3):
        response = client.get(urls(index), headers=headers)
        if response.status_code != 200:
            raise SystemExit(f"{name}: GET {urls(index)} answered {response.status_code}")
    for index in range(requests):
        url = urls(index)
        counter.count = 0
        started = time.perf_counter()
        response = client.get(url, headers=headers)
        response.get_data()
        result.latencies_ms.append((time.perf_counter() - started) * 1000)
        result.statements.append(counter.count)
        if response.status_code != 200:
            raise SystemExit(f"{name}: GET {url} answered {response.status_code}")
    return result


def build_app(url: str, instance: Path) -> Flask:
    """The real app on `url` (CSRF off only so the benchmark can log in without a form)."""
    settings = Settings(GPUVET_INSTANCE_PATH=instance, DATABASE_URL=url)
    return create_app(settings, WTF_CSRF_ENABLED=False)


def run_size(url: str, count: int, requests: int, instance: Path) -> tuple[float, list[Measurement]]:
    """Seed `count` providers at `url` and measure every endpoint."""
    reset_schema(url)
    seconds = seed(url, count)
    flask_app = build_app(url, instance)
    engine = flask_app.extensions["gpuvet.engine"]
    with Session(engine) as session:
        users.create_user(session, username="perf-admin", password=PASSWORD, role="admin")
        token = users.issue_token(session, username="perf-admin")
    client = flask_app.test_client()
    response = client.post("/login", data={"username": "perf-admin", "password": PASSWORD})
    if response.status_code not in (302, 303):
        raise SystemExit(f"login failed: {response.status_code}")
    counter = StatementCounter(engine)
    bearer = {"Authorization": f"Bearer {token}"}
    ids = random.Random(count).sample(range(1, count + 1), k=min(count, requests + 3))

    def detail(index: int) -> str:
        return f"/providers/{ids[index % len(ids)]}"

    results = []
    if client.get("/providers").status_code == 404:
        print("  GET /providers answered 404: the page is missing, measuring the API only", file=sys.stderr)
    else:
        results.append(
            measure(
                client,
                counter,
                "list page",
                lambda _i: "/providers?gpu_model=H800&status=candidate&page=3",
                requests,
            )
        )
        results.append(measure(client, counter, "detail page", detail, requests))
    results.append(
        measure(client, counter, "API list", lambda _i: "/api/v1/providers?gpu_model=H800", requests, bearer)
    )
    results.append(measure(client, counter, "API detail", lambda i: "/api/v1" + detail(i), requests, bearer))
    engine.dispose()
    return seconds, results


# ---------------------------------------------------------------- report
def print_report(backend: str, requests: int, runs: dict[int, tuple[float, list[Measurement]]]) -> bool:
    """Print one table per size and the statements comparison; True when every target is met."""
    ok = True
    sizes = sorted(runs)
    print(f"\ngpuvet registry performance - {backend}, {requests} timed requests per endpoint\n")
    columns = (
        f"{'providers':>9}",
        f"{'endpoint':<12}",
        f"{'median ms':>9}",
        f"{'p95 ms':>8}",
        f"{'SQL/req':>7}",
    )
    header = " ".join(columns) + f"  {'target':<14} url"
    print(header)
    print("-" * len(header))
    for size in sizes:
        seconds, results = runs[size]
        for result in results:
            target = TARGETS_MS.get(result.name)
            verdict = ""
            if target is not None:
                met = result.median <= target
                ok &= met or size != sizes[-1]
                verdict = f"<= {target:.0f} ms {'ok' if met else 'MISSED'}"
            print(
                f"{size:>9} {result.name:<12} {result.median:>9.1f} {result.p95:>8.1f} "
                f"{result.statements_text:>7}  {verdict:<14} {result.url_example}"
            )
        print(f"{'':>9} (seeded {size} providers, {4 * size} offers in {seconds:.1f} s)")
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        print(f"\nSQL statements per request, {small} vs {large} providers (constant = no N+1):")
        for before, after in zip(runs[small][1], runs[large][1], strict=True):
            ratio = max(after.statements) / max(before.statements)
            constant = set(before.statements) == set(after.statements)
            ok &= constant
            print(
                f"  {before.name:<12} {before.statements_text:>5} -> {after.statements_text:>5}"
                f"  ratio {ratio:.2f}  {'constant' if constant else 'GROWS'}"
            )
    print("\nall targets met" if ok else "\nsome targets missed")
    return ok


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--postgres", metavar="URL", help="PostgreSQL URL (its gpuvet tables are dropped!)")
    parser.add_argument("--small", type=int, default=500, help="providers in the small run (default 500)")
    parser.add_argument("--large", type=int, default=5000, help="providers in the large run (default 5000)")
    parser.add_argument("--requests", type=int, default=50, help="timed requests per endpoint (default 50)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="gpuvet-perf-") as folder:
        runs = {}
        for size in (args.small, args.large):
            url = args.postgres or f"sqlite:///{Path(folder) / f'perf-{size}.sqlite3'}"
            print(f"seeding {size} providers ...", file=sys.stderr)
            runs[size] = run_size(url, size, args.requests, Path(folder) / f"instance-{size}")
        backend = "PostgreSQL" if args.postgres else "SQLite"
        ok = print_report(backend, args.requests, runs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
