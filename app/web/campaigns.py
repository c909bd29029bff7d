"""Peak-hour campaign pages: plan one from a trial server's page, follow its windows, read the verdict."""

from __future__ import annotations

from functools import partial
from typing import Any

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import role_required
from app.core import clock as localtime
from app.core.db import get_session
from app.core.errors import Conflict, InvalidInput
from app.core.i18n import current_language
from app.models.campaigns import CampaignWindow
from app.models.enums import Role
from app.models.jobs import Job
from app.registry import providers as provider_service
from app.reports.charts import Series, bar_chart, render_svg
from app.trials import campaign_reads, campaigns, servers
from app.web import bp
from app.web.actions import act_and_return
from app.web.jobs import job_link
from app.web.labels import number
from app.web.missing import or_404

CAMPAIGN_STATES = {
    "active": (_l("进行中"), "primary"),
    "finished": (_l("已完成"), "success"),
    "cancelled": (_l("已取消"), "dark"),
}
WINDOW_STATES = {
    "planned": (_l("计划中"), "secondary"),
    "running": (_l("运行中"), "primary"),
    "done": (_l("已完成"), "success"),
    "failed": (_l("失败"), "danger"),
    "missed": (_l("已错过"), "warning"),
    "cancelled": (_l("已取消"), "dark"),
}
WINDOW_KINDS = {"peak": _l("晚高峰"), "offpeak": _l("非高峰")}
WINDOW_NOTES = {  # campaigns.NOTE_CODES in words; any other note is a run's error, shown as it is
    "missed": _l("窗口结束时没有 worker 运行"),
    "not_started": _l("测试未能开始"),
    "run_deleted": _l("测试记录已删除"),
    "cancelled": _l("高峰测试已取消"),
    "no_throughput": _l("测试没有得到吞吐测量"),
}
VERDICTS = {
    "fail": (_l("晚高峰带宽下降（红旗 12）"), "danger"),
    "pass": (_l("晚高峰带宽未明显下降"), "success"),
    "info": (_l("数据不足，无法判定"), "secondary"),
}
FORM_FIELDS = ("days", "peak", "offpeak")


def _window_link(job: Job) -> str | None:
    window = get_session().get(CampaignWindow, job.params.get("window_id") or 0)
    return url_for("web.campaign", campaign_id=window.campaign_id) if window is not None else None


job_link(campaigns.WINDOW_KIND, _window_link)


@bp.app_template_global("server_campaigns")
def server_campaigns(server_id: int) -> list[dict[str, Any]]:
    """A trial server's campaigns with their verdicts, for the card on the server's page."""
    session = get_session()
    return [
        {"campaign": campaign, "outcome": campaign_reads.current_outcome(session, campaign)}
        for campaign in campaign_reads.list_campaigns(session, server_id=server_id)
    ]


@bp.app_template_global("campaign_form_defaults")
def campaign_form_defaults() -> dict[str, Any]:
    """The campaign form's starting values."""
    return {"days": 3, "peak": campaigns.DEFAULT_PEAK, "offpeak": campaigns.DEFAULT_OFFPEAK}


def _form_page(server: Any, values: dict[str, Any], errors: dict[str, str], status: int) -> Any:
    provider = provider_service.get_provider(get_session(), provider_id=server.provider_id)
    page = render_template(
        "campaigns/new.html",
        provider=provider,
        server=server,
        values=values,
        errors=errors,
        max_days=campaigns.MAX_DAYS,
        zone=localtime.zone_name(),
    )
    return page, status


@bp.get("/trial-servers/<int(max=2147483647):server_id>/campaigns/new")
@role_required(Role.analyst)
def campaign_new(server_id: int) -> Any:
    """The form to plan a campaign on a trial server."""
    return _form_page(or_404(servers.get_server, server_id=server_id), campaign_form_defaults(), {}, 200)


@bp.post("/trial-servers/<int(max=2147483647):server_id>/campaigns")
@role_required(Role.analyst)
def campaign_create(server_id: int) -> Any:
    """Plan a campaign; its windows start from the periodic tick."""
    server = or_404(servers.get_server, server_id=server_id)
    values = {name: request.form.get(name, "").strip() for name in FORM_FIELDS}
    try:
        campaign = campaigns.create_campaign(
            get_session(),
            server_id=server.id,
            days=values["days"],
            peak=values["peak"] or None,
            offpeak=values["offpeak"] or None,
            user=current_user._get_current_object(),  # type: ignore[attr-defined]
        )
    except InvalidInput as exc:
        return _form_page(server, values, {error.field: error.message for error in exc.errors}, 422)
    except Conflict as exc:
        flash(exc.errors[0].message, "warning")
        return redirect(url_for("web.trial_server", server_id=server.id))
    flash(_("已安排高峰测试 #%(id)d", id=campaign.id), "info")
    return redirect(url_for("web.campaign", campaign_id=campaign.id))


def _chart(outcome: dict[str, Any], key: str) -> Any:
    """Median and minimum throughput by local hour of day, as an inline SVG bar chart."""
    rows = outcome.get("by_hour") or []
    if not rows:
        return None
    labels = [f"{row['hour']:02d}:00 · {WINDOW_KINDS.get(row['kind'], row['kind'])}" for row in rows]
    chart = bar_chart(
        key,
        _("按小时的吞吐"),
        "Mbit/s",
        labels,
        [
            Series(_("中位数"), tuple(row.get("median") for row in rows)),
            Series(_("最小值"), tuple(row.get("minimum") for row in rows)),
        ],
    )
    return render_svg(chart) if chart.has_data() else None


def _figure_rows(outcome: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for kind in ("peak", "offpeak"):
        figures = outcome.get(kind) or {}
        rows.append(
            {
                "kind": kind,
                "label": WINDOW_KINDS[kind],
                "count": figures.get("count", 0),
                "median": number(figures["median"]) if figures.get("median") is not None else "—",
                "minimum": number(figures["minimum"]) if figures.get("minimum") is not None else "—",
                "cv": f"{figures['cv']:.2f}" if figures.get("cv") is not None else "—",
            }
        )
    return rows


def _window_median(window: CampaignWindow) -> str:
    values = sorted(float(sample["mbps"]) for sample in window.samples)
    if not values:
        return "—"
    middle = len(values) // 2
    median = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return number(round(median, 1))


@bp.get("/campaigns/<int(max=2147483647):campaign_id>")
@role_required(Role.viewer)
def campaign(campaign_id: int) -> Any:
    """A campaign: windows, peak versus off-peak figures, throughput by hour, verdict."""
    found = or_404(campaign_reads.get_campaign, campaign_id=campaign_id)
    session = get_session()
    server = or_404(servers.get_server, server_id=found.trial_server_id)
    provider = provider_service.get_provider(session, provider_id=found.provider_id)
    windows = campaign_reads.windows_of(session, campaign_id=found.id)
    outcome = campaign_reads.current_outcome(session, found)
    locale = current_language()
    return render_template(
        "campaigns/campaign.html",
        campaign=found,
        server=server,
        provider=provider,
        windows=windows,
        medians={window.id: _window_median(window) for window in windows},
        notes={window.id: WINDOW_NOTES.get(window.note or "", window.note or "") for window in windows},
        outcome=outcome,
        reason=outcome.get("reason_en" if locale == "en" else "reason_zh", ""),
        figure_rows=_figure_rows(outcome),
        share=f"{outcome['share']:.0%}" if outcome.get("share") is not None else "—",
        threshold=f"{outcome.get('threshold', 0):.0%}",
        chart=_chart(outcome, f"campaign-{found.id}"),
        campaign_states=CAMPAIGN_STATES,
        window_states=WINDOW_STATES,
        window_kinds=WINDOW_KINDS,
        verdicts=VERDICTS,
        counts=campaign_reads.window_counts(session, campaign_id=found.id),
    )


@bp.post("/campaigns/<int(max=2147483647):campaign_id>/cancel")
@role_required(Role.analyst)
def campaign_cancel(campaign_id: int) -> Any:
    """Cancel the planned windows and stop a running one."""
    or_404(campaign_reads.get_campaign, campaign_id=campaign_id)
    return act_and_return(
        partial(campaigns.cancel_campaign, get_session(), campaign_id=campaign_id),
        _("已取消高峰测试"),
        url_for("web.campaign", campaign_id=campaign_id),
    )


def campaign_ref(item: dict[str, Any]) -> Any:
    """A finding's campaign evidence: a link to the campaign and its figures."""
    from app.web.evidence import EvidenceRef

    campaign_id = item.get("campaign_id")
    facts: list[tuple[Any, Any]] = []
    if item.get("peak_median") is not None:
        facts.append((_l("晚高峰中位数"), f"{number(item['peak_median'])} Mbit/s"))
    if item.get("offpeak_median") is not None:
        facts.append((_l("非高峰中位数"), f"{number(item['offpeak_median'])} Mbit/s"))
    if isinstance(item.get("share"), (int, float)):
        facts.append((_l("高峰 / 非高峰"), f"{item['share']:.0%}"))
    if isinstance(item.get("threshold"), (int, float)):
        facts.append((_l("阈值"), f"{item['threshold']:.0%}"))
    return EvidenceRef(
        title=_("高峰测试 #%(id)s", id=campaign_id),
        url=url_for("web.campaign", campaign_id=campaign_id) if isinstance(campaign_id, int) else None,
        facts=facts,
    )
