"""Job kinds used only by the tests (imported by the tests and by tests/core/jobs/worker_main.py)."""

from __future__ import annotations

import time

from app.core.jobs import (
    KINDS,
    JobCancelled,
    background,
    job_cancelled,
    job_result_outcome,
    report_progress,
)


def _register() -> None:
    if "test.sleep" in KINDS:
        return

    @background("test.sleep", title_zh="测试：等待", title_en="Test: sleep")
    def sleep(session, job, *, seconds: float, step: float = 0.1) -> dict:
        """Sleep in small steps, reporting progress and honouring cancel requests."""
        steps = max(1, int(seconds / step))
        for index in range(steps):
            if job_cancelled(session, job):
                raise JobCancelled(f"stopped at step {index}")
            report_progress(session, job, done=index, total=steps, current=f"step {index}")
            time.sleep(step)
        return {"slept": seconds}

    @background(
        "test.sleep_idempotent",
        title_zh="测试：可重跑的等待",
        title_en="Test: idempotent sleep",
        idempotent=True,
    )
    def sleep_idempotent(session, job, *, seconds: float) -> dict:
        """Like test.sleep, but queued again when its worker dies."""
        time.sleep(seconds)
        return {"slept": seconds, "attempt": job.attempts}

    @background("test.fail", title_zh="测试：失败", title_en="Test: fail")
    def fail(session, job, *, code: int) -> None:
        """Always fails with a message naming `code`."""
        raise ValueError(f"boom {code}")

    @background("test.echo", title_zh="测试：回显", title_en="Test: echo")
    def echo(session, job, **params) -> dict:
        """Returns its parameters and who queued it."""
        return {"params": params, "actor": list(session.info["actor"])}

    @background("test.did_not_succeed", title_zh="测试：未成功", title_en="Test: did not succeed")
    def did_not_succeed(session, job, *, reason: str) -> dict:
        """Returns normally with a result saying the work failed."""
        return {"reason": reason, **job_result_outcome("failed", f"原因：{reason}", f"reason: {reason}")}


_register()
