"""Peak-hour campaigns: the stability suite on a trial server in daily peak and off-peak windows.

`create_campaign` plans one window row per day and kind, in local time (GPUVET_TIMEZONE). The periodic
tick (services.schedules) calls `tick`: running windows whose run ended are settled, planned windows
whose end passed are recorded missed, and each due window is claimed by one conditional UPDATE
(planned -> running) before its run is queued, so a restart, a second worker or a repeated tick starts
it once. The window's job runs the suite like any benchmark run and copies the measured throughput onto
the window; when no window is left open the campaign is finished, its verdict stored (red flag 12 "sags
at peak" below benchmarks.yaml peak_min_share of the off-peak median) and the provider re-checked.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import sqlalchemy as sa
from flask_babel import gettext as _
from pydantic import ValidationError
from sqlmodel import Session, col, select

from app.core import clock as localtime
from app.core.errors import Conflict, FieldError, InvalidInput, ServiceError, from_validation_error
from app.core.events import EvidenceChanged, publish
from app.core.jobs import background, enqueue
from app.models.campaigns import (
    OPEN_WINDOW_STATES,
    BenchCampaign,
    CampaignState,
    CampaignWindow,
    WindowKind,
    WindowState,
)
from app.models.jobs import Job
from app.models.trials import BenchRun, RunState
from app.trials import bench_runs
from app.trials.campaign_reads import active_campaign, campaign_outcome, get_campaign, windows_of
from app.trials.servers import get_server
from benchmarks.params import SuiteParams

logger = logging.getLogger(__name__)


WINDOW_KIND = "bench.campaign_window"


SUITE = "stability"


DEFAULT_PEAK = "20:00-23:00"


DEFAULT_OFFPEAK = "03:00-06:00"


MAX_DAYS = 14


_WINDOW = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$")


# A window's note: one of these codes (the pages show them in words), or the error of its run.
NOTE_CODES = ("missed", "not_started", "run_deleted", "cancelled", "no_throughput")


RUN_TO_WINDOW = {
    RunState.succeeded: WindowState.done,
    RunState.cancelled: WindowState.cancelled,
    RunState.failed: WindowState.failed,
    RunState.interrupted: WindowState.failed,
}


def parse_window(text: str, field: str) -> tuple[time, time]:
    """("20:00-23:00") -> (20:00, 23:00); an end before the start crosses midnight."""
    match = _WINDOW.match(str(text or "").strip())
    if match is None:
        raise InvalidInput(_("须为 时:分-时:分（24 小时制），例如 20:00-23:00"), field=field)
    start = time(int(match[1]), int(match[2]))
    end = time(int(match[3]), int(match[4]))
    if start == end:
        raise InvalidInput(_("开始与结束不能相同"), field=field)
    return start, end


def _minutes(window: tuple[time, time]) -> set[int]:
    start = window[0].hour * 60 + window[0].minute
    end = window[1].hour * 60 + window[1].minute
    return {minute % 1440 for minute in range(start, end if end > start else end + 1440)}


def plan_windows(
    days: int, windows: dict[str, tuple[time, time]], zone: ZoneInfo, now: datetime
) -> list[tuple[str, int, datetime, datetime]]:
    """(kind, day, start, end in UTC): the first `days` occurrences of each window not over at `now`."""
    local_now = localtime.aware(now).astimezone(zone)
    planned = []
    for kind, (start, end) in windows.items():
        day, found = local_now.date() - timedelta(days=1), 0  # yesterday's may still be open after midnight
        while found < days:
            begins = datetime.combine(day, start, zone)
            ends = datetime.combine(day + timedelta(days=1) if end <= start else day, end, zone)
            day += timedelta(days=1)
            if ends <= local_now:
                continue
            found += 1
            planned.append((kind, found, begins.astimezone(UTC), ends.astimezone(UTC)))
    return sorted(planned, key=lambda item: item[2])


def _days(value: Any) -> int:
    try:
        days = int(str(value).strip())
    except ValueError:
        days = 0
    if not 1 <= days <= MAX_DAYS:
        raise InvalidInput(_("须为 1 到 %(max)s 之间的整数（天）", max=MAX_DAYS), field="days")
    return days


def _params(params: dict[str, Any] | None) -> dict[str, Any]:
    try:
        validated = SuiteParams.model_validate(params or {})
    except ValidationError as exc:
        raise from_validation_error(exc, prefix="params") from None
    return validated.model_dump(mode="json", exclude_defaults=True)


def _fits(params: dict[str, Any], window_minutes: int) -> list[FieldError]:
    """An error when one stability run (repeats, tests, pauses) would outlast the shorter window."""
    suite = SuiteParams.model_validate(params)
    repeats = suite.stability_repeats
    seconds = repeats * (suite.stability_test_seconds + 1) + (repeats - 1) * suite.stability_interval_s
    if seconds <= window_minutes * 60:
        return []
    message = _(
        "一次稳定性测试约需 %(needed)s 分钟，超过最短时段的 %(window)s 分钟；请减少次数或间隔",
        needed=round(seconds / 60),
        window=window_minutes,
    )
    return [FieldError("params.stability_repeats", message)]


def _validated(
    days: Any, peak: str | None, offpeak: str | None, params: dict[str, Any] | None
) -> tuple[int, dict[str, tuple[time, time]], dict[str, Any]]:
    """Every field checked; one InvalidInput naming each bad one."""
    errors: list[FieldError] = []
    values: dict[str, Any] = {}
    checks = {
        "days": lambda: _days(days),
        "peak": lambda: parse_window(peak or DEFAULT_PEAK, "peak"),
        "offpeak": lambda: parse_window(offpeak or DEFAULT_OFFPEAK, "offpeak"),
        "params": lambda: _params(params),
    }
    for name, check in checks.items():
        try:
            values[name] = check()
        except InvalidInput as exc:
            errors += exc.errors
    if "peak" in values and "offpeak" in values:
        if _minutes(values["peak"]) & _minutes(values["offpeak"]):
            errors.append(FieldError("offpeak", _("非高峰时段不能与晚高峰时段重叠")))
        elif "params" in values:
            errors += _fits(values["params"], min(len(_minutes(values[k])) for k in ("peak", "offpeak")))
    if errors:
        raise InvalidInput(errors)
    windows = {WindowKind.peak.value: values["peak"], WindowKind.offpeak.value: values["offpeak"]}
    return values["days"], windows, values["params"]


def _text(window: tuple[time, time]) -> str:
    return f"{window[0]:%H:%M}-{window[1]:%H:%M}"


def create_campaign(
    session: Session,
    *,
    server_id: int,
    days: Any,
    peak: str | None = None,
    offpeak: str | None = None,
    params: dict[str, Any] | None = None,
    user: Any = None,
    now: datetime | None = None,
) -> BenchCampaign:
    """Plan a campaign on a trial server whose host key is pinned (one active campaign per server)."""
    server = get_server(session, server_id=server_id)
    days, windows, params = _validated(days, peak, offpeak, params)
    if not server.host_key_fingerprint:
        raise InvalidInput(_("请先确认并固定服务器的主机密钥指纹"), field="host_key_fingerprint")
    if active_campaign(session, server_id=server.id) is not None:
        raise Conflict(_("该服务器已有进行中的高峰测试，请等待其结束或取消"), field="trial_server_id")
    actor_id, actor_name = (
        (user.id, user.username) if user is not None else session.info.get("actor", (None, "system"))
    )
    zone_name = localtime.zone_name()
    campaign = BenchCampaign(
        trial_server_id=server.id,
        provider_id=server.provider_id,
        suite=SUITE,
        days=days,
        peak_window=_text(windows[WindowKind.peak]),
        offpeak_window=_text(windows[WindowKind.offpeak]),
        timezone=zone_name,
        params=params,
        created_by_id=actor_id,
        created_by_name=actor_name,
    )
    session.add(campaign)
    session.flush()
    plan = plan_windows(days, windows, ZoneInfo(zone_name), now or localtime.now())
    session.add_all(
        CampaignWindow(campaign_id=campaign.id, kind=kind, day=day, starts_at=starts, ends_at=ends)
        for kind, day, starts, ends in plan
    )
    session.commit()
    return campaign


def tick(session: Session, now: datetime) -> list[Job]:
    """Settle ended runs, record missed windows, start due ones, finish complete campaigns; jobs queued."""
    started: list[Job] = []
    try:
        now = localtime.aware(now).astimezone(UTC)  # SQLite keeps no offset: store UTC only
        open_windows = session.exec(
            select(CampaignWindow)
            .join(BenchCampaign, col(BenchCampaign.id) == CampaignWindow.campaign_id)
            .where(
                BenchCampaign.state == CampaignState.active,
                col(CampaignWindow.state).in_(list(OPEN_WINDOW_STATES)),
            )
            .order_by(col(CampaignWindow.starts_at))
        ).all()
        touched = {window.campaign_id for window in open_windows}
        for window in open_windows:
            over = localtime.aware(window.ends_at) <= now
            if window.state == WindowState.running:
                _settle_from_run(session, window, over=over)
            elif over:
                _close(session, window.id, WindowState.missed, note="missed")
            elif localtime.aware(window.starts_at) <= now:
                job = _start_window(session, window, now)
                if job is not None:
                    started.append(job)
        for campaign_id in sorted(touched):
            finish_if_complete(session, campaign_id)
    except Exception:  # the other schedules must still run; the next tick tries again
        logger.exception("peak-hour campaign tick failed")
        session.rollback()
    return started


def _update(session: Session, statement: Any) -> int:
    """Run one conditional UPDATE and commit; loaded rows are expired (they may hold the old values)."""
    changed = session.execute(statement).rowcount
    session.commit()
    session.expire_all()
    return changed


def _close(
    session: Session,
    window_id: int,
    state: WindowState,
    *,
    note: str | None = None,
    samples: list[dict[str, Any]] | None = None,
    from_states: Sequence[str] = (WindowState.planned, WindowState.running),
) -> bool:
    """Move an open window to a final state in one conditional UPDATE (False: someone else did)."""
    values: dict[str, Any] = {"state": state.value, "note": note, "finished_at": localtime.now()}
    if samples is not None:
        values["samples"] = samples
    table = CampaignWindow.__table__
    statement = (
        sa.update(table)
        .where(table.c.id == window_id, table.c.state.in_([str(s) for s in from_states]))
        .values(**values)
    )
    return _update(session, statement) == 1


@contextmanager
def _acting_as(session: Session, campaign: BenchCampaign) -> Iterator[None]:
    """Runs started for a campaign are credited to whoever planned it."""
    before = session.info.get("actor")
    session.info["actor"] = (campaign.created_by_id, campaign.created_by_name)
    try:
        yield
    finally:
        if before is None:
            session.info.pop("actor", None)
        else:
            session.info["actor"] = before


def _start_window(session: Session, window: CampaignWindow, now: datetime) -> Job | None:
    """Claim a due window (planned -> running, once) and queue its run; a busy server: retry next tick.

    `claimed_at` is the tick's clock: the window's samples are placed in time from it.
    """
    table = CampaignWindow.__table__
    window_id, campaign_id = window.id, window.campaign_id
    claimed = _update(
        session,
        sa.update(table)
        .where(table.c.id == window_id, table.c.state == WindowState.planned.value)
        .values(state=WindowState.running.value, claimed_at=now),
    )
    if claimed != 1:
        return None
    campaign = get_campaign(session, campaign_id=campaign_id)
    try:
        with _acting_as(session, campaign):
            run = bench_runs.create_run(
                session, server_id=campaign.trial_server_id, suite=campaign.suite, params=campaign.params
            )
    except Conflict:  # another run on the server: try again at the next tick while the window lasts
        session.rollback()
        _update(
            session,
            sa.update(table)
            .where(table.c.id == window_id, table.c.state == WindowState.running.value)
            .values(state=WindowState.planned.value, claimed_at=None),
        )
        return None
    except ServiceError as exc:
        session.rollback()
        _close(session, window_id, WindowState.failed, note="; ".join(e.message for e in exc.errors)[:2000])
        return None
    run_id = run.id
    _update(session, sa.update(table).where(table.c.id == window_id).values(run_id=run_id))
    with _acting_as(session, campaign):
        job = enqueue(
            session,
            kind=WINDOW_KIND,
            params={"window_id": window_id, "run_id": run_id},
            provider_id=campaign.provider_id,
        )
    run = session.get(BenchRun, run_id)
    session.refresh(run)
    run.job_id = job.id
    session.add(run)
    session.commit()
    return job


def run_throughput(session: Session, run: BenchRun, anchor: datetime | None = None) -> list[dict[str, Any]]:
    """[{"at", "mbps"}] of the run's stability throughput tests, each at the time its test started.

    With `anchor` (when the window was claimed, on the schedules' clock), each test is placed that long
    after the anchor as it started after the run did; the same moment unless a test injected the clock.
    """
    run_start = localtime.aware(run.started_at) or localtime.now()
    found = []
    for step in bench_runs.run_steps(session, run_id=run.id):
        started = {
            (output.get("metadata") or {}).get("repeat"): output.get("started_at")
            for output in step.outputs
            if output.get("parser") == "iperf3"
        }
        for data in step.samples:
            metadata = data.get("metadata") or {}
            if data.get("metric") != "throughput" or metadata.get("purpose") != "stability":
                continue
            at_epoch = started.get(metadata.get("repeat"))
            at = datetime.fromtimestamp(at_epoch, UTC) if at_epoch else run_start
            if anchor is not None:
                at = localtime.aware(anchor) + (at - run_start)
            found.append({"at": at.isoformat(), "mbps": round(float(data["value"]), 2)})
    return found


def _settle_from_run(session: Session, window: CampaignWindow, *, over: bool = False) -> bool:
    """A running window whose run ended: done with its throughput, failed or cancelled like the run.

    `over` (the window's end has passed): a run still waiting for a worker is cancelled and the window
    recorded missed; a window whose run was never created (its claimer died) is failed.
    """
    if window.run_id is None:
        if not over:
            return False
        return _close(session, window.id, WindowState.failed, note="not_started")
    run = session.get(BenchRun, window.run_id)
    if run is None:
        return _close(session, window.id, WindowState.failed, note="run_deleted")
    run = bench_runs.refresh_state(session, run)
    if over and run.state == RunState.queued and run.job_id is not None:
        bench_runs.cancel_run(session, run_id=run.id)
        return _close(
            session,
            window.id,
            WindowState.missed,
            note="missed",
            from_states=(WindowState.running,),
        )
    if not run.finished:
        return False
    state = RUN_TO_WINDOW[RunState(run.state)]
    samples = run_throughput(session, run, window.claimed_at) if state == WindowState.done else []
    note = run.error
    if state == WindowState.done and not samples:
        state, note = WindowState.failed, "no_throughput"
    return _close(session, window.id, state, note=note, samples=samples, from_states=(WindowState.running,))


def finish_if_complete(session: Session, campaign_id: int) -> bool:
    """An active campaign with no open window left: store its result, finish it, re-check the provider."""
    campaign = get_campaign(session, campaign_id=campaign_id)
    windows = windows_of(session, campaign_id=campaign_id)
    if campaign.state != CampaignState.active or any(w.state in OPEN_WINDOW_STATES for w in windows):
        return False
    finished_at = localtime.now()
    table = BenchCampaign.__table__
    provider_id = campaign.provider_id
    changed = _update(
        session,
        sa.update(table)
        .where(table.c.id == campaign_id, table.c.state == CampaignState.active.value)
        .values(
            state=CampaignState.finished.value,
            finished_at=finished_at,
            result=campaign_outcome(campaign, windows),
        ),
    )
    if changed == 1:
        publish(
            session,
            EvidenceChanged(provider_id=provider_id, since=finished_at, cause=f"campaign {campaign_id}"),
        )
    return changed == 1


@background(WINDOW_KIND, title_zh="高峰时段测试窗口", title_en="Peak-hour campaign window")
def window_job(session: Session, job: Job, *, window_id: int, run_id: int) -> dict[str, Any]:
    """The job: run the window's stability suite, then settle the window (and finish the campaign)."""
    try:
        result = bench_runs.run_bench_job(session, job, run_id=run_id)
    finally:
        session.rollback()
        window = session.get(CampaignWindow, window_id)
        if window is not None:
            session.refresh(window)
            _settle_from_run(session, window)
            finish_if_complete(session, window.campaign_id)
    return result | {"window_id": window_id}


def cancel_campaign(session: Session, *, campaign_id: int) -> BenchCampaign:
    """Cancel the planned windows and stop a running one through its job's cancellation."""
    campaign = get_campaign(session, campaign_id=campaign_id)
    if campaign.state != CampaignState.active:
        raise Conflict(_("高峰测试已结束，无法取消"), field="campaign_id")
    table = BenchCampaign.__table__
    _update(
        session,
        sa.update(table)
        .where(table.c.id == campaign_id, table.c.state == CampaignState.active.value)
        .values(state=CampaignState.cancelled.value, finished_at=localtime.now()),
    )
    for window in windows_of(session, campaign_id=campaign_id):
        if window.state == WindowState.planned:
            _close(session, window.id, WindowState.cancelled, note="cancelled")
        elif window.state == WindowState.running and window.run_id is not None:
            run = bench_runs.get_run(session, run_id=window.run_id)
            if not run.finished and run.job_id is not None:
                # a queued job stops at once, a running one at its next cancellation check
                bench_runs.cancel_run(session, run_id=run.id)
            _settle_from_run(session, window)
    session.refresh(campaign)
    campaign.result = campaign_outcome(campaign, windows_of(session, campaign_id=campaign_id))
    session.add(campaign)
    session.commit()
    return campaign


# Throughput (Mbit/s) of a 1 Gbps link sold as dedicated, as iperf3 measured it on a shared uplink:
# near line rate at night, about half of it in the evening. One list per day and window.
DEMO_OFFPEAK = ((941.2, 938.7, 940.1, 936.5), (939.8, 942.0, 937.3, 940.6), (938.4, 941.5, 935.9, 939.2))


DEMO_PEAK = ((512.6, 447.9, 398.2, 463.0), (486.1, 421.7, 377.5, 455.8), (530.4, 468.3, 402.9, 441.1))


def demo_campaign(
    session: Session,
    *,
    server_id: int,
    peak_mbps: Sequence[Sequence[float]] = DEMO_PEAK,
    offpeak_mbps: Sequence[Sequence[float]] = DEMO_OFFPEAK,
    now: datetime | None = None,
) -> BenchCampaign:
    """A finished campaign marked demo: day i's peak (off-peak) window holds peak_mbps[i]
    (offpeak_mbps[i]), its tests spread evenly over the window; every window ended before `now`."""
    server = get_server(session, server_id=server_id)
    days = min(len(peak_mbps), len(offpeak_mbps))
    _days(days)
    zone_name = localtime.zone_name()
    windows = {
        WindowKind.peak.value: parse_window(DEFAULT_PEAK, "peak"),
        WindowKind.offpeak.value: parse_window(DEFAULT_OFFPEAK, "offpeak"),
    }
    start = (now or localtime.now()) - timedelta(days=days + 1)
    campaign = BenchCampaign(
        trial_server_id=server.id,
        provider_id=server.provider_id,
        days=days,
        peak_window=DEFAULT_PEAK,
        offpeak_window=DEFAULT_OFFPEAK,
        timezone=zone_name,
        origin="demo",
        created_by_name="demo",
        created_at=start,
    )
    session.add(campaign)
    session.flush()
    values = {WindowKind.peak.value: peak_mbps, WindowKind.offpeak.value: offpeak_mbps}
    rows = []
    for kind, day, starts, ends in plan_windows(days, windows, ZoneInfo(zone_name), start):
        measured = values[kind][day - 1]
        step = (ends - starts) / max(len(measured), 1)
        samples = [
            {"at": (starts + step * index).isoformat(), "mbps": float(mbps)}
            for index, mbps in enumerate(measured)
        ]
        rows.append(
            CampaignWindow(
                campaign_id=campaign.id,
                kind=kind,
                day=day,
                starts_at=starts,
                ends_at=ends,
                state=WindowState.done.value,
                samples=samples,
                claimed_at=starts,
                finished_at=starts + timedelta(hours=1),
            )
        )
    session.add_all(rows)
    campaign.state = CampaignState.finished.value
    campaign.finished_at = max(row.ends_at for row in rows)
    campaign.result = campaign_outcome(campaign, rows)
    session.add(campaign)
    session.commit()
    return campaign
