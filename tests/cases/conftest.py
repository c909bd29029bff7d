"""Helpers for the case tests: demo data, example answers, offers by provider name."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session

from app.registry import demo
from tests.benchmarks.conftest import shaped_link, shaped_server  # noqa: F401 - re-exported fixtures

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "answers"
KINDS = ("distributed_training", "single_node_training", "interactive_inference", "offline_batch")


def example(kind: str) -> dict[str, Any]:
    """One shipped example answers document."""
    return json.loads((EXAMPLES / f"{kind}.json").read_text(encoding="utf-8"))


def offers_named(offers: list[dict[str, Any]], provider_name: str) -> list[dict[str, Any]]:
    """The advice's offers of one provider (by legal name)."""
    found = [offer for offer in offers if offer["provider_name"] == provider_name]
    assert found, f"no offers of {provider_name}"
    return found


def codes(offer: dict[str, Any]) -> list[str]:
    """Codes of the reasons an offer was excluded."""
    return [reason["code"] for reason in offer["excluded_because"]]


@pytest.fixture
def demo_loaded(session: Session) -> Session:
    """The session with the fictional demo providers loaded (dates relative to today)."""
    demo.load_demo(session, today=date.today())
    return session
