"""A provider read from an import file, and the CSV rows it was read from."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from app.core.errors import FieldError
from app.registry import import_plan
from app.registry.providers import PROVIDER_FIELDS
from app.registry.transfer.columns import NUMBERED, NUMBERED_COLUMN, OFFER_COLUMNS
from app.registry.transfer.report import ImportProblem

Locator = Callable[[str], tuple[int, str]]


@dataclass
class Candidate:
    """One provider read from the file, with a way to point its field errors back to the file."""

    row: int
    data: dict[str, Any]
    locate: Locator
    record_id: Any = None  # the file's provider id, if any (checked by _record_id)
    group: CsvGroup | None = None  # the CSV rows it was read from
    given: import_plan.Given | None = None  # what the file gives (None: the keys of the JSON object)

    def given_fields(self) -> import_plan.Given:
        """Which provider fields and which nested fields the file gives (the rest keep stored values)."""
        if self.given is not None:
            return self.given
        given: import_plan.Given = {"": {name for name in PROVIDER_FIELDS if name in self.data}}
        for collection in import_plan.CHILD_FIELDS:
            if collection in self.data:
                given[collection] = None
        return given

    @property
    def name(self) -> str:
        """The legal name as given (for the report)."""
        return str(self.data.get("legal_name") or "")

    @property
    def uscc(self) -> str | None:
        """The credit code as the model will store it."""
        value = self.data.get("uscc")
        if not isinstance(value, str):
            return None
        return "".join(value.split()).upper() or None

    def problems(self, errors: Iterable[FieldError]) -> list[ImportProblem]:
        """Translate service field errors into problems at this candidate's rows."""
        result = []
        for error in errors:
            row, where = self.locate(error.field)
            result.append(ImportProblem(row, where, error.message))
        return result


_CHILD_PATH = re.compile(r"^(licences|filings|certifications|datacenters|offers)\[(\d+)\](?:\.(.+))?$")


@dataclass
class CsvGroup:
    """Rows of one provider in a CSV file."""

    first_row: int
    level: dict[str, Any] = field(default_factory=dict)
    level_rows: dict[str, int] = field(default_factory=dict)
    datacenters: dict[str, dict[str, Any]] = field(default_factory=dict)
    datacenter_rows: dict[str, int] = field(default_factory=dict)
    offers: list[dict[str, Any]] = field(default_factory=list)
    offer_rows: list[int] = field(default_factory=list)
    numbers: dict[str, list[int]] = field(default_factory=dict)
    # Provider-level columns whose rows disagree: every distinct value with the first row holding it.
    variants: dict[str, dict[Any, int]] = field(default_factory=dict)
    datacenter_variants: dict[tuple[str, str], dict[Any, int]] = field(default_factory=dict)

    @property
    def uscc(self) -> str | None:
        """The group's credit code, normalised like the model does."""
        value = self.level.get("uscc")
        return "".join(value.split()).upper() if isinstance(value, str) else None

    @property
    def name(self) -> str | None:
        """The group's legal name."""
        return self.level.get("legal_name")

    def to_data(self) -> dict[str, Any]:
        """The group as a ProviderCreate-shaped dict."""
        data: dict[str, Any] = {
            name: self.level[name] for name in PROVIDER_FIELDS if self.level.get(name) is not None
        }
        for collection, (prefix, fields) in NUMBERED.items():
            present = sorted(
                {
                    int(match.group(2))
                    for column, value in self.level.items()
                    if value is not None
                    and (match := NUMBERED_COLUMN.match(column))
                    and match.group(1) == prefix
                }
            )
            self.numbers[collection] = present
            data[collection] = [
                {
                    name: self.level[f"{prefix}_{number}_{name}"]
                    for name in fields
                    if self.level.get(f"{prefix}_{number}_{name}") is not None
                }
                for number in present
            ]
        data["datacenters"] = list(self.datacenters.values())
        data["offers"] = self.offers
        return data

    def locate(self, path: str) -> tuple[int, str]:
        """Row and column of a service field path such as offers[2].gpus_per_node."""
        match = _CHILD_PATH.match(path)
        if not match:
            return self.level_rows.get(path, self.first_row), path
        collection, index, rest = match.group(1), int(match.group(2)), match.group(3) or ""
        if collection == "offers" and index < len(self.offer_rows):
            if rest == "datacenter_name":
                return self.offer_rows[index], "datacenter_name"
            return self.offer_rows[index], {v: k for k, v in OFFER_COLUMNS.items()}.get(rest, rest)
        if collection == "datacenters":
            names = list(self.datacenters)
            if index < len(names):
                column = f"datacenter_{rest}" if rest else "datacenter_name"
                return self.datacenter_rows[names[index]], column
        if collection in NUMBERED:
            numbers = self.numbers.get(collection) or []
            if index < len(numbers):
                column = f"{NUMBERED[collection][0]}_{numbers[index]}_{rest}".rstrip("_")
                return self.level_rows.get(column, self.first_row), column
        return self.first_row, path
