"""Footer extraction performance over the saved pages: pages per second and peak memory.

Usage:
    .venv/bin/python perf/footer_perf.py [--rounds N] [--fetch]

Parses every saved page under tests/data/footers (including the site/ pages) N times (default 20) with
scrapers.footer.parse on the raw bytes (charset detection included), timing with perf_counter, then
parses them once more under tracemalloc for the peak memory of one parse and of the whole pass. With
--fetch it also serves the pages on 127.0.0.1 and times fetch + parse through the real HTTP client.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

from scrapers import footer  # noqa: E402
from scrapers.http import HostRateLimiter, HttpClient, HttpPolicy  # noqa: E402

PAGES_DIR = PROJECT_ROOT / "tests" / "data" / "footers"


def _pages() -> list[tuple[str, bytes, str]]:
    content_types = json.loads((PAGES_DIR / "_headers.json").read_text(encoding="utf-8"))
    pages = []
    for path in sorted(PAGES_DIR.rglob("*.html")):
        name = str(path.relative_to(PAGES_DIR))
        pages.append((name, path.read_bytes(), content_types.get(name, "text/html")))
    return pages


def parse_rate(pages: list[tuple[str, bytes, str]], rounds: int) -> tuple[float, list[float]]:
    """Pages per second over all rounds, and the per-page median times in ms."""
    per_page: dict[str, list[float]] = {name: [] for name, _, _ in pages}
    started = time.perf_counter()
    for _ in range(rounds):
        for name, body, content_type in pages:
            begin = time.perf_counter()
            footer.parse(body, "https://www.example.cn/", content_type=content_type)
            per_page[name].append((time.perf_counter() - begin) * 1000)
    elapsed = time.perf_counter() - started
    return len(pages) * rounds / elapsed, [statistics.median(times) for times in per_page.values()]


def peak_memory(pages: list[tuple[str, bytes, str]]) -> tuple[float, float]:
    """(largest single-parse peak, whole-pass peak) in KiB, measured with tracemalloc."""
    single = 0.0
    tracemalloc.start()
    for _name, body, content_type in pages:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        footer.parse(body, "https://www.example.cn/", content_type=content_type)
        single = max(single, (tracemalloc.get_traced_memory()[1] - base) / 1024)
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    results = [footer.parse(body, "", content_type=content_type) for _n, body, content_type in pages]
    whole = (tracemalloc.get_traced_memory()[1] - base) / 1024
    tracemalloc.stop()
    del results
    return single, whole


def fetch_rate(pages: list[tuple[str, bytes, str]], rounds: int) -> float:
    """Pages per second for fetch (loopback HTTP through the real client) + parse."""
    from tests.fakes.web import SiteServer

    content_types = json.loads((PAGES_DIR / "_headers.json").read_text(encoding="utf-8"))
    policy = HttpPolicy(allow_cidrs=("127.0.0.0/8",), min_interval=0.0, retries=0)
    with (
        SiteServer(PAGES_DIR, content_types=content_types) as server,
        HttpClient(policy, rate_limiter=HostRateLimiter()) as client,
    ):
        started = time.perf_counter()
        for _ in range(rounds):
            for name, _body, _type in pages:
                result = client.fetch(server.url("/" + name))
                footer.parse(result.body, result.final_url, content_type=result.headers.get("content-type"))
        return len(pages) * rounds / (time.perf_counter() - started)


def big_page_rate(size_kib: int, rounds: int) -> tuple[int, float]:
    """(bytes, pages per second) for one home-page-sized page: filler paragraphs plus a real footer."""
    filler = (
        "<div class='card'><h3>A800 80G 裸金属</h3>"
        "<p>8 卡，RoCE 200Gbps，按月租用，联系 400-123-4567。</p></div>\n"
    )
    tail = (PAGES_DIR / "01_utf8_basic.html").read_text(encoding="utf-8")
    body = ("<html><body>" + filler * (size_kib * 1024 // len(filler.encode())) + tail).encode()
    started = time.perf_counter()
    for _ in range(rounds):
        footer.parse(body, "https://www.example.cn/", content_type="text/html; charset=utf-8")
    return len(body), rounds / (time.perf_counter() - started)


def main() -> None:
    """Run the measurements and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--fetch", action="store_true", help="also time fetch + parse over loopback HTTP")
    args = parser.parse_args()
    pages = _pages()
    sizes = [len(body) for _, body, _ in pages]
    footer.parse(pages[0][1])  # warm caches (imports, regex compilation, identifier lru caches)
    rate, medians = parse_rate(pages, args.rounds)
    single, whole = peak_memory(pages)
    print(
        f"footer extraction: {len(pages)} saved pages ({min(sizes)}-{max(sizes)} bytes), {args.rounds} rounds"
    )
    print(f"  parse rate            {rate:10.1f} pages/s")
    print(
        f"  per-page median       {statistics.median(medians):10.2f} ms (slowest page {max(medians):.2f} ms)"
    )
    print(f"  peak memory, 1 parse  {single:10.1f} KiB")
    print(f"  peak memory, 1 pass   {whole:10.1f} KiB (all {len(pages)} results kept)")
    size, big_rate = big_page_rate(256, max(1, args.rounds // 4))
    print(f"  {size // 1024} KiB home page    {big_rate:10.1f} pages/s")
    if args.fetch:
        print(f"  fetch+parse (loopback){fetch_rate(pages, max(1, args.rounds // 4)):10.1f} pages/s")


if __name__ == "__main__":
    main()
