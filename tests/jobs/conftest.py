"""Fixtures of the jobs tests."""

from tests.jobs.fixtures import immediate_jobs  # noqa: F401 - re-exported fixture
