"""Report rendering performance: a typical Chinese provider report (3-5 pages, two charts), ours vs naive.

Usage:
    .venv/bin/python perf/report_perf.py [--runs 15] [--provider NAME]

Loads the fictional demo providers into a temporary SQLite database, assembles one provider's report
inputs (default: the demo provider whose report is longest while staying within 5 pages), renders the
HTML once, then times HTML -> PDF under several set-ups, each changing one thing from ours:

    ours           pre-subset GB2312 font (full font as per-glyph fallback), HarfBuzz subsetting, one
                   FontConfiguration and one parsed stylesheet reused across renders, compact chart
                   SVG, cyclic garbage collector paused while rendering; no table of contents (short
                   reports: page numbers in one cost a relayout)
    full font      the 5 MB WenQuanYi collection itself instead of the pre-subset copy
    fontTools      what WeasyPrint does without libharfbuzz-subset0 (pre-subset font still used)
    naive          system font by name, new font configuration and stylesheet parse per render,
                   fontTools subsetting: WeasyPrint out of the box on a machine without libharfbuzz-subset0
    naive Noto     as naive with Noto Sans CJK SC, when fonts-noto-cjk is installed

and prints median, p95, pages and size side by side, plus the chart SVG effect and the whole export
(database -> inputs -> HTML -> PDF -> stored record). Timings depend on what else runs on the machine:
the load average is printed first; run it when the machine is idle.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import weasyprint  # noqa: E402
import weasyprint.pdf.fonts as weasyprint_fonts  # noqa: E402
from sqlmodel import Session, SQLModel  # noqa: E402
from weasyprint.text.fonts import FontConfiguration  # noqa: E402

import app.models  # noqa: E402, F401 - registers every table
from app import create_app  # noqa: E402
from app.core.config import Settings  # noqa: E402
from app.credentials import report_exports as report_service  # noqa: E402
from app.credentials.report_inputs import provider_inputs  # noqa: E402
from app.registry.demo import load_demo  # noqa: E402
from app.registry.provider_list import ProviderQuery, list_providers  # noqa: E402
from app.reports import charts  # noqa: E402
from app.reports.assemble import snapshot_sha256  # noqa: E402
from app.reports.fonts import DEFAULT_FONT  # noqa: E402
from app.reports.pdf import REPORT_CSS, PdfRenderer, font_cache_dir  # noqa: E402
from app.reports.render import render_html  # noqa: E402

TARGET_MEDIAN_S = 0.5
TARGET_BYTES = 1_000_000
NOTO = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")


@dataclass
class Result:
    """Timings of one set-up."""

    name: str
    times: list[float]
    pages: int
    size: int

    @property
    def median(self) -> float:
        """Median seconds."""
        return statistics.median(self.times)

    @property
    def p95(self) -> float:
        """95th percentile seconds (nearest rank)."""
        ordered = sorted(self.times)
        return ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]


def measure(name: str, render: Callable[[], tuple[bytes, int]], runs: int, warmup: int = 2) -> Result:
    """Time `render` `runs` times after `warmup` untimed calls."""
    return measure_interleaved([(name, render, runs, False)], warmup)[0]


Setup = tuple[str, Callable[[], tuple[bytes, int]], int, bool]  # name, render, runs, fontTools subsetting


def measure_interleaved(setups: list[Setup], warmup: int = 2) -> list[Result]:
    """Time the set-ups in turn, round after round, so a change in machine load hits them all alike."""
    results = []
    for name, render, _runs, slow in setups:
        with fonttools_subsetting() if slow else nullcontext():
            for _ in range(warmup if not slow else 1):
                data, pages = render()
        results.append(Result(name, [], pages, len(data)))
    for round_number in range(max(runs for _name, _render, runs, _slow in setups)):
        for result, (_name, render, runs, slow) in zip(results, setups, strict=True):
            if round_number >= runs:
                continue
            with fonttools_subsetting() if slow else nullcontext():
                start = time.perf_counter()
                render()
                result.times.append(time.perf_counter() - start)
    return results


@contextmanager
def fonttools_subsetting() -> Iterator[None]:
    """WeasyPrint as on a machine without libharfbuzz-subset0 (it falls back to fontTools)."""
    saved = weasyprint_fonts.harfbuzz_subset
    weasyprint_fonts.harfbuzz_subset = None
    weasyprint_logger = logging.getLogger("weasyprint")
    level = weasyprint_logger.level
    weasyprint_logger.setLevel(logging.ERROR)  # it warns on every render
    try:
        yield
    finally:
        weasyprint_fonts.harfbuzz_subset = saved
        weasyprint_logger.setLevel(level)


def naive_render(html: str, family: str) -> Callable[[], tuple[bytes, int]]:
    """WeasyPrint out of the box: the stylesheet inline, the font found by name, nothing reused."""
    css = REPORT_CSS.read_text(encoding="utf-8").replace('"GV Sans", "GV Sans Full"', f'"{family}"')
    document_html = html.replace("</head>", f"<style>{css}</style></head>", 1)

    def render() -> tuple[bytes, int]:
        document = weasyprint.HTML(string=document_html).render(font_config=FontConfiguration())
        return document.write_pdf(), len(document.pages)

    return render


def renderer_render(renderer: PdfRenderer, html: str) -> Callable[[], tuple[bytes, int]]:
    """Render through one of our renderers."""

    def render() -> tuple[bytes, int]:
        result = renderer.render(html)
        return result.data, result.pages

    return render


def chart_documents(inputs: dict[str, Any]) -> tuple[str, str]:
    """A page with the report's two charts as we draw them, and the same with pygal's own stylesheet."""
    from app.reports.document import registry_charts
    from app.reports.labels import Labels

    report_charts = registry_charts(inputs, Labels("zh"))
    ours = "".join(str(charts.render_svg(chart)) for chart in report_charts)
    original_config, original_cleaner = charts._config, charts._cleaner
    try:
        charts._config = lambda chart, height, **options: {
            key: value for key, value in original_config(chart, height, **options).items() if key != "css"
        }
        charts._cleaner = lambda chart_id, dashed: lambda root: root
        pygal_default = "".join(str(charts.render_svg(chart)) for chart in report_charts)
    finally:
        charts._config, charts._cleaner = original_config, original_cleaner
    return f"<html><body>{ours}</body></html>", f"<html><body>{pygal_default}</body></html>"


def pick_provider(session: Session, name: str | None) -> int:
    """The named demo provider, or the one with the most offers, licences and filings."""
    page = list_providers(session, query=ProviderQuery(per_page=100))
    if name:
        for provider in page.items:
            if name in provider.legal_name:
                return provider.id
        raise SystemExit(f"no demo provider named like {name!r}")
    best = max(page.items, key=lambda p: (len(p.offers), len(p.licences) + len(p.filings), -p.id))
    return best.id


def print_table(results: list[Result]) -> None:
    """The set-ups side by side."""
    print(f"{'set-up':<34} {'median s':>9} {'p95 s':>8} {'pages':>6} {'size KB':>9}")
    for result in results:
        size_kb = result.size / 1024
        print(f"{result.name:<34} {result.median:>9.3f} {result.p95:>8.3f} {result.pages:>6} {size_kb:>9.1f}")


def main() -> None:
    """Run the comparison and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--provider", help="part of a demo provider's legal name")
    parser.add_argument("--skip-naive", action="store_true", help="only the fast set-ups")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    load1, load5, _ = os.getloadavg()
    print(f"load average: {load1:.2f} (1 min), {load5:.2f} (5 min) on {os.cpu_count()} CPUs")
    if load1 > 1.0:
        print("warning: the machine is busy; timings will be higher than on an idle machine")

    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(
            GPUVET_INSTANCE_PATH=Path(folder), DATABASE_URL=f"sqlite:///{folder}/perf.sqlite3"
        )
        flask_app = create_app(settings)
        engine = flask_app.extensions["gpuvet.engine"]
        SQLModel.metadata.create_all(engine)
        with Session(engine, expire_on_commit=False) as session:
            load_demo(session)
            provider_id = pick_provider(session, args.provider)
            started = time.perf_counter()
            inputs = provider_inputs(session, provider_id=provider_id, today=datetime.now(UTC).date())
            assemble_s = time.perf_counter() - started
        meta = {
            "number": "GV-2026-000123",
            "created_at": datetime.now(UTC).isoformat(),
            "author": "perf",
            "language": "zh",
            "inputs_sha256": snapshot_sha256(inputs),
        }
        started = time.perf_counter()
        html = render_html("provider", inputs, meta, "zh", screen=False, toc=False)  # short: no contents
        html_s = time.perf_counter() - started
        html_toc = render_html("provider", inputs, meta, "zh", screen=False, toc=True)
        print(
            f"provider: {inputs['provider']['legal_name']} ({len(inputs['offers'])} offers, "
            f"{len(inputs['licences'])} licences, {len(inputs['filings'])} filings), "
            f"{html.count('<svg')} charts; inputs {assemble_s * 1000:.0f} ms, HTML {html_s * 1000:.0f} ms"
        )

        started = time.perf_counter()
        ours = PdfRenderer(font_path=DEFAULT_FONT, cache_dir=font_cache_dir(settings))
        print(
            f"first use: font subset built and renderer set up in {time.perf_counter() - started:.2f} s "
            "(once per installation / process)\n"
        )
        full_font = PdfRenderer(font_path=DEFAULT_FONT, cache_dir=None)
        collecting = PdfRenderer(font_path=DEFAULT_FONT, cache_dir=font_cache_dir(settings), pause_gc=False)

        runs, naive_runs = args.runs, max(3, args.runs // 3)
        setups: list[Setup] = [
            ("ours", renderer_render(ours, html), runs, False),
            ("ours, with contents page numbers", renderer_render(ours, html_toc), runs, False),
            ("ours, full 5 MB font", renderer_render(full_font, html), runs, False),
            ("ours, garbage collector not paused", renderer_render(collecting, html), runs, False),
            ("ours, fontTools subsetting", renderer_render(ours, html), runs, True),
        ]
        if not args.skip_naive:
            naive = naive_render(html, "WenQuanYi Micro Hei")
            setups += [
                ("naive (WQY by name, fontTools)", naive, naive_runs, True),
                ("naive, but HarfBuzz subsetting", naive, runs, False),
            ]
            if NOTO.exists():
                setups.append(
                    ("naive Noto Sans CJK SC", naive_render(html, "Noto Sans CJK SC"), naive_runs, True)
                )
        results = measure_interleaved(setups)
        print_table(results)
        if not NOTO.exists():
            print("(Noto Sans CJK SC not installed: fonts-noto-cjk; TESTING.md measured ~4.4 s for one page)")

        print("\ncharts only (the report's two charts on one page):")
        compact, pygal_default = chart_documents(inputs)
        print_table(
            measure_interleaved(
                [
                    ("compact chart SVG (ours)", renderer_render(ours, compact), args.runs, False),
                    ("pygal's own CSS and tooltips", renderer_render(ours, pygal_default), args.runs, False),
                ]
            )
        )
        print(f"SVG bytes: ours {len(compact)}, pygal default {len(pygal_default)}")

        with flask_app.app_context(), Session(engine, expire_on_commit=False) as session:
            author = report_service.Author(id=None, name="perf")

            def export() -> tuple[bytes, int]:
                record = report_service.export_provider_report(
                    session, provider_id=provider_id, language="zh", author=author, renderer=ours
                )
                return record.pdf_bytes, record.pages

            print("\nwhole export (database -> inputs -> HTML -> PDF -> stored record):")
            print_table([measure("export_provider_report", export, args.runs)])

    best = results[0]
    verdict = "meets" if best.median <= TARGET_MEDIAN_S and best.size <= TARGET_BYTES else "MISSES"
    print(
        f"\ntarget <= {TARGET_MEDIAN_S} s median and <= {TARGET_BYTES // 1000} KB: ours {verdict} it "
        f"({best.median:.3f} s, {best.size / 1024:.0f} KB, {best.pages} pages)"
    )


if __name__ == "__main__":
    main()
