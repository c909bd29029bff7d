"""The lists behind the dashboard's figures: change events, lookups, benchmark runs, exports, expiring
credentials. A bad filter is dropped and named on the page (status 422), never a server error."""

from __future__ import annotations

from typing import Any

from flask import render_template, request, url_for
from flask_babel import lazy_gettext as _l

from app.accounts.auth import role_required
from app.core import clock
from app.core.db import get_session
from app.models.enums import Role
from app.registry import dashboard, dashboard_lists
from app.registry.dashboard_lists import choice, parse_filters, whole_number
from app.web import bp, labels
from app.web.credentials import SEVERITY_COLOURS, SEVERITY_LABELS
from app.web.dashboard import EXPIRY_COLOURS, EXPIRY_LABELS
from app.web.list_filters import errors_by_field, kept_filters
from app.web.lookups import KIND_LABELS as LOOKUP_KIND_LABELS
from app.web.lookups import STATE_COLOURS as LOOKUP_STATE_COLOURS
from app.web.lookups import STATE_LABELS as LOOKUP_STATE_LABELS
from app.web.trials import RUN_STATE_COLOURS, RUN_STATE_LABELS

EVENT_KIND_LABELS = {
    "verdict_changed": _l("结论变化"),
    "finding_added": _l("新发现"),
    "finding_cleared": _l("已消除"),
    "severity_changed": _l("严重程度变化"),
    "expiring": _l("即将到期"),
    "expired": _l("已过期"),
    "approved_provider": _l("已批准的供应商有变化"),
    "decision_due": _l("采购决定事项将到期"),
    "decision_lapsed": _l("采购决定事项已过期"),
}
RUN_FILTER_LABELS = {
    "active": _l("排队或运行中"),
    **RUN_STATE_LABELS,
}
MAX_PAGE = 100_000


def _page_number(params: Any, name: str) -> int:
    return whole_number(params, name, high=MAX_PAGE) or 1


def _filters(parsers: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[str]], dict[str, str]]:
    """Parsed values, errors by parameter, and the valid parameters to keep in page links."""
    values, errors = parse_filters(request.args, {**parsers, "page": _page_number})
    by_field = errors_by_field(errors)
    kept = kept_filters(request.args, parsers, by_field)
    values["page"] = values["page"] or 1
    return values, by_field, kept


def _render(template: str, errors: dict[str, list[str]], **context: Any) -> Any:
    return render_template(template, errors=errors, **context), (422 if errors else 200)


@bp.get("/changes")
@role_required(Role.viewer)
def change_list() -> Any:
    """Change events of every provider (or one), newest first, filtered by kind."""
    values, errors, kept = _filters(
        {
            "kind": lambda params, name: choice(params, name, dashboard_lists.EVENT_KINDS),
            "provider_id": whole_number,
        }
    )
    page = dashboard_lists.change_events(
        get_session(), kind=values["kind"], provider_id=values["provider_id"], page=values["page"]
    )
    return _render(
        "dashboard/changes.html",
        errors,
        page=page,
        kept=kept,
        filters=values,
        kind_labels=EVENT_KIND_LABELS,
        severity_labels=SEVERITY_LABELS,
        severity_colours=SEVERITY_COLOURS,
    )


@bp.get("/lookups")
@role_required(Role.viewer)
def lookup_list() -> Any:
    """Official lookups of every provider, e.g. those waiting for a captcha answer."""
    values, errors, kept = _filters(
        {"state": lambda params, name: choice(params, name, dashboard_lists.LOOKUP_STATES)}
    )
    page = dashboard_lists.lookups(get_session(), state=values["state"], page=values["page"])
    return _render(
        "dashboard/lookups.html",
        errors,
        page=page,
        kept=kept,
        filters=values,
        state_labels=LOOKUP_STATE_LABELS,
        state_colours={state.value: colour for state, colour in LOOKUP_STATE_COLOURS.items()},
        kind_labels={kind.value: text for kind, text in LOOKUP_KIND_LABELS.items()},
    )


@bp.get("/bench-runs")
@role_required(Role.viewer)
def bench_run_list() -> Any:
    """Benchmark runs of every provider, by state ("active": queued or running) and age."""
    values, errors, kept = _filters(
        {
            "state": lambda params, name: choice(params, name, dashboard_lists.RUN_STATES),
            "days": lambda params, name: whole_number(params, name, high=dashboard_lists.MAX_DAYS),
        }
    )
    page = dashboard_lists.bench_runs(
        get_session(), state=values["state"], days=values["days"], page=values["page"]
    )
    return _render(
        "dashboard/bench_runs.html",
        errors,
        page=page,
        kept=kept,
        filters=values,
        state_filters=RUN_FILTER_LABELS,
        state_labels=RUN_STATE_LABELS,
        state_colours={state.value: colour for state, colour in RUN_STATE_COLOURS.items()},
        suite_labels=labels.BENCH_SUITE,
        all_days_url=url_for("web.bench_run_list", **{k: v for k, v in kept.items() if k != "days"}),
    )


@bp.get("/reports")
@role_required(Role.viewer)
def export_list() -> Any:
    """Every exported report (provider and case), newest first."""
    values, errors, kept = _filters({})
    per_page = dashboard_lists.PER_PAGE
    offset = (values["page"] - 1) * per_page
    rows = dashboard.recent_exports(get_session(), limit=per_page + 1, offset=offset)
    page = dashboard_lists.ListPage(rows=rows[:per_page], page=values["page"], has_next=len(rows) > per_page)
    return _render("dashboard/exports.html", errors, page=page, kept=kept, filters=values)


@bp.get("/expiring")
@role_required(Role.viewer)
def expiring_list() -> Any:
    """Licences and certifications expired or expiring within 90 days, by stage."""
    values, errors, kept = _filters(
        {"stage": lambda params, name: choice(params, name, dashboard_lists.STAGES)}
    )
    today = clock.business_today()
    rows = dashboard_lists.expiring(get_session(), stage=values["stage"], today=today)
    return _render(
        "dashboard/expiring.html",
        errors,
        rows=rows,
        today=today,
        kept=kept,
        filters=values,
        stage_labels=EXPIRY_LABELS,
        stage_colours=EXPIRY_COLOURS,
        certification_kinds=labels.CERTIFICATION_KIND,
    )
