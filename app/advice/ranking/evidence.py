"""Measured evidence: stale measurements and figures far below the claim lower the score."""

from __future__ import annotations

from functools import partial

import numpy as np

from app.advice.facts import CLAIMED, MEASURED, VERIFIED
from app.advice.offer_table import SOURCE_CODES, OfferTable, combine
from app.advice.ranking.assessment import Assessment, Context, Outcome, Part, RowVerdict
from app.advice.ranking.claims import claim_limit, intranet_contradiction, intranet_contradiction_rows
from app.advice.ranking.figures import BELOW_CLAIM, CLAIM_COLUMNS, CONTRADICTION_COLUMNS
from app.advice.ranking.registry import constraint
from app.advice.ranking.texts import below_claim_texts, contradicted_texts, stale_texts
from app.advice.reasons import Reason
from benchmarks.compare import Verdict, ratio_verdict

EVIDENCE_SETS = ("stale", "penalty")


def _evidence_parts() -> list[Part]:
    """Staleness on the measuring days, and each figure's measurement against its claim."""
    parts: list[Part] = [Part(("m:days",), partial(Outcome.record, _stale, sets=EVIDENCE_SETS))]
    for index, (key, _claim, _kind) in enumerate(BELOW_CLAIM):
        check = partial(_below_claim, index=index)
        columns = (*CLAIM_COLUMNS[key], f"m:{key}")
        outcome_of = partial(Outcome.record, check, sets=EVIDENCE_SETS)
        parts.append(Part(columns, outcome_of, partial(_below_claim_rows, index=index)))
    contradicted = partial(Outcome.record, _rdma_contradicted, sets=EVIDENCE_SETS)
    parts.append(Part(CONTRADICTION_COLUMNS, contradicted, _rdma_contradicted_rows))
    return parts


@constraint(
    "evidence",
    columns=tuple(dict.fromkeys(column for columns in CLAIM_COLUMNS.values() for column in columns)),
    measures=("days", *CLAIM_COLUMNS),
    sets=EVIDENCE_SETS,
    measured_only=True,
    parts=_evidence_parts,
)
def _evidence(a: Assessment, ctx: Context) -> None:
    if not a.offer.measurements:
        return
    _stale(a, ctx)
    for index in range(len(BELOW_CLAIM)):
        _below_claim(a, ctx, index=index)
    _rdma_contradicted(a, ctx)


def _rdma_contradicted(a: Assessment, ctx: Context) -> None:
    """Mark a claimed RDMA figure that a failed intranet measurement contradicts: measure RDMA first."""
    ratio = intranet_contradiction(a.offer, ctx)
    if ratio is None:
        return
    measured = a.offer.measurements["intranet_gbps"]
    args = (a.offer.rdma_gbps, measured.value, a.offer.intranet_gbps, ratio)
    reason = Reason("evidence.rdma_contradicted", contradicted_texts, None, CLAIMED, measured.link, args)
    a.measure_first("rdma_gbps", reason)


def _rdma_contradicted_rows(table: OfferTable, ctx: Context) -> RowVerdict:
    """_rdma_contradicted for every offer: the offers to measure RDMA on before signing."""
    return RowVerdict(verify=(("rdma_gbps", intranet_contradiction_rows(table, ctx)),))


def _stale(a: Assessment, ctx: Context) -> None:
    """Mark measurements older than the configured age (they weigh less in the score)."""
    measurements = a.offer.measurements
    before = ctx.stale_before
    stale = frozenset(k for k, m in measurements.items() if m.at is not None and m.at.date() < before)
    if stale:
        a.stale = stale
        days = ctx.evidence["stale_after_days"]
        oldest = min(measurements[key].at for key in stale)  # type: ignore[type-var]
        a.note(Reason("evidence.stale", stale_texts, None, MEASURED, args=(sorted(stale), oldest, days)))


def _below_claim(a: Assessment, ctx: Context, *, index: int) -> None:
    """Lower the score when the measured figure BELOW_CLAIM[index] is far below the claim."""
    key, claim_of, pass_at, warn_at = claim_limit(ctx, index)
    measured = a.offer.measurements.get(key) if a.offer.measurements else None
    if measured is None:
        return
    claimed = claim_of(a.offer)
    if not claimed or measured.source not in (MEASURED, VERIFIED):
        return
    ratio = float(measured.value) / float(claimed)
    if ratio >= pass_at:  # as ratio_verdict: passed
        return
    verdict = ratio_verdict(ratio, pass_at, warn_at).value
    a.penalty *= float(ctx.evidence["below_claim_factor"][verdict])
    a.note(
        Reason(
            f"evidence.below_claim.{key}",
            below_claim_texts,
            None,
            measured.source,
            measured.link,
            args=(measured, claimed, ratio, verdict),
        )
    )


def _below_claim_rows(table: OfferTable, ctx: Context, *, index: int) -> RowVerdict:
    """_below_claim for every offer: the score factor of measured figure BELOW_CLAIM[index]."""
    key, claim_of, pass_at, warn_at = claim_limit(ctx, index)
    measured, source = table.measured_figure(key)
    codes, first = combine([table.column(name) for name in CLAIM_COLUMNS[key]], table.size)
    claims = [claim_of(table.offers[row]) for row in first.tolist()]
    claimed = np.array([float(claim) if claim else np.nan for claim in claims], dtype=float)[codes]
    judged = ((source == SOURCE_CODES[MEASURED]) | (source == SOURCE_CODES[VERIFIED])) & ~np.isnan(claimed)
    ratio = np.divide(measured, claimed, out=np.full(table.size, np.nan), where=judged)
    below = judged & ~(ratio >= pass_at)
    factors = ctx.evidence["below_claim_factor"]
    factor = np.where(
        ratio >= warn_at, float(factors[Verdict.warn.value]), float(factors[Verdict.failed.value])
    )
    return RowVerdict(penalty=np.where(below, factor, 1.0))
