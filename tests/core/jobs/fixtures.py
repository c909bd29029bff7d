"""Job-queue fixtures other test packages import: `from tests.core.jobs.fixtures import immediate_jobs`."""

from __future__ import annotations

import pytest


@pytest.fixture
def immediate_jobs(app):
    """Run background jobs inline (Huey immediate mode) inside enqueue, for tests of pages and services."""
    app.config["JOBS_IMMEDIATE"] = True
    app.extensions.pop("gpuvet.huey", None)
    app.extensions.pop("gpuvet.huey_task", None)
    yield app
    app.extensions.pop("gpuvet.huey", None)
    app.extensions.pop("gpuvet.huey_task", None)
