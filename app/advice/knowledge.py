"""Data files of the advice knowledge base (app/knowledge/advice/*.yaml), checked and cached."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from app.advice.knowledge_schema import KNOWLEDGE_ROOT, load_checked
from benchmarks.compare import Thresholds, thresholds_from

KNOWLEDGE_DIR = KNOWLEDGE_ROOT / "advice"


@functools.cache
def load(name: str) -> dict[str, Any]:
    """The YAML document app/knowledge/advice/<name>.yaml, checked against its schema (cached; read-only)."""
    path = KNOWLEDGE_DIR / f"{name}.yaml"
    document = load_checked(path, f"advice/{name}.yaml")
    if not isinstance(document, dict):
        raise ValueError(f"{path} must hold a mapping at the top level")
    return document


def assumptions() -> dict[str, Any]:
    """Constants of the sizing arithmetic (efficiencies, fibre speed, typical storage figures)."""
    return load("assumptions")


BENCHMARKS_FILE = KNOWLEDGE_ROOT / "benchmarks.yaml"


def benchmark_thresholds(path: Path | None = None) -> Thresholds:
    """Verdict thresholds of runs and ranking alike (app/knowledge/benchmarks.yaml, re-read on change)."""
    path = path or BENCHMARKS_FILE
    return _thresholds(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _thresholds(path: str, mtime_ns: int) -> Thresholds:
    document = load_checked(Path(path), "benchmarks.yaml") or {}
    try:
        return thresholds_from(document)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from error
