"""Fixtures of the benchmark-figure tests, which reach no trial server."""

import pytest


@pytest.fixture
def allow_loopback_trials():
    """No loopback admission (overrides the autouse one of tests/trials/conftest.py): no server is reached."""
