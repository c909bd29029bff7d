"""Headless Chromium sweep, zh and en: no raw keys, \\u escapes, wrong-language text or sideways scrolling.

One live server per module holds the demo providers plus one of everything a list can show (a case with a
tick and three quotes, a trial server, an uploaded run, a queued job, a lookup, a stored page, an invitation).
The sweep logs in as an admin, opens every link of the navigation bar (its "More" menu and the user menu
included), then the first record of each list, every tab of the first provider, the public disclosure form
and the record forms, in both languages. Each page is read at 1366 px, then narrowed to a 390 px phone on the
same load: its document must not be wider than the phone (a wide table scrolls inside its own box). Each
failure names the page, the language, the rule and the offending text.

The language rules are strict: an English page may show Chinese only inside names and entered data (provider,
company and place names, addresses, what the seed typed), commands and code included; a Chinese page may show
Latin words only inside such data, in numbers and model names (a word with a digit: H100, RoCEv2), as units,
or from the short lists below, each with its reason.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import sqlalchemy as sa
from sqlmodel import Session, SQLModel

import app.models  # noqa: F401 - registers every table
from app import create_app
from app.accounts import users
from app.cases import cases, quotes
from app.core import vocabulary
from app.core.config import Settings
from app.credentials import evidence, lookups
from app.disclosure import invitations
from app.models import Offer, Provider
from app.registry import demo
from app.registry.provider_list import list_providers, parse_query
from app.trials import bench_uploads
from app.trials import servers as trials
from scrapers.http import FetchResult
from tests.advice.factories import training_answers
from tests.browser.test_provider_flow import CHROMIUM, CHROMIUM_ARGS, PASSWORD, TIMEOUT_MS, _require_chromium
from tests.cases.test_quotes import quote_values
from tests.credentials.credit.conftest import png_bytes

pytestmark = pytest.mark.browser

DATA = Path(__file__).resolve().parents[1] / "data"
ADMIN = "sweep-admin"
# The crawl is bounded: at most this many pages per language, and this long in all.
MAX_PAGES = 80
MAX_SECONDS = 300
# The first link matching each pattern (in page order) is followed, and every tab of the first provider.
RECORD_LINKS = [
    re.compile(r"^/providers/\d+$"),
    re.compile(r"^/cases/\d+$"),
    re.compile(r"^/cases/\d+/checklist$"),
    re.compile(r"^/providers/\d+/lookups$"),
    re.compile(r"^/trial-servers/\d+$"),
    re.compile(r"^/bench-runs/\d+$"),
    re.compile(r"^/jobs/\d+$"),
    re.compile(r"^/lookups/\d+$"),
    re.compile(r"^/evidence/\d+$"),
]
# Every kind of record page the sweep must reach (the seeded data has one of each).
PROVIDER_TABS = ("trials", "credentials", "evidence", "reports")
MUST_REACH = [r"^/providers/\d+$", r"^/cases/\d+$", r"^/trial-servers/\d+$", r"^/bench-runs/\d+$",
              r"^/jobs/\d+$", r"^/lookups/\d+$", r"^/evidence/\d+$", r"^/cases/\d+/checklist$",
              r"^/providers/\d+/lookups$", r"^/d/[\w-]+$",
              *(rf"^/providers/\d+/{tab}$" for tab in PROVIDER_TABS)]  # fmt: skip

# Latin words a Chinese page may show. Units of measure, written the same in Chinese text:
UNITS = {
    "GB", "TB", "MB", "KB", "GiB", "TiB", "MiB", "Gbps", "Mbps", "Gbit", "Mbit", "GB/s", "MB/s", "Gbit/s",
    "Mbit/s", "ms", "us", "km", "kW", "IOPS", "TFLOPS", "FLOPS",
}  # fmt: skip
# Acronyms Chinese buyers and providers write in Latin letters (there is no Chinese name in use for them):
ACRONYMS = {
    "GPU", "CPU", "vCPU", "NVMe", "RDMA", "RoCE", "IB", "ICP", "IDC", "ISP", "SSH", "ISO", "CSV", "JSON",
    "PDF", "PNG", "API", "URL", "IP", "DNS", "HTTP", "HTTPS", "TCP", "UDP", "ID", "SHA", "UTC", "BGP", "SLA",
    "TLS", "SSD", "HDD", "PCIe", "SXM", "HBM", "ECC", "LLM", "NFS", "GBK", "CNY", "UUID", "SMTP",
    "RAID", "JPEG", "CIDR", "YYYY-MM-DD", "GET", "POST",
}  # fmt: skip
# Names of products, tools and standards (proper names, never translated):
PRODUCTS = {
    "InfiniBand", "NVLink", "NVIDIA", "CUDA", "NCCL", "AMD", "Intel", "Linux", "iperf3", "fio", "nvidia-smi",
    "gpuvet", "Ceph", "Lustre", "Excel", "PyTorch", "DataLoader", "Tier", "MIIT", "all-reduce",
    "JavaScript", "OpenSSH", "PEM",
}  # fmt: skip
ALLOWED_LATIN = UNITS | ACRONYMS | PRODUCTS
SNAKE_KEY = re.compile(r"(?<![\w./:@-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/-])")
KEY_TOKEN = re.compile(r"[a-z0-9_]+")
UNICODE_ESCAPE = re.compile(r"\\u[0-9a-fA-F]{4}")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+./-]*[A-Za-z0-9+]|[A-Za-z]")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff01-\uff5e]+")
EMAIL_OR_URL = re.compile(
    r"\S+@\S+|\b(?:https?://|www\.)\S*|\b[\w-]+(?:\.[\w-]+)*\.(?:com|cn|net|org|example)\b\S*"
    r"|\b(?:text|application|image)/[\w.+-]+(?:; ?charset=[\w-]+)?"  # content types of stored pages
)

# Visible text of a page, by element: the page's own words (left out: the language switch and elements marked
# as data with class "verbatim"; a run marked lang="zh" on an English page is still Chinese on that page, so
# it counts; code, pre, kbd and samp are marked as code: English pages must not show Chinese there either,
# Chinese pages may show commands), and its \\u-escape text (everything visible).
EXTRACT_JS = """
(pageLang) => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const codeLike = 'code, pre, kbd, samp, textarea';
  const texts = [], raw = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue.replace(/\\s+/g, ' ').trim();
    const el = node.parentElement;
    if (!text || !el || !el.checkVisibility({visibilityProperty: true, opacityProperty: true})) continue;
    if (el.closest('script, style, noscript, template')) continue;
    raw.push(text);
    if (el.closest('.verbatim, .language-switch')) continue;
    const where = el.closest('[id]');
    // a run marked lang="zh" inside English prose is judged with its sentence (a licence number's province
    // character is part of the number, which the registry holds whole)
    const run = el.closest('body [lang]');
    const sentence = run && run.parentElement
      ? run.parentElement.textContent.replace(/\\s+/g, ' ').trim() : text;
    texts.push({text: sentence, code: !!el.closest(codeLike),
                where: el.tagName.toLowerCase() + (where ? '#' + where.id : '')});
  }
  document.querySelectorAll('input[placeholder], textarea[placeholder]').forEach(el => {
    if (el.checkVisibility() && !el.closest('.verbatim')) {
      texts.push({text: el.getAttribute('placeholder'), code: false,
                  where: 'placeholder of #' + (el.id || el.name)});
    }
  });
  texts.push({text: document.title, code: false, where: 'title'});
  return {texts, raw};
}
"""
# How wide the document is against the viewport, and the outermost elements that stick out (at most 3).
WIDTH_JS = """
() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  if (document.documentElement.scrollWidth > width + 1) {
    document.querySelectorAll('body *').forEach(el => {
      const box = el.getBoundingClientRect();
      if (box.right > width + 1 && box.width > 0 && el.checkVisibility()) {
        if (!el.parentElement || el.parentElement.getBoundingClientRect().right <= width + 1) {
          wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
            (el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : '') +
            ' ends at ' + Math.round(box.right) + ' px');
        }
      }
    });
  }
  return {scrollWidth: document.documentElement.scrollWidth, width, wide: wide.slice(0, 3)};
}
"""
DESKTOP, PHONE = 1366, 390
SHOTS = os.environ.get("GPUVET_SWEEP_SHOTS")


@dataclass(frozen=True)
class Problem:
    """One rule broken on one page in one language."""

    path: str
    language: str
    rule: str
    text: str

    def __str__(self) -> str:
        return f"{self.path} [{self.language}] {self.rule}: {self.text}"


def _seed(flask_app: Any) -> dict[str, Any]:
    """Demo providers, an admin, and one record of every list; returns the registry's texts and some ids."""
    settings = flask_app.config["GPUVET_SETTINGS"]
    with (
        flask_app.app_context(),
        Session(flask_app.extensions["gpuvet.engine"], expire_on_commit=False) as session,
    ):
        demo.load_demo(session)
        admin = users.create_user(session, username=ADMIN, password=PASSWORD, role="admin")
        actor = cases.Actor(admin.id, admin.username)
        # the provider the list shows first (its page and tabs are the ones the sweep opens)
        first = list_providers(session, query=parse_query({})).items[0]
        provider = session.get(Provider, first.id)
        offer = provider.offers[0]
        answers = training_answers(model={"parameters_billion": 7}, budget={"monthly_cny": 500_000})
        case = cases.create_case(
            session, answers=answers.model_dump(mode="json", exclude_none=True), owner=actor, title="巡检案例"
        )
        cases.tick_item(
            session, case_id=case.id, item_key="sla_contract", provider_id=provider.id, done=True,
            comment="已核对", evidence_url=None, actor=actor,
        )  # fmt: skip
        cipher = trials.cipher_from_settings(settings)
        server = trials.create_server(
            session, provider_id=provider.id, cipher=cipher, user=admin,
            data={"name": "巡检试用机", "host": "93.184.216.34", "auth_method": "password",
                  "password": "sweep-password", "offer_id": offer.id},
        )  # fmt: skip
        trials.update_server(
            session, server_id=server.id, cipher=cipher,
            data={"name": "巡检试用机", "host": "93.184.216.34", "port": 2222, "auth_method": "password",
                  "offer_id": offer.id, "version": server.version},
        )  # fmt: skip
        bench_uploads.upload_output(
            session, offer_id=offer.id, tool="iperf3", path="intranet", user=admin, note="机房内实测",
            output=(DATA / "bench" / "iperf3_single.json").read_text(encoding="utf-8"),
        )  # fmt: skip
        lookups.start_lookup(
            session,
            provider_id=provider.id,
            kind="icp",
            user=admin,
            max_failures=settings.lookup_max_failures,
        )
        page = (DATA / "footers" / "01_utf8_basic.html").read_bytes()
        evidence.record_result(
            session,
            result=FetchResult(
                url="https://example.com/", final_url="https://example.com/", method="GET", status=200,
                headers={}, content_type="text/html; charset=utf-8", body=page, truncated=False,
                sha256="", fetched_at=datetime.now(UTC), elapsed=0.1,
            ),
            purpose="footer", provider_id=provider.id, actor=(admin.id, admin.username),
        )  # fmt: skip
        for quoted in _first_offers(session, 3):  # three providers quote: the comparison's widest table
            quotes.create_quote(
                session, case_id=case.id, values=quote_values(quoted.id), scan=png_bytes(), user=admin
            )
        invitation = invitations.create(
            session, data={"provider_id": provider.id}, actor_id=admin.id, actor_name=admin.username
        )
        return {
            "registry": _registry_texts(session),
            "provider": provider.id,
            "server": server.id,
            # the public disclosure form (no link leads there) and the forms a crawl may not reach
            "extra": [f"/d/{invitation.token}", *_forms(case.id, provider.id, server.id)],
        }


def _forms(case: int, provider: int, server: int) -> list[str]:
    """Pages no crawled link is sure to reach: record forms, questionnaire steps, second-level lists."""
    steps = [f"/cases/{case}/steps/{step}" for step in ("workload", "model", "site", "compliance")]
    return [
        "/cases/new", *steps, f"/cases/{case}/quotes/new", f"/cases/{case}/reports",
        f"/providers/{provider}/edit", f"/providers/{provider}/offers/new",
        f"/providers/{provider}/licences/new", f"/providers/{provider}/credit/manual",
        f"/providers/{provider}/lookups/manual", f"/providers/{provider}/evidence/footer/manual",
        f"/providers/{provider}/trials/new", f"/providers/{provider}/trials/matrix",
        f"/providers/{provider}/delete", f"/trial-servers/{server}/edit",
        f"/trial-servers/{server}/campaigns/new", "/invitations/new", "/bench-runs", "/changes",
        "/expiring", "/lookups", "/reports",
    ]  # fmt: skip


def _first_offers(session: Session, count: int) -> list[Offer]:
    """The first offer of each of the first `count` providers that have one."""
    found = []
    for provider in session.exec(sa.select(Provider).order_by(Provider.id)).scalars():
        offer = (
            session.exec(sa.select(Offer).where(Offer.provider_id == provider.id).order_by(Offer.id))
            .scalars()
            .first()
        )
        if offer is not None:
            found.append(offer)
    assert len(found) >= count
    return found[:count]


def _is_text(column: sa.Column) -> bool:
    kind = column.type
    return isinstance(kind, (sa.String, sa.JSON)) or isinstance(
        getattr(kind, "impl_instance", None), sa.String
    )


def _strings(value: Any) -> Iterator[str]:
    """The strings of a column value, JSON documents included (their leaves)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


# Enumerated values, whatever their script (a licence's status is stored as 正常 or 吊销): a page shows their
# labels, so a stored value never excuses text of the wrong language.
ENUM_VALUES = {value for labels in vocabulary.LABELS.values() for value in labels}


def _is_entered(column: str, value: str) -> bool:
    """Whether a stored value is text someone typed; enumerated values and lowercase tokens (keys) are not."""
    if len(value) < 2 or value in ENUM_VALUES:
        return False
    return column in {"username", "name", "host", "ticked_by", "owner_name"} or not KEY_TOKEN.fullmatch(value)


# Tables and columns that hold what the application wrote (messages, errors, results, snapshots), not what
# anyone entered: their text must be in the reader's language, so it is never taken as data.
WRITTEN_TABLES = {
    "audit_entry", "job", "evidence", "export_record", "stored_finding", "change_event", "account_notice",
    "notify_delivery", "notify_attempt", "invitation_event", "bench_step", "schedule_run", "bench_figure",
}  # fmt: skip
WRITTEN_COLUMNS = {
    "error", "error_kind", "message", "message_zh", "message_en", "how_to_verify_zh", "how_to_verify_en",
    "result", "comparisons", "claims", "outputs", "samples", "snapshot", "details", "payload", "last_error",
    "progress", "fact_errors",
}  # fmt: skip


def _registry_texts(session: Session) -> list[str]:
    """Texts the registry holds as entered (names, addresses, notes...): shown as they are in any language."""
    texts: set[str] = set()
    for table in SQLModel.metadata.sorted_tables:
        if table.name in WRITTEN_TABLES:
            continue
        columns = [
            column for column in table.columns if _is_text(column) and column.name not in WRITTEN_COLUMNS
        ]
        if not columns:
            continue
        for row in session.execute(sa.select(*columns)):
            for column, value in zip(columns, row, strict=True):
                texts.update(
                    text.strip() for text in _strings(value) if _is_entered(column.name, text.strip())
                )
    return sorted(texts, key=len, reverse=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[dict[str, Any]]:
    """The real app with the demo data and one record of each kind, served on a loopback port."""
    from werkzeug.serving import make_server

    folder = tmp_path_factory.mktemp("sweep")
    url = f"sqlite:///{folder / 'sweep.sqlite3'}"
    engine = sa.create_engine(url)
    SQLModel.metadata.create_all(engine)
    engine.dispose()
    flask_app = create_app(Settings(GPUVET_INSTANCE_PATH=folder / "instance", DATABASE_URL=url))
    seeded = _seed(flask_app)
    server = make_server("127.0.0.1", 0, flask_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{server.server_port}", **seeded}
    finally:
        server.shutdown()
        thread.join(timeout=10)
        flask_app.extensions["gpuvet.engine"].dispose()


@pytest.fixture(scope="module")
def browser(site) -> Iterator[Any]:
    """One headless Chromium for the module."""
    _require_chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:  # pragma: no cover - the test requirements install it
        from tests.conftest import missing_tool

        missing_tool(f"playwright is not installed: {exc}")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, timeout=TIMEOUT_MS
        )
        try:
            yield chromium
        finally:
            chromium.close()


def logged_in_page(browser: Any, base_url: str, *, width: int, language: str) -> Any:
    """A new page of its own context, logged in as the admin, in `language`, `width` px wide."""
    context = browser.new_context(base_url=base_url, viewport={"width": width, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.goto("/login")
    page.fill("#username", ADMIN)
    page.fill("#password", PASSWORD)
    page.click("form button[type=submit]")
    page.wait_for_url(re.compile(r"//[^/]+/$"))  # the dashboard
    page.wait_for_load_state("networkidle")
    for _attempt in range(3):  # a request still in flight when switching may write back the old session
        page.goto(f"/lang/{language}")
        page.wait_for_load_state("networkidle")
        if page.get_attribute("html", "lang").startswith(language):
            return page
    raise AssertionError(f"the page did not switch to {language}")


@functools.cache
def _data_pattern(registry: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern for every registry value, longest first; a value beginning or ending with a letter or digit
    matches only as a whole word there (a stored "A256" is no excuse for the "SH" left of it in "SHA256")."""
    parts = []
    for value in sorted(registry, key=len, reverse=True):
        before = r"(?<![A-Za-z0-9])" if value[0].isascii() and value[0].isalnum() else ""
        after = r"(?![A-Za-z0-9])" if value[-1].isascii() and value[-1].isalnum() else ""
        parts.append(before + re.escape(value) + after)
    return re.compile("|".join(parts) or r"(?!)")


def _strip_data(text: str, registry: list[str]) -> str:
    """The text without e-mail addresses, URLs and registry data (shown as entered in any language)."""
    return _data_pattern(tuple(registry)).sub(" ", EMAIL_OR_URL.sub(" ", text))


def _latin_words(text: str) -> list[str]:
    """Latin words of two letters or more that are not allowed acronyms or products (nor model numbers)."""
    return [
        word
        for word in LATIN_WORD.findall(text)
        if len(word) > 1 and word not in ALLOWED_LATIN and not re.search(r"\d", word)
    ]


def _around(text: str, found: str, width: int = 40) -> str:
    """The text near `found` (at most `width` characters either side), marked with … where cut."""
    start = max(text.find(found), 0)
    left, right = max(start - width, 0), min(start + len(found) + width, len(text))
    return ("…" if left else "") + text[left:right] + ("…" if right < len(text) else "")


def page_problems(path: str, language: str, found: dict[str, Any], registry: list[str]) -> list[Problem]:
    """Every broken rule on one extracted page (each rule at most 5 times per page)."""
    problems: list[Problem] = []

    def add(rule: str, text: str, where: str = "") -> None:
        problem = Problem(path, language, rule, f"{text!r}" + (f" in {where}" if where else ""))
        if problem not in problems and sum(1 for known in problems if known.rule == rule) < 5:
            problems.append(problem)

    for text in found["raw"]:
        for escape in UNICODE_ESCAPE.findall(text):
            add("\\u escape", f"{escape} in {_around(text, escape)}")
    for item in found["texts"]:
        own = _strip_data(item["text"], registry)
        if item["code"]:  # commands: only an English page's rule applies (no Chinese placeholders)
            if language == "en" and CJK.search(own):
                add("Chinese in an English page's code", _around(item["text"], CJK.search(own).group()))
            continue
        for key in SNAKE_KEY.findall(own):
            add("raw key", key + f" (in {_around(item['text'], key)!r})", item["where"])
        if language == "zh":
            words = _latin_words(own)
            if words:
                add(
                    "English on a Chinese page",
                    " ".join(words[:6]) + f" (in {_around(item['text'], words[0])!r})",
                    item["where"],
                )
        elif CJK.search(own):
            add("Chinese on an English page", _around(item["text"], CJK.search(own).group()), item["where"])
    return problems


def width_problems(path: str, language: str, found: dict[str, Any]) -> list[Problem]:
    """The page's document is wider than the viewport: it scrolls sideways."""
    if found["scrollWidth"] <= found["width"] + 1:
        return []
    wide = "; ".join(found["wide"])
    return [
        Problem(
            path,
            language,
            f"horizontal overflow at {found['width']} px",
            f"document {found['scrollWidth']} px wide: {wide}",
        )
    ]


def _local_links(page: Any, base_url: str, selector: str) -> list[str]:
    hrefs = page.eval_on_selector_all(selector, "links => links.map(link => link.href)")
    paths = []
    for href in hrefs:
        parts = urlsplit(href)
        if href.startswith(base_url) and parts.path not in paths and not parts.path.startswith("/lang/"):
            paths.append(parts.path)
    return paths


def sweep(
    page: Any, base_url: str, language: str, registry: list[str], deadline: float, extra: list[str]
) -> tuple[list, list]:
    """Visit the navigation's pages, the first record of each list and `extra`; returns (visited, problems).

    Each page is checked at the desktop width and again, on the same load, at the phone's."""
    page.goto("/providers")
    queue = _local_links(page, base_url, "nav a.nav-link[href^='/'], nav a.dropdown-item[href^='/']")
    queue += extra
    seen_patterns: set[str] = set()
    visited: list[str] = []
    problems: list[Problem] = []
    while queue and len(visited) < MAX_PAGES and time.monotonic() < deadline:
        path = queue.pop(0)
        if path in visited:
            continue
        response = page.goto(path)
        visited.append(path)
        if response is None or response.status >= 400:
            problems.append(
                Problem(path, language, "HTTP status", str(response.status if response else None))
            )
            continue
        problems += page_problems(path, language, page.evaluate(EXTRACT_JS, language), registry)
        problems += width_problems(path, language, page.evaluate(WIDTH_JS))
        page.set_viewport_size({"width": PHONE, "height": 900})  # the same load, on a phone
        problems += width_problems(path, language, page.evaluate(WIDTH_JS))
        if SHOTS:  # to look at the phone layout: GPUVET_SWEEP_SHOTS=/tmp/shots
            name = re.sub(r"[^\w-]+", "_", path.strip("/")) or "home"
            page.screenshot(path=str(Path(SHOTS) / f"{name}-{language}.png"), full_page=True)
        page.set_viewport_size({"width": DESKTOP, "height": 900})
        if RECORD_LINKS[0].match(path):  # the first provider (no other is followed): each of its tabs
            queue += _local_links(page, base_url, "#provider-tabs a[href]")
        for link in _local_links(page, base_url, "main a[href]"):
            for pattern in RECORD_LINKS:
                if pattern.match(link) and pattern.pattern not in seen_patterns and link not in visited:
                    seen_patterns.add(pattern.pattern)
                    queue.append(link)
    return visited, problems


def test_every_page_speaks_one_language_without_keys_or_overflow(site, browser):
    """The sweep, zh then en; all problems of both languages are listed in one failure."""
    deadline = time.monotonic() + MAX_SECONDS
    problems: list[Problem] = []
    for language in ("zh", "en"):
        page = logged_in_page(browser, site["url"], width=DESKTOP, language=language)
        visited, found = sweep(page, site["url"], language, site["registry"], deadline, site["extra"])
        page.context.close()
        unreached = [
            pattern for pattern in MUST_REACH if not any(re.match(pattern, path) for path in visited)
        ]
        assert not unreached, (
            f"[{language}] the sweep reached no page matching {unreached}; visited {visited}"
        )
        assert {"/providers", "/cases", "/findings", "/jobs", "/transfer", "/admin/users", "/account"} <= set(
            visited
        ), visited
        assert set(site["extra"]) <= set(visited), (
            f"[{language}] left out: {set(site['extra']) - set(visited)}"
        )
        problems += found
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(map(str, problems))


def test_the_rules_catch_what_they_are_meant_to():
    """The checks themselves: each rule fires on its example and not on allowed text."""
    found = {
        "raw": ['{"name": "\\u5b98\\u7f51"}', "正常"],
        "texts": [
            {"text": "存储类型: storage_type", "code": False, "where": "td"},
            {"text": "带宽 bandwidth iperf3 实测 21.5 Gbit/s", "code": False, "where": "td"},
            {
                "text": "GPU 8 卡 NVMe 3.2 TB, RDMA 400 Gbps, 示例公司 Example Ltd",
                "code": False,
                "where": "td",
            },
            {"text": "每节点 4 GPUs，内网/intranet", "code": False, "where": "li"},
            {"text": "iperf3 -c <节点A内网IP> -P 8", "code": True, "where": "code"},
        ],
    }
    problems = page_problems("/x", "zh", found, registry=["示例公司 Example Ltd"])
    rules = [problem.rule for problem in problems]
    assert rules.count("\\u escape") == 2
    assert [p.text for p in problems if p.rule == "raw key"] == [
        "\"storage_type (in '存储类型: storage_type')\" in td"
    ]
    english = [p.text for p in problems if p.rule == "English on a Chinese page"]
    assert len(english) == 3 and "bandwidth" in english[1] and "Example" not in " ".join(english)
    assert english[2].startswith('"GPUs intranet (in ')  # a plural and a translation left beside the Chinese
    assert "Chinese in an English page's code" not in rules  # a Chinese page may show commands
    assert str(problems[0]).startswith("/x [zh] \\u escape: ")
    english_page = page_problems("/x", "en", found, registry=["示例公司 Example Ltd"])
    assert [p.rule for p in english_page].count("Chinese on an English page") == 4  # 卡 is not a unit
    assert [p.text for p in english_page if p.rule == "Chinese in an English page's code"] == [
        "'iperf3 -c <节点A内网IP> -P 8'"
    ]
    inside = {"raw": [], "texts": [{"text": "的 SHA256 指纹 Examples", "code": False, "where": "p"}]}
    # registry data counts only as whole words: "A256" and "Example" excuse nothing here
    assert [p.text for p in page_problems("/x", "zh", inside, registry=["A256", "Example"])] == [
        "\"Examples (in '的 SHA256 指纹 Examples')\" in p"
    ]
    assert width_problems("/x", "en", {"scrollWidth": 390, "width": 390, "wide": []}) == []
    wide = width_problems("/x", "en", {"scrollWidth": 512, "width": 390, "wide": ["table#q ends at 512 px"]})
    assert [str(problem) for problem in wide] == [
        "/x [en] horizontal overflow at 390 px: document 512 px wide: table#q ends at 512 px"
    ]
