"""The structure issue 25 reached stays reached: layers, circles, module sizes, events, pure packages.

scripts/architecture.py measures; these tests hold the landed tree to the targets it prints.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from app.core import events

ROOT = Path(__file__).resolve().parent.parent
# Modules that produce evidence: they publish EvidenceChanged and never call the re-check themselves.
PRODUCERS = (
    "app.credentials.evidence",
    "app.credentials.lookups",
    "app.credentials.manual_lookups",
    "app.credentials.footer_manual",
    "app.credentials.credit",
    "app.trials.bench_runs",
    "app.trials.bench_uploads",
    "app.trials.campaigns",
    "app.trials.matrix_runs",
    "app.disclosure.review",
    "app.disclosure.merge",
    "app.registry.providers",
)
DOMAINS = ("app.registry", "app.credentials", "app.trials", "app.cases", "app.disclosure", "app.notify")


def _architecture() -> ModuleType:
    spec = importlib.util.spec_from_file_location("architecture", ROOT / "scripts" / "architecture.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def architecture() -> ModuleType:
    return _architecture()


@pytest.fixture(scope="module")
def figures(architecture: ModuleType) -> dict:
    return architecture.measure()


@pytest.fixture(scope="module")
def graph(architecture: ModuleType) -> dict[str, set[str]]:
    files = architecture.product_files()
    modules = {architecture.module_name(path) for path in files}
    return {architecture.module_name(p): architecture.imported_modules(p, modules) for p in files}


def test_no_import_runs_up_the_layers(figures, architecture):
    assert len(figures["upward"]) <= architecture.TARGETS["upward"], figures["upward"]


def test_no_import_circle_holds_more_than_two_files(figures, architecture):
    assert [c for c in figures["circles"] if len(c) > architecture.TARGETS["circle"]] == []


def test_no_module_under_app_is_over_600_lines(figures):
    assert figures["big"] == []


def test_no_folder_holds_more_than_its_share_of_the_product(figures, architecture):
    shares = {folder: count / figures["total"] for folder, count in figures["folders"].items()}
    assert {f: s for f, s in shares.items() if s > architecture.TARGETS["folder_share"]} == {}


def test_benchmarks_and_scrapers_import_no_flask(figures):
    assert figures["flask_pure"] == []


def test_evidence_producers_publish_instead_of_calling_the_recheck(graph):
    assert {name for name in PRODUCERS if "app.credentials.rechecks" in graph[name]} == set()
    importers = {name for name, targets in graph.items() if "app.credentials.rechecks" in targets}
    assert importers <= {"app.credentials", "app.credentials.checks", "app.cli.checks"}, importers


def test_the_job_queue_imports_no_domain(graph):
    assert {t for t in graph["app.core.jobs"] if t.startswith(DOMAINS)} == set()


def test_the_recheck_and_the_notifications_subscribe_to_their_events():
    names = {f"{h.__module__}.{h.__qualname__}" for h in events.handlers_of(events.EvidenceChanged)}
    assert "app.credentials.rechecks.recheck_on_evidence" in names
    names = {f"{h.__module__}.{h.__qualname__}" for h in events.handlers_of(events.ChangesRecorded)}
    assert "app.notify.dispatch.notify_recorded_changes" in names


def test_publish_runs_every_handler_in_order_with_the_publishers_session():
    seen: list[tuple[object, str]] = []

    def first(session, event):
        seen.append((session, "first"))
        return 1

    def second(session, event):
        seen.append((session, "second"))
        return 2

    class Probe:
        """An event type only this test publishes."""

    session = object()
    events.subscribe(Probe, first)
    events.subscribe(Probe, second)
    try:
        assert events.publish(session, Probe()) == [1, 2]  # type: ignore[arg-type]
        events.subscribe(Probe, first)  # subscribing again replaces, in its place
        assert events.publish(session, Probe()) == [1, 2]  # type: ignore[arg-type]
    finally:
        events.unsubscribe(Probe, first)
        events.unsubscribe(Probe, second)
    assert seen == [(session, "first"), (session, "second")] * 2
    assert events.publish(session, Probe()) == []  # type: ignore[arg-type]
