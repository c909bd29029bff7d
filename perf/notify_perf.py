"""What notifications add to the daily re-check: the same re-check with nobody watching and with watchers.

Usage:
    .venv/bin/python perf/notify_perf.py                        # 5,000 providers, SQLite file
    .venv/bin/python perf/notify_perf.py --providers 1000 --watch-all 20 --webhooks 2
    .venv/bin/python perf/notify_perf.py --database-url postgresql+psycopg://...   # an EMPTY database

Runs perf/recheck_perf.py's scenario twice (seed, first re-check, a tenth of the licences expire and a tenth
of the footers change, then the timed daily re-check): once with nobody watching, once with --watch-all users
watching everything (e-mail on), --watch-one users each watching a hundred providers, and --webhooks global
webhooks. The second run stores the inbox items and delivery rows and hands every delivery to the queue
(the SQLite queue file, as a worker would read it); nothing is sent, no worker runs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from cryptography.fernet import Fernet  # noqa: E402
from sqlmodel import Session, select  # noqa: E402

from app.accounts import users  # noqa: E402
from app.models import Provider, User  # noqa: E402
from app.models.notify import Delivery, InboxItem, NotifySettings, ProviderWatch, Webhook  # noqa: E402
from app.models.watch import ChangeEvent  # noqa: E402
from perf.recheck_perf import DAY_ONE, DAY_TWO, count, daily, expire_some_licences, seed_evidence  # noqa: E402
from perf.registry_perf import StatementCounter, build_app, reset_schema, seed  # noqa: E402


def add_watchers(session: Session, watch_all: int, watch_one: int, webhooks: int) -> None:
    """Users watching everything (e-mail on), users watching 100 providers each, global webhooks."""
    provider_ids = list(session.exec(select(Provider.id).order_by(Provider.id)).all())
    for n in range(watch_all + watch_one):
        users.create_user(session, username=f"watcher{n}", password="correct horse battery", role="viewer")
    ids = list(session.exec(select(User.id).order_by(User.id)).all())
    for n, user_id in enumerate(ids):
        if n < watch_all:
            session.add(
                NotifySettings(user_id=user_id, watch_all=True, email_enabled=True, email=f"w{n}@example.cn")
            )
        else:
            start = (n * 100) % max(1, len(provider_ids))
            for provider_id in provider_ids[start : start + 100]:
                session.add(ProviderWatch(user_id=user_id, provider_id=provider_id))
    secret = Fernet(Fernet.generate_key()).encrypt(b"perf-secret-perf-secret").decode()
    for n in range(webhooks):
        session.add(Webhook(url=f"https://hooks{n}.example.cn/gpuvet", secret_encrypted=secret))
    session.commit()


def run(url: str, providers: int, instance: Path, watchers: tuple[int, int, int] | None) -> dict[str, Any]:
    """One full scenario; the timed day-2 re-check and what it stored."""
    reset_schema(url)
    seed(url, providers)
    seed_evidence(url, providers, datetime(2026, 11, 30, tzinfo=UTC))
    app = build_app(url, instance)
    app.config["GPUVET_SETTINGS"] = app.config["GPUVET_SETTINGS"].model_copy(
        update={"smtp_host": "127.0.0.1", "smtp_port": 1}  # e-mail planned and queued; never sent here
    )
    engine = app.extensions["gpuvet.engine"]
    with app.app_context(), Session(engine, expire_on_commit=False) as session:
        daily(session, DAY_ONE)
        if watchers:
            add_watchers(session, *watchers)
        expire_some_licences(url, 10)
        seed_evidence(url, providers, datetime(2026, 12, 1, 20, tzinfo=UTC), changed_share=10)
        events_before = count(session, ChangeEvent)
        counter = StatementCounter(engine)
        seconds, result = daily(session, DAY_TWO)
        figures = {
            "seconds": seconds,
            "cpu_s": result["cpu_s"],
            "statements": counter.count,
            "events": count(session, ChangeEvent) - events_before,
            "inbox": count(session, InboxItem),
            "deliveries": count(session, Delivery),
        }
    engine.dispose()
    return figures


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--providers", type=int, default=5000)
    parser.add_argument("--watch-all", type=int, default=20, help="users watching every provider (e-mail on)")
    parser.add_argument("--watch-one", type=int, default=20, help="users watching 100 providers each")
    parser.add_argument("--webhooks", type=int, default=2, help="global webhooks")
    parser.add_argument("--database-url", help="an empty database to use instead of a temporary SQLite file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gpuvet-notify-perf-") as folder:
        url = args.database_url or f"sqlite:///{Path(folder) / 'perf.sqlite3'}"
        started = time.perf_counter()
        quiet = run(url, args.providers, Path(folder) / "instance-a", None)
        watched = run(
            url, args.providers, Path(folder) / "instance-b", (args.watch_all, args.watch_one, args.webhooks)
        )
        total = time.perf_counter() - started
    backend = url.split(":", 1)[0]
    print(f"\ngpuvet daily re-check with notifications - {backend}, {args.providers} providers\n")
    print(f"{'':34} {'nobody watching':>16} {'watchers':>12} {'ratio':>7}")
    for key, label in [
        ("seconds", "seconds for the daily re-check"),
        ("cpu_s", "  of which this process on a CPU"),
        ("statements", "SQL statements"),
        ("events", "change events stored"),
        ("inbox", "inbox items stored"),
        ("deliveries", "deliveries stored and queued"),
    ]:
        a, b = quiet[key], watched[key]
        ratio = f"x{b / a:.2f}" if a else "-"
        shown = (f"{a:>16.2f} {b:>12.2f}") if isinstance(a, float) else (f"{a:>16} {b:>12}")
        print(f"{label:34} {shown} {ratio:>7}")
    extra = watched["seconds"] - quiet["seconds"]
    per = extra / watched["deliveries"] * 1000 if watched["deliveries"] else 0.0
    print(
        f"\nwatchers: {args.watch_all} watch all (e-mail on), {args.watch_one} watch 100 providers each, "
        f"{args.webhooks} global webhooks"
    )
    print(
        f"notifications added {extra:.2f} s ({per:.2f} ms per delivery stored and queued); "
        f"run took {total:.0f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
