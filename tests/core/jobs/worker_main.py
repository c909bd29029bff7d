"""A real worker process for the tests: the app's worker plus the test job kinds."""

from __future__ import annotations

import functools
import logging
import os
import sys
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import tests.core.jobs.kinds  # noqa: F401 - registers the test job kinds
from app import create_app
from app.worker import run_worker

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if os.environ.get("GPUVET_TEST_NOW"):  # the injected clock of the schedule tests
        from app.notify import schedules

        fixed = datetime.fromisoformat(os.environ["GPUVET_TEST_NOW"])
        schedules.tick = functools.partial(schedules.tick, now=fixed)  # the periodic tick, at that moment
    run_worker(create_app(), workers=int(sys.argv[1]) if len(sys.argv) > 1 else 1)
