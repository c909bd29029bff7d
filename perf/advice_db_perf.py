"""Advice through the database: statements per request and the database's share of advising one case.

Usage:
    .venv/bin/python perf/advice_db_perf.py [--small 500] [--large 5000] [--runs 10] [--measured 0.3]
    .venv/bin/python perf/advice_db_perf.py --postgres URL   # PostgreSQL: DROPS every gpuvet table there

Seeds --small and --large providers (4 offers each: 5,000 providers = 20,000 offers) with bulk core inserts
(the rows of perf/registry_perf.py), a credential check run with findings for most providers, and a
successful quick-suite benchmark run with its samples for a share of the offers (--measured, default 30%:
intranet iperf3, ping, fio 4k random read, disk type; some far below the claim, some stale) and the
measured figures (bench_figure) those runs write when stored. Then it times
`cases.advise_answers` end to end (offer facts read from the database, then the advice) against the pure
advice of the same offers (facts and their OfferTable built once, as perf/advice_perf.py times it), counts
the SQL statements one advice sends (a before_cursor_execute listener), and prints both sizes side by side
with the database overhead ratio (end to end and pure advice timed in turn, so that a busy machine slows
both alike), and what the database part is made of: reading the offer facts and
building their table of codes. Three states of the registry: unchanged since the last advice (the kept
table), one provider changed since (an offer's price, another provider each time: the kept table refreshed
from that provider), and everything read afresh (a new process, as each `flask advise` is).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import sqlalchemy as sa  # noqa: E402
from sqlmodel import Session, SQLModel  # noqa: E402

import app.models  # noqa: E402, F401 - registers every table
from app.advice.answers import validate_answers  # noqa: E402
from app.advice.engine import advise  # noqa: E402
from app.advice.facts import parse_licence_number  # noqa: E402
from app.cases import cases, registry_facts  # noqa: E402
from app.models import Datacenter, Filing, Licence, Offer, Provider, latest_runs  # noqa: E402
from app.models.checks import CheckRun, StoredFinding  # noqa: E402
from app.models.trials import BenchRun, BenchStep, TrialServer  # noqa: E402
from app.registry import offer_snapshot  # noqa: E402
from app.trials import bench_figures, measurements  # noqa: E402
from perf.advice_perf import build_table  # noqa: E402
from perf.registry_perf import _rows  # noqa: E402

TODAY = date(2026, 6, 1)
ANSWERS = PROJECT_ROOT / "examples" / "answers" / "distributed_training.json"
OVERHEAD_TARGET = 0.5  # the database part may add at most 50% to the pure advice


def _samples(rng: random.Random, claimed_gbps: float) -> list[dict[str, Any]]:
    """Quick-suite samples of one run: intranet throughput (some far below the claim), ping, fio, disk."""
    share = rng.choice([0.95, 0.9, 0.85, 0.6, 0.2])
    return [
        {
            "metric": "throughput",
            "value": claimed_gbps * 1000 * share,
            "unit": "Mbit/s",
            "metadata": {"step": "iperf3", "path": "intranet", "purpose": "throughput", "streams": 1},
        },
        {
            "metric": "rtt_avg",
            "value": rng.uniform(2, 40),
            "unit": "ms",
            "metadata": {"path": "gpuvet->target"},
        },
        {
            "metric": "read_iops",
            "value": rng.choice([450_000, 120_000, 8_000]),
            "unit": "IOPS",
            "metadata": {},
        },
        {
            "metric": "storage_class",
            "value": rng.choice(["local_nvme", "local_nvme", "virtual_disk", "network_fs"]),
            "unit": "",
            "metadata": {"reason": "perf fixture"},
        },
    ]


def _evidence_rows(count: int, share: float, seed: int = 7) -> dict[str, list[dict[str, Any]]]:
    """Check runs, findings, trial servers, runs and steps for providers 1..count."""
    rng = random.Random(seed)
    rows: dict[str, list[dict[str, Any]]] = {
        name: [] for name in ("check", "finding", "server", "run", "step")
    }
    now = datetime(2026, 5, 30, tzinfo=UTC)
    for pid in range(1, count + 1):
        if pid % 10 < 7:
            rows["check"].append(
                {
                    "id": pid,
                    "provider_id": pid,
                    "verdict": "needs_review",
                    "checked_on": TODAY,
                    "rules_version": "perf",
                    "rule_ids": [],
                    "fact_names": [],
                    "fact_errors": {},
                    "created_at": now,
                }
            )
            rows["finding"].append(
                {
                    "check_run_id": pid,
                    "provider_id": pid,
                    "rule_id": "licence.expiring",
                    "severity": rng.choice(["warning", "info", "warning", "blocker"]),
                    "message_zh": "许可证即将到期（性能测试数据）",
                    "message_en": "the licence expires soon (perf fixture)",
                    "evidence": [],
                }
            )
        offers = [(pid - 1) * 4 + slot + 1 for slot in range(4) if rng.random() < share]
        if not offers:
            continue
        rows["server"].append(
            {"id": pid, "provider_id": pid, "name": "perf", "host": "192.0.2.1", "secret_encrypted": "-"}
        )
        for offer_id in offers:
            finished = now - timedelta(days=rng.choice([2, 10, 40, 120]))
            rows["run"].append(
                {
                    "id": offer_id,
                    "trial_server_id": pid,
                    "provider_id": pid,
                    "offer_id": offer_id,
                    "suite": "quick",
                    "params": {},
                    "state": "succeeded",
                    "claims": {"intranet_gbps": 200.0},
                    "comparisons": [],
                    "created_at": finished,
                    "finished_at": finished,
                }
            )
            rows["step"].append(
                {
                    "run_id": offer_id,
                    "position": 0,
                    "step": "quick",
                    "probe": "all",
                    "samples": _samples(rng, 200.0),
                    "options": {},
                    "outputs": [],
                    "parse_errors": [],
                }
            )
    return rows


def seed(url: str, count: int, share: float) -> float:
    """Create the schema and bulk-insert the registry and the evidence; returns seconds taken."""
    started = time.perf_counter()
    engine = sa.create_engine(url)
    SQLModel.metadata.drop_all(engine)
    SQLModel.metadata.create_all(engine)
    with engine.begin() as connection:
        for batch in _rows(count):
            connection.execute(sa.insert(Provider.__table__), batch["provider"])
            for table, key in ((Licence, "licence"), (Filing, "filing"), (Datacenter, "datacenter")):
                connection.execute(sa.insert(table.__table__), [child[key] for child in batch["child"]])
            connection.execute(sa.insert(Offer.__table__), batch["offer"])
        evidence = _evidence_rows(count, share)
        for model, key in (
            (CheckRun, "check"),
            (StoredFinding, "finding"),
            (TrialServer, "server"),
            (BenchRun, "run"),
            (BenchStep, "step"),
        ):
            if evidence[key]:
                connection.execute(sa.insert(model.__table__), evidence[key])
        # the measured figures the runs' stored hook writes (bulk inserts bypass it): rebuilt at once
        bench_figures.rebuild(connection)
        latest_runs.recompute(connection)  # each provider's pointer to its newest check run, likewise
    with engine.begin() as connection:
        connection.execute(sa.text("ANALYZE"))
    engine.dispose()
    return time.perf_counter() - started


def _median_ms(action: Any, runs: int) -> tuple[float, float]:
    """Median wall-clock and CPU milliseconds of `action` (CPU time holds up on a busy machine)."""
    return _side_by_side({"action": action}, runs, before={})["action"]


def measurements_from_samples(session: Session) -> dict[int, dict[str, Any]]:
    """Figures of the recent runs decoded from sample JSON (the reading that bench_figure replaced)."""
    recent = measurements.recent_run_ids()
    runs = {
        row.id: row
        for row in session.execute(
            sa.select(BenchRun.id, BenchRun.offer_id, BenchRun.claims, BenchRun.comparisons).where(
                BenchRun.id.in_(recent)  # type: ignore[attr-defined]
            )
        )
    }
    samples: dict[int, list[dict[str, Any]]] = {}
    for run_id, step_samples in session.execute(
        sa.select(BenchStep.run_id, BenchStep.samples).where(BenchStep.run_id.in_(recent))  # type: ignore[attr-defined]
    ):
        samples.setdefault(run_id, []).extend(step_samples or [])
    figures: dict[int, dict[str, Any]] = {}
    for run in runs.values():
        found = bench_figures.run_figures(samples.get(run.id, []), run.claims, run.comparisons)
        figures.setdefault(run.offer_id, {}).update(found)
    return figures


def _change_one_price(engine: sa.Engine, run: int, providers: int) -> None:
    """Commit a new price for one offer, of another provider each run (as an analyst's edit)."""
    offer = Offer.__table__
    offer_id = (run * 997 % providers) * 4 + 1
    with engine.begin() as connection:
        connection.execute(sa.update(offer).where(offer.c.id == offer_id).values(price_month_cny=9000 + run))


def _timed(action: Any) -> tuple[float, float]:
    """Wall-clock and CPU milliseconds of one call."""
    started, used = time.perf_counter(), time.process_time()
    action()
    return (time.perf_counter() - started) * 1000, (time.process_time() - used) * 1000


def _side_by_side(
    actions: dict[str, Any], runs: int, before: dict[str, Any]
) -> dict[str, tuple[float, float]]:
    """Median wall-clock and CPU milliseconds of each action, run in turn `runs` times (noise hits all
    alike); `before[name]()` runs untimed ahead of that action."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in actions}
    for _ in range(runs):
        for name, action in actions.items():
            if name in before:
                before[name]()
            times[name].append(_timed(action))
    return {
        name: (statistics.median(t[0] for t in found), statistics.median(t[1] for t in found))
        for name, found in times.items()
    }


def measure(url: str, runs: int, providers: int) -> dict[str, Any]:
    """Statements per advice, end-to-end and pure medians, offers and measured offers."""
    answers = validate_answers(json.loads(ANSWERS.read_text(encoding="utf-8")))
    engine = sa.create_engine(url)
    statements: list[str] = []
    sa.event.listen(engine, "before_cursor_execute", lambda *args: statements.append(args[2]))
    with Session(engine) as session:

        def end_to_end() -> None:
            session.expunge_all()
            cases.advise_answers(session, answers=answers, today=TODAY)
            session.rollback()

        def cold() -> None:  # as in a new process: nothing kept, no licence number parsed yet
            offer_snapshot.clear()
            parse_licence_number.cache_clear()
            end_to_end()

        cold()
        statements.clear()
        cold()
        per_request = len(statements)
        statements.clear()
        end_to_end()
        per_warm_request = len(statements)
        edits = iter(range(10**6))
        _change_one_price(engine, next(edits), providers)
        end_to_end()  # the kept table, refreshed once
        _change_one_price(engine, next(edits), providers)
        statements.clear()
        end_to_end()
        per_changed_request = len(statements)
        cold_ms = _median_ms(cold, runs)[0]
        facts = registry_facts.offer_facts(session, today=TODAY)
        table = build_table(facts)
        medians = _side_by_side(
            {
                "pure": lambda: advise(answers, table, today=TODAY),
                "db": end_to_end,
                "changed": end_to_end,
            },
            runs,
            before={"changed": lambda: _change_one_price(engine, next(edits), providers)},
        )
        facts_ms = _median_ms(
            lambda: (
                parse_licence_number.cache_clear(),
                registry_facts.offer_facts(session, today=TODAY),
                session.rollback(),
            ),
            runs,
        )[0]
        json_ms = _median_ms(lambda: (measurements_from_samples(session), session.rollback()), runs)[1]
        columns_ms = _median_ms(
            lambda: (registry_facts.offer_measurements(session, today=TODAY), session.rollback()), runs
        )[1]
    table_ms = _median_ms(lambda: build_table(facts), runs)[0]
    engine.dispose()
    (db_ms, db_cpu), (pure_ms, pure_cpu) = medians["db"], medians["pure"]
    measured = sum(1 for fact in facts if fact.measurements)
    return {
        "offers": len(facts),
        "measured": measured,
        "statements": per_request,
        "warm_statements": per_warm_request,
        "changed_statements": per_changed_request,
        "changed": medians["changed"][0],
        "cold": cold_ms,
        "db": db_ms,
        "pure": pure_ms,
        "db_cpu": db_cpu,
        "pure_cpu": pure_cpu,
        "facts": facts_ms,
        "table": table_ms,
        "json_cpu": json_ms,
        "columns_cpu": columns_ms,
    }


def main() -> int:
    """Seed both sizes, measure, print side by side; exit 1 when statements grow or overhead is too high."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=500)
    parser.add_argument("--large", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--measured", type=float, default=0.3, help="share of offers with a measured run")
    parser.add_argument("--postgres", help="PostgreSQL URL (every gpuvet table there is dropped)")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for size in (args.small, args.large):
            url = args.postgres or f"sqlite:///{folder}/advice-{size}.sqlite3"
            seeded = seed(url, size, args.measured)
            results[size] = measure(url, args.runs, size) | {"seed": seeded}
    backend = "PostgreSQL" if args.postgres else "SQLite"
    print(
        f"advice for {ANSWERS.name} through the database ({backend}); {args.runs} runs, medians in ms "
        "(wall clock | CPU time)"
    )
    print(
        "registry unchanged since the last advice (kept offers)\n"
        "providers  offers measured | statements | end to end   pure   DB part  overhead | "
        "end to end   pure   DB part  overhead (CPU)"
    )
    for size, row in results.items():
        overhead = (row["db"] - row["pure"]) / row["pure"]
        cpu_overhead = (row["db_cpu"] - row["pure_cpu"]) / row["pure_cpu"]
        row["overhead"], row["cpu_overhead"] = overhead, cpu_overhead
        print(
            f"{size:9d} {row['offers']:7d} {row['measured']:8d} | {row['warm_statements']:10d} | "
            f"{row['db']:10.1f} {row['pure']:6.1f} {row['db'] - row['pure']:8.1f} {overhead:8.0%} | "
            f"{row['db_cpu']:10.1f} {row['pure_cpu']:6.1f} {row['db_cpu'] - row['pure_cpu']:8.1f} "
            f"{cpu_overhead:8.0%}"
        )
    print("one provider changed since the last advice (the kept table refreshed from it; wall ms)")
    print("providers | statements | end to end   pure  overhead")
    for size, row in results.items():
        row["changed_overhead"] = (row["changed"] - row["pure"]) / row["pure"]
        print(
            f"{size:9d} | {row['changed_statements']:10d} | {row['changed']:10.1f} {row['pure']:6.1f} "
            f"{row['changed_overhead']:8.0%}"
        )
    print(
        "end to end with everything read afresh (a new process, as each `flask advise` is; wall ms): "
        "statements | end to end | reading the offer facts | building their table of codes | overhead"
    )
    for size, row in results.items():
        row["cold_overhead"] = (row["cold"] - row["pure"]) / row["pure"]
        print(
            f"{size:9d} providers: {row['statements']:10d} | {row['cold']:10.1f} | {row['facts']:8.1f} | "
            f"{row['table']:8.1f} | {row['cold_overhead']:8.0%}"
        )
    print("reading the measured figures (CPU ms): from sample JSON (before bench_figure) | from bench_figure")
    for size, row in results.items():
        print(f"{size:9d} providers: {row['json_cpu']:8.1f} | {row['columns_cpu']:8.1f}")
    small, large = results[args.small], results[args.large]
    constant = all(
        small[key] == large[key] for key in ("statements", "warm_statements", "changed_statements")
    )
    print(
        f"statements per advice: {small['warm_statements']} and {large['warm_statements']} with the registry "
        f"unchanged, {small['changed_statements']} and {large['changed_statements']} after one provider "
        f"changed, {small['statements']} and {large['statements']} read afresh "
        f"({'constant' if constant else 'GROWING'}); database overhead at {args.large} providers "
        f"{large['overhead']:.0%} wall clock, {large['cpu_overhead']:.0%} CPU with the registry unchanged "
        f"(target <= {OVERHEAD_TARGET:.0%}), {large['changed_overhead']:.0%} after one provider changed, "
        f"{large['cold_overhead']:.0%} read afresh"
    )
    met = max(large["overhead"], large["changed_overhead"]) <= OVERHEAD_TARGET
    return 0 if constant and met else 1


if __name__ == "__main__":
    raise SystemExit(main())
