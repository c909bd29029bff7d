"""The provider page's "资质核查" tab: latest verdict with reasons, findings, history, run button."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user
from sqlmodel import Session

from app.accounts.auth import role_required
from app.core import jobs
from app.core.db import get_session
from app.core.errors import ServiceError
from app.core.limits import parse_id
from app.credentials import checks
from app.credentials.verdicts import verdict_of
from app.credentials.verification import max_age_days
from app.models import Provider
from app.models.enums import Role
from app.models.jobs import Job, JobState
from app.registry import providers as provider_service
from app.vetting.findings import load_rules
from app.web import bp, labels
from app.web.jobs import job_link, job_view
from app.web.nav import provider_tab

CHECK_KIND = "vetting.check"
SEVERITY_LABELS = {"blocker": _l("阻断"), "warning": _l("警告"), "info": _l("提示")}
SEVERITY_COLOURS = {"blocker": "danger", "warning": "warning", "info": "info"}
VERDICT_LABELS = labels.CHECK_VERDICT
VERDICT_COLOURS = {"pass": "success", "needs_review": "warning", "fail": "danger"}
# What a template that shows check findings and verdicts is given to word and colour them.
CHECK_LABELS = {
    "severity_labels": SEVERITY_LABELS,
    "severity_colours": SEVERITY_COLOURS,
    "verdict_labels": VERDICT_LABELS,
    "verdict_colours": VERDICT_COLOURS,
}


@dataclass(frozen=True)
class CredentialsPanel:
    """An extra section of the tab (e.g. official lookups, footer scrapes) rendered from `template`."""

    name: str
    template: str
    context: Callable[[Session, Provider], dict[str, Any]] = field(default=lambda _s, _p: {})
    order: int = 50


PANELS: list[CredentialsPanel] = []


def credentials_panel(
    name: str,
    template: str,
    *,
    context: Callable[[Session, Provider], dict[str, Any]] | None = None,
    order: int = 50,
) -> None:
    """Add a section to the credentials tab; its template sees `provider` and what `context` returns."""
    if any(panel.name == name for panel in PANELS):
        raise ValueError(f"credentials panel {name!r} is registered twice")
    PANELS.append(CredentialsPanel(name, template, context or (lambda _s, _p: {}), order))
    PANELS.sort(key=lambda panel: (panel.order, panel.name))


# Findings that no registered rule raises (run_check adds them itself).
EXTRA_TITLES = {checks.FACT_ERROR_RULE: ("核查依据未能取得", "Facts could not be gathered")}


def rule_title(rule_id: str, locale: str) -> str:
    """A rule's title in the UI language (the id when unknown)."""
    entry = load_rules().get(rule_id)
    zh, en = (entry.title_zh, entry.title_en) if entry else EXTRA_TITLES.get(rule_id, (rule_id, rule_id))
    return en if locale == "en" else zh


def _check_link(job: Job) -> str | None:
    return url_for("web.provider_credentials", provider_id=job.provider_id) if job.provider_id else None


provider_tab("web.provider_credentials", _l("资质核查"), order=20)
job_link(CHECK_KIND, _check_link)


def _shown_jobs(session: Session, provider_id: int, asked: str | None) -> list[dict[str, Any]]:
    """Unfinished check jobs of this provider, plus the one named in ?job= (even when finished)."""
    active = jobs.recent_jobs(
        session,
        provider_id=provider_id,
        kind=CHECK_KIND,
        states=(JobState.queued, JobState.running),
        limit=5,
    )
    shown = {job.id: job for job in active}
    asked_id = parse_id(asked)
    if asked_id is not None and asked_id not in shown:
        job = session.get(Job, asked_id)
        if job is not None and job.provider_id == provider_id:
            shown[job.id] = job
    return [job_view(job) for job in sorted(shown.values(), key=lambda job: job.id, reverse=True)]


@bp.get("/providers/<int:provider_id>/credentials")
@role_required(Role.viewer)
def provider_credentials(provider_id: int) -> Any:
    """Latest (or ?run=ID) verdict, its findings with evidence and how to verify, the history, jobs."""
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=provider_id)
    history = checks.check_history(session, provider_id=provider_id)
    run = history[0] if history else None
    asked_run = request.args.get("run", "")
    if asked_run:
        run_id = parse_id(asked_run)
        run = checks.get_run(session, provider_id=provider_id, check_run_id=run_id) if run_id else None
        if run is None:
            abort(404)
    findings = checks.run_findings(session, check_run_id=run.id) if run else []
    panels = [(panel, panel.context(session, provider)) for panel in PANELS]
    return render_template(
        "credentials/tab.html",
        provider=provider,
        run=run,
        latest_id=history[0].id if history else None,
        provider_verdict=verdict_of(session, provider_id),
        verification_max_age=max_age_days(),
        findings=findings,
        reasons=[finding for finding in findings if finding.severity != "info"],
        history=history,
        jobs=_shown_jobs(session, provider_id, request.args.get("job")),
        panels=panels,
        rule_title=rule_title,
        **CHECK_LABELS,
    )


@bp.post("/providers/<int:provider_id>/credentials/check")
@role_required(Role.analyst)
def provider_credentials_check(provider_id: int) -> Any:
    """Queue a check run for this provider and come back to the tab, which follows the job live."""
    session = get_session()
    provider_service.get_provider(session, provider_id=provider_id)
    try:
        job = jobs.enqueue(
            session,
            kind=CHECK_KIND,
            params={"provider_id": provider_id},
            user=current_user._get_current_object(),  # type: ignore[attr-defined]
            provider_id=provider_id,
        )
    except ServiceError as exc:
        flash(exc.errors[0].message, "danger")
        return redirect(url_for("web.provider_credentials", provider_id=provider_id))
    flash(_("已提交资质核查任务 #%(id)d", id=job.id), "info")
    return redirect(url_for("web.provider_credentials", provider_id=provider_id, job=job.id))
