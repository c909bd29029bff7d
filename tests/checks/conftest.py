"""Fixtures of the checks tests."""

from tests.jobs.fixtures import immediate_jobs  # noqa: F401 - re-exported fixture
