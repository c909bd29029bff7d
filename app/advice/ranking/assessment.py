"""One offer's assessment and its explanation, the per-run context, and what one check adds to an offer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, NamedTuple

import numpy as np

from app.advice import cities
from app.advice.facts import OfferFacts
from app.advice.licensing import Coverage
from app.advice.offer_table import OfferTable
from app.advice.ranking.figures import CRITERION_FIGURES, FIGURES, ClaimLimit, Figure, best
from app.advice.ranking.texts import cost_texts, stale_reason
from app.advice.reasons import Reason, Texts
from app.advice.requirements import Needs
from app.advice.sizing import MonthlyCost


@dataclass
class CriterionScore:
    """One scored criterion of one offer."""

    key: str
    weight: float
    score: float
    reason: Reason

    def to_dict(self, labels: dict[str, Any]) -> dict[str, Any]:
        """JSON form."""
        return {
            "criterion": self.key,
            "label_zh": labels[self.key]["label_zh"],
            "label_en": labels[self.key]["label_en"],
            "weight": round(self.weight, 2),
            "score": round(self.score, 3),
            "message_zh": self.reason.zh,
            "message_en": self.reason.en,
        }


_NO_RTT: dict[str, float] = {}


NO_KEYS: frozenset[str] = frozenset()


_NO_VERIFY: tuple[str, ...] = ()


# Reasons, marks and keys are tuples, shared between offers where they are the same (most offers add
# nothing to most of them); the criteria are explained only when somebody reads them.
class Assessment:
    """Everything the ranking found out about one offer (a plain slotted class: one is made per distinct
    verdict, and per offer somebody reads)."""

    __slots__ = (
        "_criteria",
        "_ctx",
        "_scores",
        "city",
        "confirm",
        "cost",
        "coverage",
        "effective_gbps",
        "excluded",
        "marks",
        "offer",
        "office_rtt_ms",
        "penalty",
        "rank",
        "rtt_figure",
        "score",
        "stale",
        "sync_s",
        "user_rtt_ms",
        "verify",
    )

    def __init__(self, offer: OfferFacts) -> None:
        self.offer = offer
        self.excluded: tuple[Reason, ...] = ()
        self.marks: tuple[Reason, ...] = ()
        self.cost: MonthlyCost | None = None
        self.coverage: Coverage | None = None
        self.city: cities.City | None = None
        self.office_rtt_ms: float | None = None
        self.user_rtt_ms: dict[str, float] = _NO_RTT  # replaced (never changed in place) by the latency check
        self.rtt_figure: Figure | None = None
        self.effective_gbps: float | None = None
        self.sync_s: float | None = None
        self.score: float | None = None
        self.rank: int | None = None
        self.stale: frozenset[str] = NO_KEYS  # keys of measurements older than the configured age
        self.penalty = 1.0  # score factor for measurements far below the claim
        self.verify: tuple[str, ...] = _NO_VERIFY  # figure keys to measure before signing
        self.confirm: tuple[str, ...] = _NO_VERIFY  # unrecorded facts to confirm with the provider (待确认)
        self._scores: list[float] | None = None  # per criterion of the run's weights, in their order
        self._ctx: Context | None = None
        self._criteria: list[CriterionScore] | None = None

    @property
    def criteria(self) -> list[CriterionScore]:
        """The scored criteria with their explanations (written on first read, for shown offers only)."""
        if self._criteria is None:
            self._criteria = explain(self) if self._scores is not None else []
        return self._criteria

    def fail(self, reason: Reason) -> None:
        """Record a hard constraint the offer fails."""
        self.excluded = (*self.excluded, reason)

    def note(self, reason: Reason) -> None:
        """Record something to verify or beware of, without excluding the offer."""
        self.marks = (*self.marks, reason)

    def exclude(
        self,
        code: str,
        zh: str | Texts,
        en: str | None = None,
        *,
        source: str,
        key: str = "",
        args: tuple[Any, ...] = (),
    ) -> None:
        """Record a hard constraint the offer fails, with the source (and measuring run) of its figure."""
        measured = self.offer.measurements.get(key) if key and self.offer.measurements else None
        link = measured.link if measured is not None and measured.source == source else None
        self.fail(Reason(code, zh, en, source, link, args))

    def measure_first(self, key: str, reason: Reason) -> None:
        """Keep the offer ranked but mark a figure that must be measured before signing."""
        self.verify = (*self.verify, key)
        self.note(reason)

    def to_confirm(self, key: str, reason: Reason) -> None:
        """Keep the offer ranked but mark a fact nobody recorded: ask the provider (待确认)."""
        self.confirm = (*self.confirm, key)
        self.note(reason)

    def mark(self, code: str, zh: str | Texts, en: str | None = None) -> None:
        """Record something to verify or beware of, without excluding the offer."""
        self.note(Reason(code, zh, en))

    def cost_text(self, needs: Needs) -> tuple[str, str] | None:
        """How the monthly cost was worked out, in Chinese and English."""
        return cost_texts(self.cost, self.offer, needs) if self.cost and self.cost.value is not None else None


def figures_of(a: Assessment) -> list[Figure]:
    """Every figure the offer was judged on, each with its source and, when measured, run, link and date."""
    offer, out = a.offer, []
    measurements = offer.measurements or {}
    for key, (unit, claimed, typical) in FIGURES.items():
        measured = measurements.get(key)
        if measured is not None:
            out.append(Figure.of(key, measured, key in a.stale))
            continue
        value, source = best(offer, key, claimed(offer), typical(offer))
        out.append(Figure(key, value, unit, source))
    out.extend(Figure.of(key, m, key in a.stale) for key, m in measurements.items() if key not in FIGURES)
    if a.rtt_figure is not None:  # to the buyer's sites, estimated; a measured rtt_ms is from the gpuvet host
        out.append(a.rtt_figure)
    return out


@dataclass
class Context:
    """Per-run values shared by every offer (constants, caches, the cheapest eligible cost)."""

    needs: Needs
    today: date
    network: dict[str, float]
    typical_storage: dict[str, dict[str, float]]
    scoring: dict[str, Any]
    weights: dict[str, float] = field(default_factory=dict)
    cheapest: float | None = None
    reasons: dict[tuple[Any, ...], Reason] = field(default_factory=dict)
    standing: dict[int, Any] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)
    stale_before: date | None = None
    claim_limits: tuple[ClaimLimit, ...] | None = None  # claim_limits(evidence), read on first use

    def shared(self, key: tuple[Any, ...], code: str, texts: Texts, source: str | None = None) -> Reason:
        """One Reason object for every offer that fails the same way (e.g. "needs RDMA, has none")."""
        reason = self.reasons.get((*key, source))
        if reason is None:
            reason = self.reasons[(*key, source)] = Reason(code, texts, None, source)
        return reason

    def shared_by_code(self, code: str, texts: Texts, source: str | None = None) -> Reason:
        """shared() for a reason that names no figure: one Reason per code (and source)."""
        return self.shared((code,), code, texts, source)


Constraint = Callable[[Assessment, Context], None]


# A part of a constraint that the column ranking decides on its own columns: the parts' verdicts together
# (reasons added, stale figures joined, score factors multiplied) are the constraint's verdict.
class RowVerdict(NamedTuple):
    """A check's verdict on every offer of a table at once (numpy arrays, one entry per row)."""

    excluded: np.ndarray | None = None  # how many reasons exclude each offer
    confirm: tuple[tuple[str, np.ndarray], ...] = ()  # (fact, the offers that must confirm it)
    verify: tuple[tuple[str, np.ndarray], ...] = ()  # (figure, the offers to measure before signing)
    penalty: np.ndarray | None = None  # score factor
    licence: np.ndarray | None = None  # offers excluded by a licence check


# A check's column form: what it decides for every offer, computed with numpy for checks on measured
# numbers (one Python run per distinct value would cost a run per measured offer).
Rows = Callable[[OfferTable, "Context"], RowVerdict]


class Part(NamedTuple):
    """A part of a constraint decided on its own columns (or all at once by `rows`)."""

    columns: tuple[str, ...]
    outcome_of: Callable[[OfferFacts, Context], Outcome]
    rows: Rows | None = None


Explainer = Callable[[Assessment, Context], Reason]


EXPLANATIONS: dict[str, Explainer] = {}


def explanation(name: str) -> Callable[[Explainer], Explainer]:
    """Register the explanation of a criterion's score (written only for offers somebody reads)."""

    def decorator(explain: Explainer) -> Explainer:
        if name in EXPLANATIONS:
            raise ValueError(f"explanation {name!r} is registered twice")
        EXPLANATIONS[name] = explain
        return explain

    return decorator


# A named tuple, not a frozen dataclass: one is made per distinct key (thousands per advice) and the
# frozen dataclass __init__ costs several times as much.
class Outcome(NamedTuple):
    """What one constraint added to an assessment, to be added as is to every offer with the same key."""

    excluded: tuple[Reason, ...]
    marks: tuple[Reason, ...]
    verify: tuple[str, ...]
    confirm: tuple[str, ...]
    values: tuple[tuple[str, Any], ...]

    @classmethod
    def record(cls, check: Constraint, offer: OfferFacts, ctx: Context, sets: tuple[str, ...]) -> Outcome:
        """Run `check` on a blank assessment of `offer` and keep what it added (EMPTY: nothing)."""
        blank = Assessment(offer)
        check(blank, ctx)
        values = tuple((name, getattr(blank, name)) for name in sets)
        if not (blank.excluded or blank.marks or blank.verify or blank.confirm or values):
            return EMPTY
        return cls(blank.excluded, blank.marks, blank.verify, blank.confirm, values)

    def apply(self, a: Assessment) -> None:
        """Add the recorded verdict to `a` (tuples are shared, nothing is copied)."""
        if self.excluded:
            a.excluded += self.excluded
        if self.marks:
            a.marks += self.marks
        if self.verify:
            a.verify += self.verify
        if self.confirm:
            a.confirm += self.confirm
        for name, value in self.values:
            setattr(a, name, value)


EMPTY = Outcome((), (), (), (), ())  # what most checks add to most offers


def explain(a: Assessment) -> list[CriterionScore]:
    """The criteria of a scored offer with their explanations (a stale figure says so)."""
    ctx = a._ctx
    assert ctx is not None and a._scores is not None
    out = []
    for (name, weight), score in zip(ctx.weights.items(), a._scores, strict=True):
        reason = EXPLANATIONS[name](a, ctx)
        if a.stale and a.stale & CRITERION_FIGURES.get(name, NO_KEYS):
            reason = stale_reason(reason)
        out.append(CriterionScore(name, weight, score, reason))
    return out
