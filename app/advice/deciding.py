"""Rank offers in columns: each check decides once per distinct combination of what it reads (its
offer_table columns), and numpy gathers every offer's verdicts, scores and place in the order.

The checks themselves, and how one offer is explained, are in app.advice.ranking; app.advice.ranked holds
the result. Both paths run the same check functions, so they cannot disagree unless a check reads
something its columns do not name (the equivalence tests run every check on every offer to catch that).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from functools import partial

import numpy as np

from app.advice.facts import OfferFacts
from app.advice.offer_table import OfferTable, combine
from app.advice.ranked import Decided, Decisions, Ranking, cost_value
from app.advice.ranking.assessment import Assessment, Context, Part
from app.advice.ranking.figures import CRITERION_FIGURES
from app.advice.ranking.registry import CONSTRAINT_SPECS, CRITERIA, CRITERION_SPECS
from app.advice.ranking.run import clamped, context, verdict
from app.advice.requirements import Needs
from benchmarks.gc_pause import without_gc

Decider = tuple[str, Part]


def rank_offers(offers: Sequence[OfferFacts] | OfferTable, needs: Needs, *, today: date) -> Ranking:
    """Decide every offer; eligible ones first by score, then the excluded ones (fewest reasons first)."""
    table = offers if isinstance(offers, OfferTable) else OfferTable(offers)
    with without_gc():
        return _rank(table.prepare(columns_read()), context(needs, today))


def columns_read() -> list[str]:
    """Every offer_table column a constraint or criterion reads."""
    names = [column for _name, part in deciders() for column in part.columns]
    for spec in CRITERION_SPECS.values():
        names.extend(spec.table_columns)
    return list(dict.fromkeys(names))


def deciders() -> list[Decider]:
    """(constraint, part) in order; a constraint decided by parts gives one each, the others one part."""
    out: list[Decider] = []
    for name, spec in CONSTRAINT_SPECS.items():
        if spec.parts is not None:
            out.extend((name, part) for part in spec.parts())
        else:
            out.append((name, Part(spec.table_columns, partial(verdict, name), spec.rows)))
    return out


def decide(table: OfferTable, ctx: Context) -> Decisions:
    """Every constraint's verdict on every offer, one check run per distinct combination of its columns."""
    decisions = Decisions(table.size)
    offers = table.offers
    for name, (columns, outcome_of, rows) in deciders():
        if rows is not None:  # the check's column form
            decisions.add_rows(rows(table, ctx))
            continue
        codes, first = combine([table.column(column) for column in columns], table.size)
        outcomes = [outcome_of(offers[row], ctx) for row in first.tolist()]
        decisions.add(name, Decided(codes, outcomes))
    return decisions


def _rank(table: OfferTable, ctx: Context) -> Ranking:
    decisions = decide(table, ctx)
    eligible = np.flatnonzero(decisions.excluded == 0)
    cost = decisions.numbers("cost", cost_value)
    priced = cost[eligible]
    priced = priced[~np.isnan(priced)]
    ctx.cheapest = float(priced.min()) if len(priced) else None
    scores = scores_of(table, ctx, decisions, eligible)
    cost_order = np.where(np.isnan(cost), np.inf, cost)
    best_first = eligible[np.lexsort((table.ids[eligible], cost_order[eligible], -scores))]
    excluded = np.flatnonzero(decisions.excluded)
    fewest_first = excluded[np.lexsort((table.ids[excluded], decisions.excluded[excluded]))]
    return Ranking(table, ctx, decisions, np.concatenate([best_first, fewest_first]), len(eligible))


def scores_of(table: OfferTable, ctx: Context, decisions: Decisions, rows: np.ndarray) -> np.ndarray:
    """The score of each offer in `rows` (eligible ones), worked out as ranking.score does for one."""
    weights = ctx.weights
    total = sum(weights.values())
    if not total or not len(rows):
        return np.zeros(len(rows))
    stale, stale_bits = decisions.stale[rows], decisions.stale_bits
    stale_factor = float(ctx.evidence["stale_factor"])
    points = np.zeros(len(rows))
    for name, weight in weights.items():
        values = _criterion(name, table, ctx, decisions, rows)
        figures = stale_bits.mask(CRITERION_FIGURES.get(name, ()))
        if figures:
            values = np.where(stale & figures, values * stale_factor, values)
        points = points + weight * values
    raw = points / total * 100 * decisions.penalty[rows]
    return np.array([round(value, 1) for value in raw.tolist()])


def _criterion(
    name: str, table: OfferTable, ctx: Context, decisions: Decisions, rows: np.ndarray
) -> np.ndarray:
    """One criterion's score of each offer in `rows`, worked out once per distinct key."""
    spec = CRITERION_SPECS[name]
    columns = [table.column(column) for column in spec.table_columns]
    columns += [
        (decisions.verdicts[after].codes, len(decisions.verdicts[after].outcomes)) for after in spec.after
    ]
    codes, first = combine([(column[rows], distinct) for column, distinct in columns], len(rows))
    scored = [
        clamped(CRITERIA[name](_representative(table, decisions, spec.after, row), ctx))
        for row in rows[first].tolist()
    ]
    return np.array(scored, dtype=float)[codes]


def _representative(table: OfferTable, decisions: Decisions, after: tuple[str, ...], row: int) -> Assessment:
    """A blank assessment of one offer with the values the constraints in `after` set on it."""
    a = Assessment(table.offers[row])
    for name in after:
        codes, outcomes = decisions.verdicts[name]
        for attr, value in outcomes[codes[row]].values:
            setattr(a, attr, value)
    return a
