"""The outcome of an import: every problem at its row and column, and the plan per provider."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flask_babel import gettext as _

from app.registry.import_plan import UNCHANGED, ProviderPlan


@dataclass(frozen=True)
class ImportProblem:
    """One problem found in an import file: where (row, field) and what is wrong."""

    row: int  # JSON: position in the provider list (1-based); CSV: spreadsheet row (header = 1); 0: the file
    field: str
    message: str

    def __str__(self) -> str:
        where = _("第 %(row)s 行", row=self.row) if self.row else _("整个文件")
        return f"{where}, {self.field or '-'}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        """JSON form for the API and the page."""
        return {"row": self.row, "field": self.field, "message": self.message}


@dataclass
class ImportReport:
    """Outcome of an import: what the file held, what was written and every problem."""

    format: str
    dry_run: bool
    providers: int = 0
    created: int = 0
    names: list[str] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)
    warnings: list[ImportProblem] = field(default_factory=list)  # what the check will flag (no refusal)
    updated: int = 0  # providers changed (written, or to be written when a preview)
    unchanged: int = 0
    new: int = 0  # providers the file adds (created when applied)
    plans: list[ProviderPlan] = field(default_factory=list)  # per provider, in file order
    expected: list[list[int | None]] = field(default_factory=list)  # what apply must find again
    applied: bool = False
    conflict: bool = False  # refused because the registry changed since the preview (or while writing)

    @property
    def ok(self) -> bool:
        """True when the file had no problem (and, unless a dry run, was written)."""
        return not self.problems

    @property
    def changes(self) -> int:
        """Providers the import creates or changes."""
        return self.new + self.updated

    @property
    def shown_plans(self) -> list[ProviderPlan]:
        """The plans worth reading: new and changed providers first, in file order."""
        return [plan for plan in self.plans if plan.action != UNCHANGED]

    omitted: int = 0  # problems left out of a stored report (see as_dict's limit)

    @property
    def problem_total(self) -> int:
        """Every problem found, including those left out of a stored report."""
        return len(self.problems) + self.omitted

    def as_dict(self, limit: int | None = None) -> dict[str, Any]:
        """JSON form of the report; `limit` keeps at most that many names and problems."""
        return {
            "format": self.format,
            "dry_run": self.dry_run,
            "providers": self.providers,
            "created": self.created,
            "names": self.names[:limit],
            "problems": [problem.as_dict() for problem in self.problems[:limit]],
            "warnings": [warning.as_dict() for warning in self.warnings[:limit]],
            "omitted": self.omitted + max(0, len(self.problems) - (limit or len(self.problems))),
            "updated": self.updated,
            "unchanged": self.unchanged,
            "new": self.new,
            "plans": [plan.as_dict() for plan in self.shown_plans[:limit]],
            "expected": self.expected,
            "applied": self.applied,
            "conflict": self.conflict,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImportReport:
        """The report stored by as_dict (e.g. as a background job's result)."""
        return cls(
            format=data["format"],
            dry_run=data["dry_run"],
            providers=data["providers"],
            created=data["created"],
            names=list(data["names"]),
            problems=[ImportProblem(**problem) for problem in data["problems"]],
            warnings=[ImportProblem(**warning) for warning in data.get("warnings", [])],
            omitted=data.get("omitted", 0),
            updated=data.get("updated", 0),
            unchanged=data.get("unchanged", 0),
            new=data.get("new", 0),
            plans=[ProviderPlan.from_dict(plan) for plan in data.get("plans", [])],
            expected=list(data.get("expected", [])),
            applied=data.get("applied", False),
            conflict=data.get("conflict", False),
        )
