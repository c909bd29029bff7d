"""Findings overview across providers: latest verdicts or their findings, filtered and paged."""

from __future__ import annotations

from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import role_required
from app.core import jobs
from app.core.db import get_session
from app.core.errors import ServiceError
from app.core.i18n import current_language
from app.core.provinces import PROVINCES
from app.credentials import checks
from app.credentials.verdicts import verdicts_of
from app.models.enums import Role
from app.models.jobs import JobState
from app.web import bp
from app.web.credentials import CHECK_LABELS, rule_title
from app.web.jobs import job_view
from app.web.list_filters import errors_by_field, kept_filters, parse_leniently
from app.web.nav import nav_item

KEYS = ("view", "rule", "severity", "verdict", "province", "q", "per_page")
CHECK_ALL_KIND = "vetting.check_all"
# Ready-made filters (the threshold of licence.expiring lives in app/knowledge/vetting.yaml).
PRESETS = (
    (_l("即将到期的许可证"), {"view": "findings", "rule": "licence.expiring"}),
    (_l("已过期的许可证"), {"view": "findings", "rule": "licence.expired"}),
    (_l("结论为不通过"), {"verdict": "fail"}),
    (_l("需复核"), {"verdict": "needs_review"}),
    (_l("全部阻断项"), {"view": "findings", "severity": "blocker"}),
)

nav_item("web.findings", _l("核查总览"), order=30)


def _query() -> tuple[checks.OverviewQuery, dict[str, list[str]]]:
    """The overview query from the URL; invalid parameters are dropped and reported under their field."""
    params = {key: value for key, value in request.args.items() if key in (*KEYS, "page")}
    params.setdefault("per_page", current_app.config.get("PAGE_SIZE", 20))
    query, errors = parse_leniently(checks.parse_overview_query, params)
    return query, errors_by_field(errors)


@bp.get("/findings")
@role_required(Role.viewer)
def findings() -> Any:
    """Latest verdict per provider (or every finding of those runs) with filters and pagination."""
    query, errors = _query()
    session = get_session()
    page = checks.findings_overview(session, query=query)
    by_provider = query.view != "findings"  # one row per provider: the worded provider verdict (issue 10)
    kept = kept_filters(request.args, KEYS, errors)
    running = jobs.recent_jobs(
        session, kind=CHECK_ALL_KIND, states=(JobState.queued, JobState.running), limit=3
    )
    html = render_template(
        "findings/overview.html",
        query=query,
        page=page,
        kept=kept,
        errors=errors,
        filters={key: request.args.get(key, "") for key in KEYS},
        rules=[(rule_id, rule_title(rule_id, current_language())) for rule_id in checks.rule_choices()],
        provinces=PROVINCES,
        presets=PRESETS,
        running=[job_view(job) for job in running],
        rule_title=rule_title,
        **CHECK_LABELS,
        verdicts=verdicts_of(session, [provider.id for _run, provider in page.rows]) if by_provider else {},
    )
    return html, (422 if errors else 200)


@bp.post("/findings/check-all")
@role_required(Role.analyst)
def findings_check_all() -> Any:
    """Queue one job that checks every provider (or only those never checked)."""
    only_unchecked = request.form.get("only_unchecked") == "y"
    try:
        job = jobs.enqueue(
            get_session(),
            kind=CHECK_ALL_KIND,
            params={"only_unchecked": only_unchecked},
            user=current_user._get_current_object(),  # type: ignore[attr-defined]
        )
    except ServiceError as exc:
        flash(exc.errors[0].message, "danger")
        return redirect(url_for("web.findings"))
    flash(_("已提交批量核查任务 #%(id)d", id=job.id), "info")
    return redirect(url_for("web.job_detail", job_id=job.id))
