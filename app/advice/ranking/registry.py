"""The registries of constraints and criteria: a new check is a decorated function naming its columns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, NamedTuple

from app.advice.facts import OfferFacts
from app.advice.ranking.assessment import Assessment, Constraint, Context, Outcome, Part, Rows

OfferKey = Callable[[OfferFacts], Any]


Scorer = Callable[[Assessment, Context], float]


CONSTRAINTS: dict[str, Constraint] = {}


CRITERIA: dict[str, Scorer] = {}


@dataclass(frozen=True, slots=True)
class ConstraintSpec:
    """What a constraint's verdict depends on (offer_table column names), what it sets, when it applies."""

    columns: tuple[str, ...] = ()  # offer and provider attributes it reads
    measures: tuple[str, ...] = ()  # measured figures it reads ("days": when the figures were measured)
    sets: tuple[str, ...] = ()
    measured_only: bool = False  # adds nothing to an offer without measurements
    outcome_of: Callable[[OfferFacts, Context], Outcome] | None = None  # its verdict, without an Assessment
    parts: Callable[[], list[Part]] | None = None  # decided part by part, each on its own columns
    rows: Rows | None = None  # the column form of the check (RowVerdict)

    @property
    def key(self) -> OfferKey | None:
        """The offer's values of `columns` (offers with equal keys and no measurements share a verdict)."""
        return attrgetter(*self.columns) if self.columns else None

    @property
    def reads_measurements(self) -> bool:
        """Whether measured figures change the verdict."""
        return bool(self.measures)

    @property
    def table_columns(self) -> tuple[str, ...]:
        """Every offer_table column the verdict depends on."""
        return (*self.columns, *(f"m:{key}" for key in self.measures))


CONSTRAINT_SPECS: dict[str, ConstraintSpec] = {}


# A constraint's verdict depends on nothing but the offer's `columns` and `measures` (and the case): the
# ranking works it out once per distinct combination and shares it, the attributes named in `sets`
# included. Declaring fewer columns than the check reads makes offers share a wrong verdict; the
# equivalence tests (every check run on every offer) catch that.
def constraint(
    name: str,
    *,
    columns: tuple[str, ...] = (),
    measures: tuple[str, ...] = (),
    sets: tuple[str, ...] = (),
    measured_only: bool = False,
    outcome_of: Callable[[OfferFacts, Context], Outcome] | None = None,
    parts: Callable[[], list[Part]] | None = None,
    rows: Rows | None = None,
) -> Callable[[Constraint], Constraint]:
    """Register a hard constraint; it calls assessment.exclude() / .mark() (see the note above)."""

    def decorator(check: Constraint) -> Constraint:
        if name in CONSTRAINTS:
            raise ValueError(f"constraint {name!r} is registered twice")
        CONSTRAINTS[name] = check
        spec = ConstraintSpec(columns, measures, sets, measured_only, outcome_of, parts, rows)
        CONSTRAINT_SPECS[name] = spec
        return check

    return decorator


class CriterionSpec(NamedTuple):
    """What a criterion's score depends on: columns and measures as for constraints, and the constraints
    whose `sets` values it reads (e.g. the cost the budget constraint worked out)."""

    columns: tuple[str, ...] = ()
    measures: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    @property
    def table_columns(self) -> tuple[str, ...]:
        """Every offer_table column the score depends on (besides the constraints in `after`)."""
        return (*self.columns, *(f"m:{key}" for key in self.measures))


CRITERION_SPECS: dict[str, CriterionSpec] = {}


def criterion(
    name: str,
    *,
    columns: tuple[str, ...] = (),
    measures: tuple[str, ...] = (),
    after: tuple[str, ...] = (),
) -> Callable[[Scorer], Scorer]:
    """Register a scored criterion returning its score (0-1), with what its score depends on."""

    def decorator(check: Scorer) -> Scorer:
        if name in CRITERIA:
            raise ValueError(f"criterion {name!r} is registered twice")
        CRITERIA[name] = check
        CRITERION_SPECS[name] = CriterionSpec(columns, measures, after)
        return check

    return decorator
