"""The ranking of one case: every offer in rank order, each assessment written only when somebody reads it.

The decisions (how many reasons exclude each offer, what it leaves to confirm or measure, its cost and
place) are columns worked out by app.advice.deciding; the counts and picks the advice reports come from
them, so an advice over 50,000 offers writes assessments for the few dozen it shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, overload

import numpy as np

from app.advice.cities import City
from app.advice.offer_table import OfferTable
from app.advice.ranking.assessment import Assessment, Context, Outcome, RowVerdict
from app.advice.ranking.figures import VERIFY_ITEMS
from app.advice.ranking.registry import CONSTRAINT_SPECS
from app.advice.ranking.run import assess, score
from benchmarks.gc_pause import without_gc


class KeyBits:
    """A bit per key (confirm, verify or stale figure keys), so that an offer's set of keys is one int."""

    def __init__(self) -> None:
        self.bits: dict[str, int] = {}

    def mask(self, keys: Iterable[str]) -> int:
        """The bits of `keys` (new keys get the next bit)."""
        mask = 0
        for key in keys:
            bit = self.bits.get(key)
            if bit is None:
                bit = self.bits[key] = len(self.bits)
            mask |= 1 << bit
        return mask


class Decided(NamedTuple):
    """One check's verdicts: a code per offer (table row) and the outcome of each code."""

    codes: np.ndarray
    outcomes: list[Outcome]


@dataclass
class Decisions:
    """Per offer (table row): the reasons that exclude it and what it leaves to confirm or measure."""

    size: int
    excluded: np.ndarray = field(init=False)  # how many reasons exclude the offer
    licence: np.ndarray = field(init=False)  # whether one of them is about the licence
    confirm: np.ndarray = field(init=False)  # bits (confirm_bits) of facts to confirm with the provider
    verify: np.ndarray = field(init=False)  # bits (verify_bits) of figures to measure before signing
    stale: np.ndarray = field(init=False)  # bits (stale_bits) of measured figures older than allowed
    penalty: np.ndarray = field(init=False)  # score factor for measurements far below the claim
    confirm_bits: KeyBits = field(default_factory=KeyBits)
    verify_bits: KeyBits = field(default_factory=KeyBits)
    stale_bits: KeyBits = field(default_factory=KeyBits)
    verdicts: dict[str, Decided] = field(default_factory=dict)  # per constraint, for the values it sets

    def __post_init__(self) -> None:
        self.excluded = np.zeros(self.size, dtype=np.int64)
        self.licence = np.zeros(self.size, dtype=bool)
        self.confirm = np.zeros(self.size, dtype=np.int64)
        self.verify = np.zeros(self.size, dtype=np.int64)
        self.stale = np.zeros(self.size, dtype=np.int64)
        self.penalty = np.ones(self.size)

    def add(self, name: str, decided: Decided) -> None:
        """Add one check's verdicts to every offer."""
        self.verdicts[name] = decided
        codes, outcomes = decided
        _gather(self.excluded, np.add, [len(o.excluded) for o in outcomes], codes)
        licence = [any(reason.code.startswith("licence.") for reason in o.excluded) for o in outcomes]
        _gather(self.licence, np.logical_or, licence, codes)
        _gather(self.confirm, np.bitwise_or, [self.confirm_bits.mask(o.confirm) for o in outcomes], codes)
        _gather(self.verify, np.bitwise_or, [self.verify_bits.mask(o.verify) for o in outcomes], codes)
        values = [dict(o.values) for o in outcomes]
        if any("stale" in found for found in values):
            stale = [self.stale_bits.mask(found.get("stale", ())) for found in values]
            _gather(self.stale, np.bitwise_or, stale, codes)
        if any("penalty" in found for found in values):
            penalty = [float(found.get("penalty", 1.0)) for found in values]
            np.multiply(self.penalty, np.asarray(penalty)[codes], out=self.penalty)

    def add_rows(self, verdict: RowVerdict) -> None:
        """Add one check's column-form verdict to every offer."""
        if verdict.excluded is not None:
            self.excluded += verdict.excluded
        for masks, bits, found in (
            (self.confirm, self.confirm_bits, verdict.confirm),
            (self.verify, self.verify_bits, verdict.verify),
        ):
            for key, offers in found:
                masks |= np.where(offers, bits.mask((key,)), 0)
        if verdict.penalty is not None:
            self.penalty *= verdict.penalty
        if verdict.licence is not None:
            self.licence |= verdict.licence

    def values(self, attr: str) -> tuple[np.ndarray, list[Any]]:
        """(code per offer, value per code) of `attr` as the (last) constraint setting it gave it."""
        setters = [name for name, spec in CONSTRAINT_SPECS.items() if attr in spec.sets and not spec.parts]
        if not setters or setters[-1] not in self.verdicts:
            return np.zeros(self.size, dtype=np.int64), [None]
        codes, outcomes = self.verdicts[setters[-1]]
        return codes, [dict(o.values).get(attr) for o in outcomes]

    def numbers(self, attr: str, number: Any) -> np.ndarray:
        """Per offer, `number(value)` of `attr` (NaN where it gives None)."""
        codes, per_code = self.values(attr)
        found = [None if value is None else number(value) for value in per_code]
        return np.array([np.nan if value is None else value for value in found], dtype=float)[codes]


def cost_value(cost: Any) -> float | None:
    """A monthly cost's value when it is known and not zero (what the ranking compares)."""
    return cost.value if cost is not None and cost.value else None


def _gather(target: np.ndarray, combine: Any, per_code: list[Any], codes: np.ndarray) -> None:
    """Combine (in place) each offer's value of `target` with the value of its code, when any is set."""
    if any(per_code):
        combine(target, np.asarray(per_code, dtype=target.dtype)[codes], out=target)


CHUNK = 2000  # assessments written at a time when a whole ranking is read


class RankSlice(Sequence[Assessment]):
    """The eligible or the excluded offers of a ranking, in rank order."""

    def __init__(self, ranking: Ranking, start: int, stop: int) -> None:
        self.ranking, self.start, self.stop = ranking, start, stop

    def __len__(self) -> int:
        return self.stop - self.start

    @overload
    def __getitem__(self, index: int) -> Assessment: ...
    @overload
    def __getitem__(self, index: slice) -> list[Assessment]: ...
    def __getitem__(self, index: int | slice) -> Assessment | list[Assessment]:
        if isinstance(index, slice):
            return self.ranking.assessments(range(*index.indices(len(self))), self.start)
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self.ranking.at(self.start + index)

    def __iter__(self) -> Iterator[Assessment]:
        for first in range(self.start, self.stop, CHUNK):
            yield from self.ranking.assessments(range(first, min(first + CHUNK, self.stop)))


class Ranking(RankSlice):
    """Every offer in rank order: the eligible ones by score, then the excluded ones."""

    def __init__(
        self, table: OfferTable, ctx: Context, decisions: Decisions, order: np.ndarray, eligible_count: int
    ) -> None:
        super().__init__(self, 0, table.size)
        self.table, self.ctx, self.decisions, self.order = table, ctx, decisions, order
        self.eligible = RankSlice(self, 0, eligible_count)
        self.excluded = RankSlice(self, eligible_count, table.size)
        self._assessed: dict[int, Assessment] = {}
        self._verdicts: dict[str, dict[Any, Outcome]] = {}

    def assessments(self, positions: range, offset: int = 0) -> list[Assessment]:
        """The assessments at `positions` (+ offset), written with the cyclic collector paused (writing
        thousands would otherwise rescan the whole registry's objects many times over)."""
        with without_gc():
            return [self.at(offset + position) for position in positions]

    def at(self, position: int) -> Assessment:
        """The assessment of the offer at `position` (0: the best), written on first read."""
        found = self._assessed.get(position)
        if found is None:
            found = assess(self.table.offers[int(self.order[position])], self.ctx, self._verdicts)
            if position < len(self.eligible):
                score(found, self.ctx)
                found.rank = position + 1
            self._assessed[position] = found
        return found

    @property
    def eligible_rows(self) -> np.ndarray:
        """Table rows of the eligible offers, best first."""
        return self.order[: len(self.eligible)]

    def to_confirm_count(self) -> int:
        """Eligible offers with a fact to confirm with the provider (待确认)."""
        return int(np.count_nonzero(self.decisions.confirm[self.eligible_rows]))

    def licence_excluded_count(self) -> int:
        """Offers excluded (among other reasons or not) by the licence check."""
        return int(np.count_nonzero(self.decisions.licence))

    def confirm_counts(self) -> dict[str, int]:
        """Per unrecorded fact, how many eligible offers must confirm it (in order of first appearance)."""
        return self._counts(self.decisions.confirm, self.decisions.confirm_bits, "confirm")

    def measure_first_counts(self) -> dict[str, int]:
        """Per checklist item, how many eligible offers must be measured on it before signing."""
        counts = self._counts(self.decisions.verify, self.decisions.verify_bits, "verify")
        out: dict[str, int] = {}
        for key, count in counts.items():
            out[VERIFY_ITEMS[key]] = out.get(VERIFY_ITEMS[key], 0) + count
        return out

    def _counts(self, masks: np.ndarray, bits: KeyBits, attr: str) -> dict[str, int]:
        eligible = masks[self.eligible_rows]
        found = []
        for key, bit in bits.bits.items():
            hits = np.flatnonzero(eligible & (1 << bit))
            if len(hits):
                found.append((int(hits[0]), key, len(hits)))
        found.sort(key=lambda item: (item[0], getattr(self.at(item[0]), attr).index(item[1])))
        return {key: count for _first, key, count in found}

    def cheapest(self) -> Assessment | None:
        """The eligible offer with the lowest known monthly cost (the better ranked one of equals)."""
        return self._first_lowest(self.decisions.numbers("cost", cost_value))

    def nearest(self) -> Assessment | None:
        """The eligible offer whose farthest user city is nearest (the better ranked one of equals)."""
        return self._first_lowest(
            self.decisions.numbers("user_rtt_ms", lambda rtts: max(rtts.values(), default=None))
        )

    def _first_lowest(self, per_row: np.ndarray) -> Assessment | None:
        values = per_row[self.eligible_rows]
        known = np.flatnonzero(~np.isnan(values))
        if not len(known):
            return None
        return self.at(int(known[np.argmin(values[known])]))

    def cities(self) -> list[City]:
        """The datacenter cities of every offer, each once, in order of first appearance in the ranking."""
        codes, cities = self.decisions.values("city")
        first = np.full(len(cities), self.table.size, dtype=np.int64)
        np.minimum.at(first, codes[self.order], np.arange(self.table.size))
        seen: dict[str, City] = {}
        for code in np.argsort(first, kind="stable").tolist():
            city = cities[code]
            if city is not None and first[code] < self.table.size and city.name not in seen:
                seen[city.name] = city
        return list(seen.values())

    def eligible_provider_ids(self) -> set[int]:
        """The providers with at least one eligible offer."""
        codes = np.unique(self.table.provider_index[self.eligible_rows])
        return {self.table.providers[code].id for code in codes.tolist()}

    def of_provider(self, provider_id: int) -> list[Assessment]:
        """The offers of one provider, in rank order."""
        code = next((i for i, p in enumerate(self.table.providers) if p.id == provider_id), None)
        if code is None:
            return []
        positions = np.flatnonzero(self.table.provider_index[self.order] == code)
        return [self.at(position) for position in positions.tolist()]
