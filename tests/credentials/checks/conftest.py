"""Fixtures of the checks tests."""

from tests.core.jobs.fixtures import immediate_jobs  # noqa: F401 - re-exported fixture
