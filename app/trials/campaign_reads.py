"""Reading campaigns: a campaign and its windows, their outcome, the fact the vetting rules read, JSON."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from flask_babel import gettext as _
from sqlmodel import Session, col, func, select

from app.core import clock as localtime
from app.core.records import get_or_404
from app.credentials.facts import fact_source
from app.models.campaigns import BenchCampaign, CampaignState, CampaignWindow, WindowKind, WindowState
from app.models.trials import TrialServer
from app.trials import bench_runs
from app.trials.campaign_figures import by_hour, outcome


def get_campaign(session: Session, *, campaign_id: int) -> BenchCampaign:
    """One campaign, or NotFound."""
    return get_or_404(
        session,
        BenchCampaign,
        campaign_id,
        _("高峰测试 %(id)s 不存在", id=campaign_id),
        field="campaign_id",
        populate_existing=True,  # conditional UPDATEs moved it
    )


def list_campaigns(session: Session, *, server_id: int, limit: int = 20) -> list[BenchCampaign]:
    """A server's campaigns, newest first."""
    statement = (
        select(BenchCampaign)
        .where(BenchCampaign.trial_server_id == server_id)
        .order_by(col(BenchCampaign.id).desc())
        .limit(limit)
    )
    return list(session.exec(statement).all())


def active_campaign(session: Session, *, server_id: int) -> BenchCampaign | None:
    """The server's active campaign, if any."""
    statement = select(BenchCampaign).where(
        BenchCampaign.trial_server_id == server_id, BenchCampaign.state == CampaignState.active
    )
    return session.exec(statement).first()


def windows_of(session: Session, *, campaign_id: int) -> list[CampaignWindow]:
    """A campaign's windows in time order."""
    statement = (
        select(CampaignWindow)
        .where(CampaignWindow.campaign_id == campaign_id)
        .order_by(col(CampaignWindow.starts_at), col(CampaignWindow.kind))
        .execution_options(populate_existing=True)  # rows loaded before a conditional UPDATE are refreshed
    )
    return list(session.exec(statement).all())


def local_samples(
    campaign: BenchCampaign, windows: Sequence[CampaignWindow]
) -> list[tuple[str, datetime, float]]:
    """(kind, local time in the campaign's zone, Mbit/s) of every sample of the windows that ran."""
    zone = ZoneInfo(campaign.timezone)
    return [
        (window.kind, datetime.fromisoformat(sample["at"]).astimezone(zone), float(sample["mbps"]))
        for window in windows
        if window.state == WindowState.done
        for sample in window.samples
    ]


def campaign_outcome(campaign: BenchCampaign, windows: Sequence[CampaignWindow]) -> dict[str, Any]:
    """Peak versus off-peak figures, verdict and figures by hour of day of the windows that ran."""
    samples = local_samples(campaign, windows)
    share = bench_runs.thresholds().peak_min_share
    values = {kind: [mbps for of, _at, mbps in samples if of == kind] for kind in WindowKind}
    result = outcome(values[WindowKind.peak], values[WindowKind.offpeak], share)
    return result | {"by_hour": by_hour(samples)}


def current_outcome(session: Session, campaign: BenchCampaign) -> dict[str, Any]:
    """The stored result of an ended campaign, or the figures so far of an active one."""
    if campaign.state != CampaignState.active and campaign.result:
        return campaign.result
    return campaign_outcome(campaign, windows_of(session, campaign_id=campaign.id))


def window_counts(session: Session, *, campaign_id: int) -> dict[str, int]:
    """How many windows are in each state."""
    statement = (
        select(CampaignWindow.state, func.count())
        .where(CampaignWindow.campaign_id == campaign_id)
        .group_by(CampaignWindow.state)
    )
    return {str(state): int(count) for state, count in session.exec(statement).all()}


@fact_source("peak_campaigns")
def campaigns_fact(session: Session, provider: Any) -> dict[str, Any] | None:
    """The latest finished campaign of each trial server of the provider, with its verdict."""
    statement = (
        select(BenchCampaign, TrialServer.name)
        .join(TrialServer, col(TrialServer.id) == BenchCampaign.trial_server_id)
        .where(
            BenchCampaign.provider_id == provider.id,
            BenchCampaign.state == CampaignState.finished,
        )
        .order_by(col(BenchCampaign.id).desc())
    )
    latest: dict[int, dict[str, Any]] = {}
    for campaign, server_name in session.exec(statement).all():
        if campaign.trial_server_id in latest:
            continue
        latest[campaign.trial_server_id] = {
            "campaign_id": campaign.id,
            "trial_server_id": campaign.trial_server_id,
            "trial_server": server_name,
            "origin": campaign.origin,
            "days": campaign.days,
            "peak_window": campaign.peak_window,
            "offpeak_window": campaign.offpeak_window,
            "finished_at": _iso(campaign.finished_at),
            "result": {key: value for key, value in campaign.result.items() if key != "by_hour"},
        }
    return {"campaigns": list(latest.values())} if latest else None


def _iso(value: datetime | None) -> str | None:
    return localtime.aware(value).isoformat() if value is not None else None


def campaign_public(session: Session, campaign: BenchCampaign) -> dict[str, Any]:
    """JSON-ready description of a campaign, its windows and its figures."""
    windows = windows_of(session, campaign_id=campaign.id)
    return {
        "id": campaign.id,
        "trial_server_id": campaign.trial_server_id,
        "provider_id": campaign.provider_id,
        "suite": campaign.suite,
        "days": campaign.days,
        "peak": campaign.peak_window,
        "offpeak": campaign.offpeak_window,
        "timezone": campaign.timezone,
        "params": campaign.params,
        "state": campaign.state,
        "origin": campaign.origin,
        "created_by": campaign.created_by_name,
        "created_at": localtime.aware(campaign.created_at).isoformat(),
        "finished_at": _iso(campaign.finished_at),
        "windows": [
            {
                "id": window.id,
                "kind": window.kind,
                "day": window.day,
                "starts_at": localtime.aware(window.starts_at).isoformat(),
                "ends_at": localtime.aware(window.ends_at).isoformat(),
                "state": window.state,
                "run_id": window.run_id,
                "samples": window.samples,
                "note": window.note,
            }
            for window in windows
        ],
        "outcome": current_outcome(session, campaign),
    }
