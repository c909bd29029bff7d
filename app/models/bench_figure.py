"""Measured figures: one row per benchmark run and figure, in plain columns the ranking reads directly.

Rows are derived from a succeeded run's samples, claims and comparisons (app.trials.bench_figures) and
written in the same transaction as the run or its steps (an after-flush hook app.trials.bench_figures
registers when the trials domain is imported), so advising never decodes sample JSON. Which
run's figure an offer is ranked on (fresh before stale, executed before uploaded, newest) is decided when
reading, because staleness depends on the day of the advice.
"""

from datetime import datetime
from typing import Optional

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

# The figures a run can supply (the ranking's vocabulary, app.advice.ranking.figures.FIGURES, plus the RTTs).
FIGURE_KEYS = (
    "intranet_gbps",
    "public_mbps",
    "rdma_gbps",  # perftest ib_write_bw / ib_read_bw: benchmarks.probes.rdma.RDMA_FIGURE, Gbit/s
    "bandwidth_type",
    "storage_type",
    "read_iops",
    "write_mb_s",
    "gpu_model",
    "gpu_count",
    "rtt_ms",
    "intranet_rtt_ms",
)


class BenchFigure(SQLModel, table=True):
    """One figure one succeeded run measured for its offer: value, unit, note, when, origin, verdict."""

    __tablename__ = "bench_figure"
    __table_args__ = (sa.UniqueConstraint("run_id", "figure", name="uq_bench_figure_run_figure"),)

    id: Optional[int] = Field(default=None, primary_key=True)
    run_id: int = Field(foreign_key="bench_run.id", index=True, ondelete="CASCADE")
    offer_id: int = Field(foreign_key="offer.id", index=True, ondelete="CASCADE")
    provider_id: int = Field(foreign_key="provider.id", ondelete="CASCADE")
    figure: str = Field(max_length=40)  # one of FIGURE_KEYS
    value_num: Optional[float] = None  # numeric figures (an int figure is stored as its float)
    value_text: Optional[str] = Field(default=None, max_length=200)  # text figures (GPU model, disk type)
    unit: str = Field(default="", max_length=16)
    note: str = Field(default="", max_length=200)
    measured_at: datetime = Field(sa_type=sa.DateTime(timezone=True))  # the run's finish (else creation)
    origin: str = Field(default="executed", max_length=16)  # RunOrigin: executed by gpuvet, or uploaded
    verdict: Optional[str] = Field(default=None, max_length=8)  # the run's comparison with the claim
