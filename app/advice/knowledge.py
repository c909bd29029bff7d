"""Data files of the advice knowledge base (app/knowledge/advice/*.yaml), checked and cached."""

from __future__ import annotations

import functools
from typing import Any

from app.advice.knowledge_schema import KNOWLEDGE_ROOT, load_checked

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


@functools.cache
def benchmark_ratios() -> dict[str, tuple[float, float]]:
    """(pass, warn) ratios of measured / claimed for bandwidth and IOPS (app/knowledge/benchmarks.yaml)."""
    data = load_checked(KNOWLEDGE_ROOT / "benchmarks.yaml", "benchmarks.yaml") or {}
    return {
        "bandwidth": (float(data.get("bandwidth_pass", 0.8)), float(data.get("bandwidth_warn", 0.5))),
        "iops": (float(data.get("iops_pass", 0.8)), float(data.get("iops_warn", 0.5))),
    }
