"""Signing performance: the same provider report exported unsigned and signed, side by side in one run.

Usage:
    .venv/bin/python perf/signing_perf.py [--runs 15] [--provider NAME]

Loads the fictional demo providers into a temporary SQLite database and exports one provider's vetting
report (database -> inputs -> HTML -> PDF -> stored record) with GPUVET_SIGN_REPORTS off and on, in
alternating order, each pair with the same renderer and data. The self-signed key (made once into the
temporary instance folder) and pyHanko's import are a one-time cost, timed apart as "first signature".
Prints median and p95 of both, the median of the paired differences, the signature alone, and the size
added. Target: signing adds at most 0.2 s to an export. Timings depend on what else runs on the machine:
the load average is printed first.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from sqlmodel import Session, SQLModel, col, func, select  # noqa: E402

import app.models  # noqa: E402, F401 - registers every table
from app import create_app  # noqa: E402
from app.core.config import Settings  # noqa: E402
from app.credentials import report_exports as report_service  # noqa: E402
from app.models.provider import Offer, Provider  # noqa: E402
from app.registry.demo import load_demo  # noqa: E402
from app.reports.pdf import renderer_for_settings  # noqa: E402
from app.reports.signing import report_signer  # noqa: E402

TARGET_ADDED_S = 0.2


def pick_provider(session: Session, name: str | None) -> int:
    """The named demo provider, or the one with the most offers (the longest report)."""
    if name:
        provider = session.exec(select(Provider).where(col(Provider.legal_name).contains(name))).first()
        if provider is None:
            raise SystemExit(f"no demo provider named like {name!r}")
        return provider.id
    counts = select(Offer.provider_id, func.count()).group_by(Offer.provider_id).order_by(func.count().desc())
    return session.exec(counts).first()[0]


def p95(times: list[float]) -> float:
    """The 95th percentile (the largest value when there are fewer than 20)."""
    return sorted(times)[max(0, round(0.95 * len(times)) - 1)]


def print_load() -> None:
    """The load average first: timings depend on what else runs on the machine."""
    load1, load5, _ = os.getloadavg()
    print(f"load average: {load1:.2f} (1 min), {load5:.2f} (5 min) on {os.cpu_count()} CPUs")
    if load1 > 1.0:
        print("warning: the machine is busy; timings will be higher than on an idle machine")


def side_by_side(
    export: Callable[[bool], tuple[float, bytes]], runs: int
) -> tuple[dict[bool, list[float]], dict[bool, int]]:
    """`runs` unsigned and signed exports (export(signed) -> seconds, PDF) in alternating order: the times
    of each, and the size of the last PDF of each."""
    times: dict[bool, list[float]] = {False: [], True: []}
    sizes: dict[bool, int] = {}
    for run in range(runs):
        for signed in (False, True) if run % 2 == 0 else (True, False):
            elapsed, data = export(signed)
            times[signed].append(elapsed)
            sizes[signed] = len(data)
    return times, sizes


def print_side_by_side(times: dict[bool, list[float]], sizes: dict[bool, int]) -> float:
    """Median, p95 and size of both, and the median of the paired differences (returned)."""
    differences = [signed - plain for plain, signed in zip(times[False], times[True], strict=True)]
    print(f"{'export':<24} {'median s':>9} {'p95 s':>8} {'size KB':>9}")
    for signed, name in ((False, "unsigned"), (True, "signed (self-signed key)")):
        median = statistics.median(times[signed])
        print(f"{name:<24} {median:>9.3f} {p95(times[signed]):>8.3f} {sizes[signed] / 1024:>9.1f}")
    added = statistics.median(differences)
    print(f"added by signing: median of paired differences {added:.3f} s (p95 {p95(differences):.3f} s)")
    return added


def demo_app(folder: str) -> tuple[Any, Any, Settings]:
    """An app on a fresh SQLite database in `folder` with the demo providers loaded: app, engine, settings."""
    settings = Settings(GPUVET_INSTANCE_PATH=Path(folder), DATABASE_URL=f"sqlite:///{folder}/perf.sqlite3")
    flask_app = create_app(settings)
    engine = flask_app.extensions["gpuvet.engine"]
    SQLModel.metadata.create_all(engine)
    with flask_app.app_context(), Session(engine) as session:
        load_demo(session)
    return flask_app, engine, settings


def print_target(added: float) -> None:
    verdict = "meets" if added <= TARGET_ADDED_S else "MISSES"
    print(f"target: signing adds <= {TARGET_ADDED_S} s: {verdict} it ({added:.3f} s)")


def main() -> None:
    """Export unsigned and signed in turn and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--provider", help="part of a demo provider's legal name")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print_load()

    with tempfile.TemporaryDirectory() as folder:
        flask_app, engine, unsigned_settings = demo_app(folder)
        signed_settings = unsigned_settings.model_copy(update={"sign_reports": True})
        renderer = renderer_for_settings(unsigned_settings)
        author = report_service.Author(id=None, name="perf")
        with flask_app.app_context(), Session(engine, expire_on_commit=False) as session:
            provider_id = pick_provider(session, args.provider)

            def export(signed: bool) -> tuple[float, bytes]:
                flask_app.config["GPUVET_SETTINGS"] = signed_settings if signed else unsigned_settings
                started = time.perf_counter()
                record = report_service.export_provider_report(
                    session, provider_id=provider_id, language="zh", author=author, renderer=renderer
                )
                return time.perf_counter() - started, record.pdf_bytes

            _elapsed, unsigned_pdf = export(False)  # warm-up: font subset, stylesheet, templates
            first_signed, _data = export(True)  # one-time: pyHanko's import and the self-signed key
            times, sizes = side_by_side(export, args.runs)
            signer = report_signer(always=True)
            assert signer is not None
            signature_times = []
            for _run in range(args.runs):
                started = time.perf_counter()
                signer.sign(unsigned_pdf, purpose="perf")
                signature_times.append(time.perf_counter() - started)

    print(f"provider {provider_id}, {args.runs} exports each, alternating order")
    added = print_side_by_side(times, sizes)
    print(f"signature alone: median {statistics.median(signature_times):.3f} s")
    print(f"first signed export (pyHanko import + key made once): {first_signed:.3f} s")
    print_target(added)


if __name__ == "__main__":
    main()
