"""Background job pages: a job's live state (polled by static/jobs.js), its JSON, cancel, recent jobs."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import flash, jsonify, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import role_required
from app.core import clock as localtime
from app.core import jobs
from app.core.db import get_session
from app.core.errors import Conflict
from app.core.i18n import current_language
from app.core.limits import parse_id
from app.models.enums import Role
from app.models.jobs import Job, JobState
from app.web import bp, job_fields, labels
from app.web.list_filters import errors_by_field
from app.web.missing import or_404
from app.web.nav import nav_item

STATE_LABELS = labels.JOB_STATE
STATE_COLOURS = {
    JobState.queued: "secondary",
    JobState.running: "primary",
    JobState.succeeded: "success",
    JobState.failed: "danger",
    JobState.cancelled: "dark",
    JobState.interrupted: "warning",
}
# a succeeded job whose result says the work did not succeed (see app.core.jobs: result["outcome"])
OUTCOME_LABELS = {"failed": _l("已完成：未成功"), "problems": _l("完成，发现问题")}
OUTCOME_COLOURS = {"failed": "danger", "problems": "warning"}
# a job still queued after this long: probably no worker is running
STALLED_AFTER = timedelta(seconds=60)
PER_PAGE = 30

# kind -> function(job) giving the page that shows the job's outcome (registered by the pages of a kind)
JOB_LINKS: dict[str, Callable[[Job], str | None]] = {}


def job_link(kind: str, link: Callable[[Job], str | None]) -> None:
    """Register where a finished job of `kind` points to (e.g. the provider's credentials tab)."""
    if kind in JOB_LINKS:
        raise ValueError(f"job link for {kind!r} is registered twice")
    JOB_LINKS[kind] = link


def job_outcome(job: Job, locale: str) -> tuple[str, str]:
    """("failed" | "problems" | "ok", reason) of a succeeded job, from its result's outcome fields."""
    result = job.result if isinstance(job.result, dict) else {}
    outcome = result.get("outcome")
    if job.state != JobState.succeeded or outcome not in OUTCOME_LABELS:
        return "ok", ""
    first, second = ("outcome_message_en", "outcome_message_zh")
    if locale != "en":
        first, second = second, first
    return str(outcome), str(result.get(first) or result.get(second) or "")


def _stalled_minutes(job: Job) -> int | None:
    """Whole minutes (at least 1) a job has waited unclaimed past STALLED_AFTER, else None."""
    created = localtime.aware(job.created_at)
    if job.state != JobState.queued or created is None:
        return None
    waited = localtime.now() - created
    if waited < STALLED_AFTER:
        return None
    return max(1, int(waited.total_seconds() // 60))


def _iso(value: datetime | None) -> str | None:
    """A moment as ISO 8601 to the second, in UTC (for the JSON poll)."""
    aware = localtime.aware(value)
    return aware.astimezone(UTC).isoformat(timespec="seconds") if aware else None


def job_view(job: Job) -> dict[str, Any]:
    """Everything a page or the poller shows about a job."""
    state = JobState(job.state)
    progress = job.progress or {}
    total = progress.get("total") or 0
    link = JOB_LINKS.get(job.kind)
    locale = current_language()
    outcome, outcome_message = job_outcome(job, locale)
    stalled = _stalled_minutes(job)
    return {
        "id": job.id,
        "kind": job.kind,
        "title": jobs.kind_title(job.kind, locale),
        "state": state.value,
        "state_label": str(OUTCOME_LABELS.get(outcome, STATE_LABELS[state])),
        "colour": OUTCOME_COLOURS.get(outcome, STATE_COLOURS[state]),
        "outcome": outcome,
        "outcome_message": outcome_message,
        "stalled": stalled is not None,
        "stalled_message": _(
            "后台任务程序似乎没有运行：任务已排队 %(n)s 分钟仍未开始。"
            "请启动 flask --app wsgi worker（scripts/run.sh 会启动它）",
            n=stalled,
        )
        if stalled is not None
        else "",
        "final": job.finished,
        # a finished job's last progress note ("stored", "provider 12") says nothing more than its state
        "progress": ({**progress, "current": ""} if job.finished and progress else progress) or None,
        "percent": int(100 * progress.get("done", 0) / total) if total else (100 if job.finished else 0),
        "error": jobs.error_text(job),  # in the reader's language (app.core.job_errors)
        "result": job.result,
        "provider_id": job.provider_id,
        "created_by": job.created_by_name,
        "created_at": _iso(job.created_at),
        "started_at": _iso(job.started_at),
        "finished_at": _iso(job.finished_at),
        "created_text": localtime.when(job.created_at, seconds=True),
        "started_text": localtime.when(job.started_at, seconds=True),
        "finished_text": localtime.when(job.finished_at, seconds=True),
        "duration_text": job_fields.duration(job.started_at, job.finished_at),
        "link": link(job) if link and state == JobState.succeeded else None,
        "url": url_for("web.job_detail", job_id=job.id),
        "json_url": url_for("web.job_json", job_id=job.id),
        "can_cancel": state in (JobState.queued, JobState.running) and not job.cancel_requested,
    }


nav_item("web.job_list", _l("后台任务"), order=80, active=("web.job_detail",))


@bp.get("/jobs")
@role_required(Role.viewer)
def job_list() -> Any:
    """Recent background jobs, newest first."""
    page = request.args.get("page", "1")
    page_number = parse_id(page, 100_000) or 1
    session = get_session()
    filters, errors, kept = job_filters(request.args)
    rows = jobs.recent_jobs(
        session,
        states=LIST_STATES.get(filters["state"] or "", ()),
        since=localtime.now() - timedelta(days=filters["days"]) if filters["days"] else None,
        limit=PER_PAGE + 1,
        offset=(page_number - 1) * PER_PAGE,
    )
    html = render_template(
        "jobs/list.html",
        schedules=schedule_rows(session),
        jobs=[{**job_view(job), "subjects": job_fields.subjects(session, job)} for job in rows[:PER_PAGE]],
        page=page_number,
        has_next=len(rows) > PER_PAGE,
        filters=filters,
        errors=errors,
        kept=kept,
        state_filters=STATE_FILTERS,
    )
    return html, (422 if errors else 200)


WEEKDAYS = (_l("周一"), _l("周二"), _l("周三"), _l("周四"), _l("周五"), _l("周六"), _l("周日"))


def schedule_rows(session: Any) -> list[dict[str, Any]]:
    """Each schedule with when it runs, its next run and its latest run (with that run's job)."""
    from app.core import runtime_settings
    from app.notify import schedules

    local_now = localtime.to_local(localtime.now())
    last = schedules.last_runs(session)
    enabled = runtime_settings.effective().schedules_enabled
    rows = []
    for schedule in schedules.schedules():
        at = schedule.at.strftime("%H:%M")
        if schedule.weekday is None:
            every = _("每天 %(at)s", at=at)
        else:
            every = _("每周 %(day)s %(at)s", day=WEEKDAYS[schedule.weekday], at=at)
        run, job = last.get(schedule.name, (None, None))
        rows.append(
            {
                "name": schedule.name,
                "title": jobs.kind_title(schedule.kind, current_language()),
                "every": every,
                "next": localtime.when(schedules.next_due(schedule, local_now)) if enabled else "",
                "last": localtime.when(run.created_at) if run else "",
                "job": job_view(job) if job else None,
            }
        )
    return rows


# The list's state filter: one state, or "active" (queued or running).
STATE_FILTERS = {"active": _l("排队或运行中"), **STATE_LABELS}
LIST_STATES = {"active": (JobState.queued.value, JobState.running.value)} | {
    state.value: (state.value,) for state in JobState
}


def job_filters(args: Any) -> tuple[dict[str, Any], dict[str, list[str]], dict[str, str]]:
    """The job list's filters (state, days), errors by parameter, and the valid ones to keep in links."""
    from app.registry.dashboard_lists import choice, parse_filters, whole_number

    values, problems = parse_filters(
        args,
        {
            "state": lambda params, name: choice(params, name, tuple(LIST_STATES)),
            "days": lambda params, name: whole_number(params, name, high=3650),
        },
    )
    kept = {key: str(value) for key, value in values.items() if value}
    return values, errors_by_field(problems), kept


@bp.get("/jobs/<int:job_id>")
@role_required(Role.viewer)
def job_detail(job_id: int) -> Any:
    """One job: state, progress, error or result; updates itself while it runs."""
    job = or_404(jobs.get_job, job_id=job_id)
    return render_template(
        "jobs/detail.html",
        job=job_view(job),
        subjects=job_fields.subjects(get_session(), job),
        params=job_fields.fields(job.params),
        result=job_fields.fields(job.result),
        raw_params=job_fields.raw_json(job.params),
        raw_result=job_fields.raw_json(job.result) if job.result is not None else None,
    )


@bp.get("/jobs/<int:job_id>.json")
@role_required(Role.viewer)
def job_json(job_id: int) -> Any:
    """The job's state as JSON, for polling."""
    response = jsonify(job_view(or_404(jobs.get_job, job_id=job_id)))
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.post("/jobs/<int:job_id>/cancel")
@role_required(Role.analyst)
def job_cancel(job_id: int) -> Any:
    """Cancel a queued job, or ask a running one to stop."""
    or_404(jobs.get_job, job_id=job_id)
    try:
        job = jobs.cancel(get_session(), job_id)
    except Conflict as exc:
        flash(exc.errors[0].message, "warning")
    else:
        message = _("已取消任务") if job.state == JobState.cancelled else _("已请求停止任务，正在等待其结束")
        flash(message, "info")
    target = request.form.get("next", "")
    if not target.startswith("/") or target.startswith("//"):
        target = url_for("web.job_detail", job_id=job_id)
    return redirect(target)


def can_run_jobs() -> bool:
    """Whether the current user may start jobs (analysts and admins)."""
    from app.accounts.auth import has_role

    return has_role(current_user, Role.analyst)
