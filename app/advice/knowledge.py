"""Data files of the advice knowledge base (app/knowledge/advice/*.yaml), read once and cached."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

KNOWLEDGE_DIR = Path(__file__).resolve().parent.parent / "knowledge" / "advice"


@functools.cache
def load(name: str) -> dict[str, Any]:
    """The parsed YAML document app/knowledge/advice/<name>.yaml (cached; treat it as read-only)."""
    path = KNOWLEDGE_DIR / f"{name}.yaml"
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(document, dict):
        raise ValueError(f"{path} must hold a mapping at the top level")
    return document


def assumptions() -> dict[str, Any]:
    """Constants of the sizing arithmetic (efficiencies, fibre speed, typical storage figures)."""
    return load("assumptions")
