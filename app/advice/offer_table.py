"""The offers to rank as columns of small integer codes, so that one advice decides them in numpy.

A column is named after what it reads: an offer attribute ("gpu_model"), a provider attribute
("provider.iso27001"), a measured figure ("m:intranet_gbps": its value and source, -1 code when not
measured) or the days the offer's figures were measured on ("m:days"). Equal values get equal codes, so
offers with equal codes in every column a check reads get the same verdict from it. Columns are built once
per table and reused by every case advised over it. When some providers change, `replacing` carries the
columns over and codes only the changed providers' offers.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from app.advice.facts import (
    ASSUMED,
    CLAIMED,
    ESTIMATED,
    MEASURED,
    UNKNOWN,
    VERIFIED,
    OfferFacts,
    ProviderFacts,
)

Codes = tuple[np.ndarray, int]  # a code per offer and how many distinct values there are
SOURCES = (MEASURED, VERIFIED, CLAIMED, ASSUMED, ESTIMATED, UNKNOWN)  # where a figure came from, as codes
SOURCE_CODES = {source: code for code, source in enumerate(SOURCES)}
_COMPACT_ABOVE = 1 << 40  # combined codes are renumbered before their product could overflow int64
_DIRECT_UP_TO = 1 << 21  # key ranges up to this are numbered through a lookup table instead of a sort


def factorize(values: Iterable[Any]) -> Codes:
    """A code per value (equal values, equal codes, numbered in order of first appearance)."""
    codes, numbers = numbered(values)
    return codes, len(numbers)


def numbered(values: Iterable[Any]) -> tuple[np.ndarray, dict[Any, int]]:
    """As factorize, with the code of each distinct value."""
    values = list(values)
    numbers: dict[Any, Any] = dict.fromkeys(values)
    for number, value in enumerate(numbers):
        numbers[value] = number
    codes = np.fromiter(map(numbers.__getitem__, values), dtype=np.int64, count=len(values))
    return codes, numbers


def combine(columns: Sequence[Codes], size: int) -> tuple[np.ndarray, np.ndarray]:
    """One code per distinct combination of the columns' codes, and the first offer of each combination."""
    key = np.zeros(size, dtype=np.int64)
    count = 1
    for codes, distinct in columns:
        if count * (distinct + 1) > _COMPACT_ABOVE:
            _, key = np.unique(key, return_inverse=True)
            count = int(key.max()) + 1 if size else 1
        key = key * (distinct + 1) + (codes + 1)  # +1: a "not measured" code is -1
        count *= distinct + 1
    if count <= _DIRECT_UP_TO:  # no sort: mark the keys present in a table as long as the key range
        present = np.zeros(count, dtype=bool)
        present[key] = True
        codes = (np.cumsum(present) - 1)[key]
        first = np.full(int(np.count_nonzero(present)), size, dtype=np.int64)
        np.minimum.at(first, codes, np.arange(size))
        return codes, first
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return inverse.reshape(size), first


class OfferTable:
    """Offers, their providers and their columns of codes (built on first use, then kept)."""

    def __init__(self, offers: Sequence[OfferFacts]) -> None:
        self.offers = list(offers)
        self.size = len(self.offers)
        self.ids = np.fromiter((offer.id for offer in self.offers), dtype=np.int64, count=self.size)
        providers = list(map(attrgetter("provider"), self.offers))
        by_id: dict[int, ProviderFacts] = {}
        for provider in providers:
            by_id.setdefault(provider.id, provider)
        self.providers = list(by_id.values())
        self.provider_index, _ = factorize(provider.id for provider in providers)
        per_provider = np.fromiter(
            (provider.id for provider in self.providers), np.int64, len(self.providers)
        )
        self.provider_ids = per_provider[self.provider_index]  # the provider id of every offer
        self.measured = np.fromiter(
            (bool(offer.measurements) for offer in self.offers), dtype=bool, count=self.size
        )
        for array in (self.ids, self.provider_index, self.provider_ids, self.measured):
            _frozen(array)
        self.replaced = 0  # offers coded by `replacing` since the table was built from scratch
        self._columns: dict[str, Codes] = {}
        self._codes: dict[str, dict[Any, int]] = {}  # each column's code of each value it has had
        self._numbers: dict[str, np.ndarray] = {}
        self._figures: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def __len__(self) -> int:
        return self.size

    def column(self, name: str) -> Codes:
        """The codes of one column (see the module note for the names)."""
        found = self._columns.get(name)
        if found is None:
            found = self._columns[name] = self._build(name)
        return found

    def prepare(self, names: Iterable[str]) -> OfferTable:
        """Build the named columns now, each kind in one pass over the offers (before timing, or while the
        registry is read)."""
        missing = [name for name in dict.fromkeys(names) if name not in self._columns]
        offer_names = [name for name in missing if ":" not in name and not name.startswith("provider.")]
        if offer_names:
            rows = list(map(attrgetter(*offer_names), self.offers)) if self.size else []
            columns = zip(*rows, strict=True) if len(offer_names) > 1 else [rows]
            for name, values in zip(offer_names, columns, strict=False):
                self._store(name, *numbered(values))
        measured = [name for name in missing if name.startswith("m:")]
        if measured:
            self._measured_columns(measured)
        for name in missing:
            self.column(name)
        return self

    def replacing(self, provider_ids: Collection[int], fresh: Sequence[OfferFacts]) -> OfferTable:
        """A new table: these providers' offers replaced by `fresh` (their offers as read now, none for a
        deleted provider), in provider then id order. Columns, numbers and measured figures built here are
        carried over; only the fresh offers are coded. This table is left as it was."""
        gone = np.isin(self.provider_ids, np.fromiter(provider_ids, np.int64, len(provider_ids)))
        extra = OfferTable(fresh)
        rows = np.flatnonzero(gone)
        table = OfferTable.__new__(OfferTable)
        edited = np.array_equal(self.ids[rows], extra.ids)  # no offer added, moved or removed
        if edited and np.array_equal(self.provider_ids[rows], extra.provider_ids):
            merged = self._edited_into(table, rows, extra)
        else:
            merged = self._merged_into(table, np.flatnonzero(~gone), extra)
        table.size = len(table.offers)
        table.ids, table.measured = merged(self.ids, extra.ids), merged(self.measured, extra.measured)
        table.replaced = self.replaced + len(extra.offers)
        self._carry_over(table, extra, merged)
        return table

    def _edited_into(self, table: OfferTable, rows: np.ndarray, extra: OfferTable) -> Merge:
        """`table`'s offers and providers: the fresh offers written over the same offers at `rows`."""
        table.offers = list(self.offers)
        for row, offer in zip(rows.tolist(), extra.offers, strict=True):
            table.offers[row] = offer
        table.providers = list(self.providers)
        for code, offer in zip(self.provider_index[rows].tolist(), extra.offers, strict=True):
            table.providers[code] = offer.provider
        table.provider_index, table.provider_ids = self.provider_index, self.provider_ids
        return _put_at(rows)

    def _merged_into(self, table: OfferTable, kept: np.ndarray, extra: OfferTable) -> Merge:
        """`table`'s offers and providers: the `kept` rows and the fresh offers, in provider then id order."""
        merged = _merge_in_order(kept, self.ids, self.provider_ids, extra)
        offers = [self.offers[row] for row in kept.tolist()] + extra.offers
        place = np.zeros(self.size, np.int64)
        place[kept] = np.arange(len(kept))  # where each kept offer stands in `offers`
        table.offers = [offers[row] for row in merged(place, np.arange(len(kept), len(offers))).tolist()]
        kept_providers = set(self.provider_ids[kept].tolist())
        providers = [p for p in self.providers if p.id in kept_providers] + extra.providers
        table.providers = sorted(providers, key=attrgetter("id"))  # in order of first appearance
        table.provider_ids = merged(self.provider_ids, extra.provider_ids)
        positions = {provider.id: index for index, provider in enumerate(table.providers)}
        found = map(positions.__getitem__, table.provider_ids.tolist())
        table.provider_index = _frozen(np.fromiter(found, np.int64, len(table.offers)))
        return merged

    def _carry_over(self, table: OfferTable, extra: OfferTable, merged: Merge) -> None:
        """This table's columns, numbers and measured figures into `table`, the fresh offers' rows added."""
        table._columns, table._codes = {}, {}
        # list(): a copy taken at once, as another request may build a column of this table meanwhile
        for name, (codes, _distinct) in list(self._columns.items()):
            values = [_row_value(name, offer) for offer in extra.offers]
            numbers = self._codes[name]
            if any(value not in numbers for value in values if value is not NOT_MEASURED):
                numbers = dict(numbers)  # a new value: this table's own copy
            added = np.fromiter((_code(numbers, value) for value in values), np.int64, len(values))
            table._store(name, merged(codes, added), numbers)
        table._numbers = {
            name: merged(found, extra.numbers(name)) for name, found in list(self._numbers.items())
        }
        table._figures = {}
        for key, (values, sources) in list(self._figures.items()):
            new_values, new_sources = extra.measured_figure(key)
            table._figures[key] = (merged(values, new_values), merged(sources, new_sources))

    def numbers(self, name: str) -> np.ndarray:
        """An offer column's numbers for every offer (NaN where there is none), kept."""
        found = self._numbers.get(name)
        if found is None:
            found = self._numbers[name] = _frozen(self.per_row(name, _number))
        return found

    def measured_figure(self, key: str) -> tuple[np.ndarray, np.ndarray]:
        """(value, source code in SOURCES) of a measured number for every offer (NaN, -1: not measured)."""
        found = self._figures.get(key)
        if found is None:
            rows = np.flatnonzero(self.measured)
            values, sources = np.full(self.size, np.nan), np.full(self.size, -1, dtype=np.int64)
            figures = [self.offers[row].measurements.get(key) for row in rows.tolist()]
            values[rows] = [np.nan if m is None else float(m.value) for m in figures]
            sources[rows] = [-1 if m is None else SOURCE_CODES[m.source] for m in figures]
            found = self._figures[key] = (_frozen(values), _frozen(sources))
        return found

    def per_row(self, name: str, convert: Callable[[Any], Any], dtype: Any = float) -> np.ndarray:
        """`convert(value)` of one column for every offer, worked out once per distinct value (a measured
        column's value is (value, source), or None)."""
        codes, distinct = self.column(name)
        first = np.full(distinct + 1, self.size, dtype=np.int64)  # +1: the "not measured" code -1
        np.minimum.at(first, codes + 1, np.arange(self.size))
        values = [convert(self._value(name, row)) if row < self.size else None for row in first.tolist()]
        if dtype is float:
            values = [np.nan if value is None else value for value in values]
        return np.asarray(values, dtype=dtype)[codes + 1]

    def _value(self, name: str, row: int) -> Any:
        """One offer's value of a column (None for a measured column of an offer never measured)."""
        value = _row_value(name, self.offers[row])
        return None if value is NOT_MEASURED else value

    def _store(self, name: str, codes: np.ndarray, numbers: dict[Any, int]) -> Codes:
        """Keep a column's codes and the code of each value (for `replacing`)."""
        self._codes[name] = numbers
        found = self._columns[name] = (_frozen(codes), len(numbers))
        return found

    def _build(self, name: str) -> Codes:
        if name.startswith("provider."):
            per_provider, numbers = numbered(map(attrgetter(name[len("provider.") :]), self.providers))
            return self._store(name, per_provider[self.provider_index], numbers)
        if name.startswith("m:"):
            self._measured_columns([name])
            return self._columns[name]
        return self._store(name, *numbered(map(attrgetter(name), self.offers)))

    def _measured_columns(self, names: list[str]) -> None:
        """Columns of measured values, read in one pass over the measured offers (-1: no measurements)."""
        rows = np.flatnonzero(self.measured).tolist()
        wanted = {name[2:]: index for index, name in enumerate(names)}
        days = wanted.pop("days", None)
        found: list[list[Any]] = [[None] * len(rows) for _ in names]
        for position, row in enumerate(rows):
            measurements = self.offers[row].measurements
            for key, measured in measurements.items():
                index = wanted.get(key)
                if index is not None:
                    found[index][position] = (measured.value, measured.source)
            if days is not None:  # when each figure was measured (equal times, equal days)
                found[days][position] = _days(measurements)
        for name, values in zip(names, found, strict=True):
            codes = np.full(self.size, -1, dtype=np.int64)
            measured_codes, numbers = numbered(values)
            codes[rows] = measured_codes
            self._store(name, codes, numbers)


Merge = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (a column of the old table, of the fresh offers)


def _put_at(rows: np.ndarray) -> Merge:
    """The fresh offers' values written over the old ones at `rows` (the same offers, edited)."""

    def merged(old: np.ndarray, new: np.ndarray) -> np.ndarray:
        if np.array_equal(old[rows], new, equal_nan=old.dtype.kind == "f"):
            return old  # unchanged by the edit: shared (no table writes into its arrays)
        out = old.copy()
        out[rows] = new
        return _frozen(out)

    return merged


def _merge_in_order(kept: np.ndarray, ids: np.ndarray, provider_ids: np.ndarray, extra: OfferTable) -> Merge:
    """The old table's `kept` rows and the fresh offers' rows together, in provider then id order."""
    order = np.lexsort(
        (np.concatenate([ids[kept], extra.ids]), np.concatenate([provider_ids[kept], extra.provider_ids]))
    )

    def merged(old: np.ndarray, new: np.ndarray) -> np.ndarray:
        return _frozen(np.concatenate([old[kept], new])[order])

    return merged


def _measured(measurements: dict[str, Any], key: str) -> tuple[Any, str] | None:
    """A measured column's value: the figure's value and source, or None."""
    measured = measurements.get(key)
    return (measured.value, measured.source) if measured is not None else None


def _days(measurements: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The "m:days" column's value: when each figure was measured."""
    return tuple((key, measured.at) for key, measured in measurements.items())


NOT_MEASURED: Any = object()  # a measured column's value for an offer without measurements (code -1)


def _row_value(name: str, offer: OfferFacts) -> Any:
    """One offer's value of a column, as the column was coded."""
    if not name.startswith("m:"):
        return attrgetter(name)(offer)
    if not offer.measurements:
        return NOT_MEASURED
    return _days(offer.measurements) if name == "m:days" else _measured(offer.measurements, name[2:])


def _code(numbers: dict[Any, int], value: Any) -> int:
    """The code of a value in a column, a new one for a value the column has not had."""
    if value is NOT_MEASURED:
        return -1
    return numbers.setdefault(value, len(numbers))


def _frozen(array: np.ndarray) -> np.ndarray:
    """The array made read-only: tables share the arrays an edit left alone."""
    array.setflags(write=False)
    return array


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
