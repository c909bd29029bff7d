"""The job worker: recover jobs left by a stopped worker, then run the Huey consumer.

`flask --app wsgi worker` or `python -m app.worker`; both build the app from the environment.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any

from app.core.db import get_engine
from app.core.jobs import get_huey, load_kinds, recover_jobs

logger = logging.getLogger(__name__)


class _Sweeper(threading.Thread):
    """Every few heartbeats, look for jobs whose worker died (on any machine) and recover them."""

    def __init__(self, app: Any, interval: float, stale_after: timedelta) -> None:
        super().__init__(name="gpuvet-job-sweeper", daemon=True)
        self.app, self.interval, self.stale_after = app, interval, stale_after
        self.stopped = threading.Event()

    def run(self) -> None:
        engine = get_engine(self.app)
        while not self.stopped.wait(self.interval):
            try:
                with self.app.app_context():
                    recover_jobs(engine, app=self.app, stale_after=self.stale_after)
            except Exception:  # keep sweeping; the database may be back next time
                logger.warning("job recovery sweep failed", exc_info=True)


def run_worker(app: Any, *, workers: int | None = None) -> None:
    """Recover interrupted jobs, then consume the queue until stopped (SIGINT waits for running jobs)."""
    if hasattr(app, "finish_setup"):  # jobs may build URLs or render pages like a request would
        app.finish_setup()
    settings = app.config["GPUVET_SETTINGS"]
    heartbeat = settings.jobs_heartbeat_s
    stale_after = timedelta(seconds=heartbeat * 4)
    load_kinds()
    huey = get_huey(app)
    if huey.immediate:
        raise RuntimeError("jobs run inline (GPUVET_JOBS_IMMEDIATE); no worker is needed")
    with app.app_context():
        recover_jobs(get_engine(app), app=app, stale_after=stale_after)
    sweeper = _Sweeper(app, heartbeat * 2, stale_after)
    sweeper.start()
    consumer = huey.create_consumer(workers=workers or settings.jobs_workers, worker_type="thread")
    logger.info("gpuvet worker: %s, %d threads", type(huey).__name__, consumer.workers)
    try:
        consumer.run()
    finally:
        sweeper.stopped.set()


def configure_logging() -> None:
    """Log INFO and above to stderr with timestamps, unless logging is already set up."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def main() -> None:
    """Entry point of `python -m app.worker`."""
    from app.factory import create_app

    configure_logging()
    run_worker(create_app())


if __name__ == "__main__":
    main()
