"""Claims against measurements: a run's claim limits, and an RDMA claim a failed intranet test refutes."""

from __future__ import annotations

from typing import Any

import numpy as np

from app.advice.facts import ASSUMED, CLAIMED, MEASURED, VERIFIED, OfferFacts
from app.advice.offer_table import SOURCE_CODES, OfferTable
from app.advice.ranking.assessment import Context
from app.advice.ranking.figures import INTRANET_CLAIM, ClaimLimit, best, claim_limits


def intranet_contradiction(offer: OfferFacts, ctx: Context) -> float | None:
    """Measured / claimed intranet when that fails (below the warn ratio) on an offer whose RDMA figure is
    only claimed: the claim is contradicted, so the measured intranet counts instead of it."""
    measurements = offer.measurements
    if offer.rdma_type == "none" or offer.rdma_gbps is None or not measurements or not offer.intranet_gbps:
        return None
    measured = measurements.get("intranet_gbps")
    if measured is None or measured.source not in (MEASURED, VERIFIED) or "rdma_gbps" in measurements:
        return None
    warn_at = claim_limit(ctx, INTRANET_CLAIM)[3]
    ratio = float(measured.value) / float(offer.intranet_gbps)
    return ratio if ratio < warn_at else None


def intranet_contradiction_rows(table: OfferTable, ctx: Context) -> np.ndarray:
    """intranet_contradiction for every offer: whether its claimed RDMA figure is contradicted."""
    measured, source = table.measured_figure("intranet_gbps")
    claimed = table.numbers("intranet_gbps")
    judged = ((source == SOURCE_CODES[MEASURED]) | (source == SOURCE_CODES[VERIFIED])) & (claimed > 0)
    ratio = np.divide(measured, claimed, out=np.full(table.size, np.nan), where=judged)
    rdma_claimed = ~table.per_row("rdma_type", lambda kind: kind == "none", dtype=bool)
    rdma_claimed &= ~np.isnan(table.numbers("rdma_gbps")) & (table.measured_figure("rdma_gbps")[1] < 0)
    return judged & rdma_claimed & (ratio < claim_limit(ctx, INTRANET_CLAIM)[3])


def effective_intranet(offer: OfferFacts, ctx: Context) -> tuple[Any, str, float | None, str]:
    """The intranet figure the job would use (value, source), its effective Gbps and the transport; a
    claimed RDMA figure that a failed intranet measurement contradicts is not used."""
    if offer.rdma_type != "none":
        value, source = best(offer, "rdma_gbps", offer.rdma_gbps)
        if value is not None and (source != CLAIMED or intranet_contradiction(offer, ctx) is None):
            efficiency = ctx.network["rdma"] if source in (CLAIMED, ASSUMED) else 1.0
            return value, source, value * efficiency, offer.rdma_type
    value, source = best(offer, "intranet_gbps", offer.intranet_gbps)
    if value is None:
        return None, source, None, "tcp"
    # A measured iperf3 figure is already goodput; a claimed line rate is not.
    efficiency = ctx.network["tcp"] if source in (CLAIMED, ASSUMED) else 1.0
    return value, source, value * efficiency, "tcp"


def claim_limit(ctx: Context, index: int) -> ClaimLimit:
    """BELOW_CLAIM[index] with its pass and warn ratios (the limits are read once per run)."""
    if ctx.claim_limits is None:
        ctx.claim_limits = claim_limits(ctx.evidence)
    return ctx.claim_limits[index]
