"""Fixtures for the scraper tests: saved pages on a loopback HTTP server and a client allowed to reach it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from scrapers.http import HostRateLimiter, HttpClient, HttpPolicy
from tests.fakes.web import SiteServer

FOOTERS = Path(__file__).resolve().parent.parent / "data" / "footers"
LOOPBACK = ("127.0.0.0/8",)


def loopback_policy(**overrides) -> HttpPolicy:
    """Fast limits for tests, with loopback allow-listed."""
    values = {
        "allow_cidrs": LOOPBACK,
        "min_interval": 0.0,
        "retries": 2,
        "backoff_factor": 0.01,
        "backoff_max": 0.5,
        "connect_timeout": 2.0,
        "read_timeout": 3.0,
        "total_timeout": 5.0,
    }
    values.update(overrides)
    return HttpPolicy(**values)


@pytest.fixture(scope="module")
def footer_server() -> Iterator[SiteServer]:
    """The saved footer pages served over real HTTP on 127.0.0.1."""
    content_types = json.loads((FOOTERS / "_headers.json").read_text(encoding="utf-8"))
    with SiteServer(FOOTERS, content_types=content_types) as server:
        yield server


@pytest.fixture
def client() -> Iterator[HttpClient]:
    """The real HTTP client, loopback allowed, its own rate limiter."""
    with HttpClient(loopback_policy(), rate_limiter=HostRateLimiter()) as http:
        yield http
