"""The case page with 10 quotes against the same page with none: median time, side by side in one run.

Usage:
    .venv/bin/python perf/quotes_perf.py [--quotes 10] [--runs 15]

Loads the demo registry on a temporary SQLite file, stores two copies of the multi-node training example case,
enters --quotes quotes (spread over the demo offers, one expired) on the second, then requests the two case
pages in turn through the Flask test client (alternating, so both see the same machine load) and prints the
median and 95th-percentile wall time and the median CPU time of each, and their ratio. Target: the page with
the quotes at most 1.2x the page without (exit 1 when it is over).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from sqlmodel import Session, SQLModel, select  # noqa: E402

import app.models  # noqa: E402, F401 - registers every table
from app.models import Offer  # noqa: E402

TARGET_RATIO = 1.2
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
ANSWERS = PROJECT_ROOT / "examples" / "answers" / "distributed_training.json"


class _Analyst:
    id = None
    username = "perf"


def _quote(offer_id: int, index: int, today: date) -> dict[str, Any]:
    valid = today + timedelta(days=-1 if index == 0 else 30)
    return {
        "offer_id": offer_id,
        "received_via": "email",
        "price_gpu_hour_cny": 9.0 + index,
        "price_month_cny": 200_000 + 10_000 * index if index % 2 else None,
        "min_term_months": 3,
        "delivery_on": today + timedelta(days=14),
        "sla_availability_pct": 99.9,
        "sla_compensation": "每中断 1 小时赔 1 天费用",
        "bandwidth_type": "dedicated",
        "valid_until": valid,
    }


def seed(session: Session, quotes: int) -> tuple[int, int]:
    """The demo registry and two equal cases; the second gets `quotes` quotes. Returns both case ids."""
    from app.cases import cases
    from app.cases import quotes as quote_service
    from app.core import clock
    from app.registry import demo

    today = clock.business_today()
    demo.load_demo(session, today=today)
    answers = json.loads(ANSWERS.read_text(encoding="utf-8"))
    owner = cases.Actor(None, "perf")
    bare = cases.create_case(session, answers=answers, owner=owner, title="无报价").id
    quoted = cases.create_case(session, answers=answers, owner=owner, title="十家报价").id
    offers = session.exec(select(Offer.id).order_by(Offer.id)).all()
    for index in range(quotes):
        values = _quote(offers[index % len(offers)], index, today)
        quote_service.create_quote(session, case_id=quoted, values=values, scan=PNG, user=_Analyst())
    return bare, quoted


def _timed(client: Any, url: str, wall: list[float], cpu: list[float]) -> None:
    started, used = time.perf_counter(), time.process_time()
    response = client.get(url)
    wall.append((time.perf_counter() - started) * 1000)
    cpu.append((time.process_time() - used) * 1000)
    assert response.status_code == 200, response.status_code


def _summary(wall: list[float], cpu: list[float]) -> tuple[float, float, float]:
    p95 = statistics.quantiles(wall, n=20, method="inclusive")[18] if len(wall) > 1 else wall[0]
    return statistics.median(wall), p95, statistics.median(cpu)


def main() -> int:
    """Seed, time both pages alternately, print side by side; exit 1 when the ratio is over the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quotes", type=int, default=10)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()

    from app import create_app
    from app.accounts import users
    from app.core.config import Settings

    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'perf.db'}"
        flask_app = create_app(
            Settings(GPUVET_INSTANCE_PATH=Path(folder), DATABASE_URL=url), WTF_CSRF_ENABLED=False
        )
        engine = flask_app.extensions["gpuvet.engine"]
        SQLModel.metadata.create_all(engine)
        with flask_app.app_context(), Session(engine) as session:
            bare, quoted = seed(session, args.quotes)
            users.create_user(session, username="perf", password="correct horse battery", role="viewer")
        client = flask_app.test_client()
        client.post("/login", data={"username": "perf", "password": "correct horse battery"})
        pages = {"0 quotes": f"/cases/{bare}", f"{args.quotes} quotes": f"/cases/{quoted}"}
        assert b"quote-useful" in client.get(pages[f"{args.quotes} quotes"]).data
        times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in pages}
        for page in pages.values():  # warm-up: templates compiled, caches filled
            client.get(page)
        for _ in range(args.runs):
            for name, page in pages.items():
                _timed(client, page, *times[name])
        engine.dispose()
    results = {name: _summary(*measured) for name, measured in times.items()}
    print(f"case page, multi-node training case, demo registry, {args.runs} runs each, alternating")
    print(f"{'':12} {'median ms':>10} {'p95 ms':>10} {'cpu ms':>10}")
    for name, (median, p95, cpu) in results.items():
        print(f"{name:12} {median:10.1f} {p95:10.1f} {cpu:10.1f}")
    (base, _p95, base_cpu), (with_quotes, _q95, quotes_cpu) = results.values()
    ratio, cpu_ratio = with_quotes / base, quotes_cpu / base_cpu
    verdict = "ok" if ratio <= TARGET_RATIO else "OVER"
    print(f"ratio {ratio:.2f}x wall, {cpu_ratio:.2f}x cpu (target <= {TARGET_RATIO}x): {verdict}")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
