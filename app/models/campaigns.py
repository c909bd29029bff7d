"""Peak-hour benchmark campaigns: the stability suite run on a trial server in chosen daily windows.

A campaign plans one window row per day and kind (evening peak, night off-peak); the periodic tick claims
a due window with one conditional UPDATE (planned -> running), so a restart, a second worker or a repeated
tick starts its run once. The throughput a window's run measured is copied onto the window, so the
campaign's figures need only these two tables.
"""

from datetime import datetime
from enum import StrEnum
from typing import Any, Optional

import sqlalchemy as sa
from sqlmodel import JSON, Column, Field, SQLModel

from app.core import clock


class CampaignState(StrEnum):
    """Where a campaign stands."""

    active = "active"
    finished = "finished"
    cancelled = "cancelled"


class WindowKind(StrEnum):
    """The two kinds of window compared."""

    peak = "peak"
    offpeak = "offpeak"


class WindowState(StrEnum):
    """Where one window stands; missed: its end passed while no worker started it."""

    planned = "planned"
    running = "running"
    done = "done"
    failed = "failed"
    missed = "missed"
    cancelled = "cancelled"


OPEN_WINDOW_STATES = frozenset({WindowState.planned, WindowState.running})


class BenchCampaign(SQLModel, table=True):
    __tablename__ = "bench_campaign"

    id: Optional[int] = Field(default=None, primary_key=True)
    trial_server_id: int = Field(foreign_key="trial_server.id", index=True, ondelete="CASCADE")
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    suite: str = Field(default="stability", max_length=40)
    days: int
    peak_window: str = Field(max_length=11)  # "20:00-23:00", local time of `timezone`
    offpeak_window: str = Field(max_length=11)
    timezone: str = Field(max_length=64)
    params: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    state: str = Field(default=CampaignState.active.value, max_length=16, index=True)
    origin: str = Field(default="executed", max_length=16)  # "demo": built from recorded samples
    result: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSON, nullable=False))
    created_by_id: Optional[int] = None
    created_by_name: str = Field(default="system", max_length=60)
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
    finished_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))


class CampaignWindow(SQLModel, table=True):
    __tablename__ = "bench_campaign_window"
    __table_args__ = (
        sa.UniqueConstraint("campaign_id", "kind", "starts_at", name="uq_bench_campaign_window"),
    )

    id: Optional[int] = Field(default=None, primary_key=True)
    campaign_id: int = Field(foreign_key="bench_campaign.id", index=True, ondelete="CASCADE")
    kind: str = Field(max_length=8)
    day: int = 1  # 1 .. campaign.days
    starts_at: datetime = Field(sa_type=sa.DateTime(timezone=True), index=True)
    ends_at: datetime = Field(sa_type=sa.DateTime(timezone=True))
    state: str = Field(default=WindowState.planned.value, max_length=16, index=True)
    run_id: Optional[int] = Field(default=None, foreign_key="bench_run.id", ondelete="SET NULL")
    # [{"at": ISO time, "mbps": throughput}] copied from the run's stability step
    samples: list[dict[str, Any]] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    note: Optional[str] = Field(default=None, sa_type=sa.Text)
    claimed_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
    finished_at: Optional[datetime] = Field(default=None, sa_type=sa.DateTime(timezone=True))
