"""Rank the registry's offers against a case: hard constraints exclude (with the reason), criteria score.

Constraints and criteria are registries: a new one is a decorated function, not another branch, that
declares the offer_table columns it reads. Every figure an offer is judged on carries its source (measured /
verified / claimed / assumed / estimated), and a measured figure always beats the provider's claim.

This module judges and explains one offer (assess, score); app.advice.deciding runs the same checks once
per distinct combination of their columns to rank every offer at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import partial
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np

from app.advice import cities, sizing
from app.advice.answers import WorkloadKind
from app.advice.checklist import confirm_asks
from app.advice.facts import (
    ASSUMED,
    CLAIMED,
    ESTIMATED,
    MEASURED,
    SOURCE_LABELS,
    UNKNOWN,
    VERIFIED,
    LicenceFacts,
    Measurement,
    OfferFacts,
    ProviderFacts,
)
from app.advice.knowledge import assumptions, benchmark_thresholds, load
from app.advice.licensing import Coverage, check_coverage, idc_licences
from app.advice.numbers import fmt
from app.advice.offer_table import SOURCE_CODES, OfferTable, combine, factorize
from app.advice.provider_verdict import (
    evidence_failure_texts,
    fails_on_evidence_only,
    is_evidence_failure,
    is_licence_failure,
    licence_failure_texts,
)
from app.advice.reasons import Reason, Texts
from app.advice.requirements import Needs, latency_constants, network_constants, storage_name
from app.advice.sizing import MonthlyCost, monthly_cost, sync_seconds
from benchmarks.compare import Verdict, model_key, ratio_verdict


class Figure(NamedTuple):
    """A number an offer is judged on, and where it came from."""

    key: str
    value: Any
    unit: str
    source: str
    link: str | None = None
    note: str = ""
    run_id: int | None = None
    measured_on: str | None = None
    stale: bool = False
    origin: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form with the source spelled out in both languages."""
        zh, en = SOURCE_LABELS[self.source]
        value = round(self.value, 3) if isinstance(self.value, float) else self.value
        return {
            "key": self.key,
            "value": value,
            "unit": self.unit,
            "source": self.source,
            "source_zh": zh,
            "source_en": en,
            "link": self.link,
            "note": self.note,
            "run_id": self.run_id,
            "measured_on": self.measured_on,
            "stale": self.stale,
            "origin": self.origin,
        }

    @classmethod
    def of(cls, key: str, measured: Measurement, stale: bool) -> Figure:
        """The figure of a measurement, with its run, date and staleness."""
        day = measured.at.date().isoformat() if measured.at else None
        return cls(
            key,
            measured.value,
            measured.unit,
            measured.source,
            measured.link,
            measured.note,
            measured.run_id,
            day,
            stale,
            measured.origin,
        )


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
_NO_KEYS: frozenset[str] = frozenset()
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
        self.stale: frozenset[str] = _NO_KEYS  # keys of measurements older than the configured age
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
            self._criteria = _explain(self) if self._scores is not None else []
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
        return _cost_text(self.cost, self, needs) if self.cost and self.cost.value is not None else None


def best(offer: OfferFacts, key: str, claimed: Any, typical: Any = None) -> tuple[Any, str]:
    """The best-sourced value for `key` and its source: measured, else claimed, else typical, else unknown."""
    measurements = offer.measurements
    if measurements:
        measured = measurements.get(key)
        if measured is not None:
            return measured.value, measured.source
    if claimed is not None:
        return claimed, CLAIMED
    if typical is not None:
        return typical, ASSUMED
    return None, UNKNOWN


def best_rows(
    table: OfferTable, key: str, claimed: np.ndarray, typical: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """best() for every offer of a table: (value, NaN for none; source code in offer_table.SOURCES)."""
    measured, measured_source = table.measured_figure(key)
    has = measured_source >= 0
    value = np.where(has, measured, claimed)
    source = np.where(has, measured_source, np.where(np.isnan(claimed), UNKNOWN_CODE, CLAIMED_CODE))
    if typical is not None:
        assumed = ~has & np.isnan(claimed) & ~np.isnan(typical)
        value = np.where(assumed, typical, value)
        source = np.where(assumed, SOURCE_CODES[ASSUMED], source)
    return value, source


UNKNOWN_CODE, CLAIMED_CODE = SOURCE_CODES[UNKNOWN], SOURCE_CODES[CLAIMED]


def _typical(storage_type: str, name: str) -> Any:
    return assumptions()["storage"]["typical"].get(storage_type, {}).get(name)


# What each figure of an offer is called, its unit, what the provider claims and the typical value.
FIGURES: dict[str, tuple[str, Callable[[OfferFacts], Any], Callable[[OfferFacts], Any]]] = {
    "rdma_gbps": ("Gbps", lambda o: o.rdma_gbps if o.rdma_type != "none" else None, lambda o: None),
    "intranet_gbps": ("Gbps", lambda o: o.intranet_gbps, lambda o: None),
    "read_iops": ("IOPS", lambda o: o.nominal_iops, lambda o: _typical(o.storage_type, "iops")),
    "write_mb_s": ("MB/s", lambda o: None, lambda o: _typical(o.storage_type, "write_mb_s")),
    "bandwidth_type": (
        "",
        lambda o: None if o.bandwidth_type == "unknown" else o.bandwidth_type,
        lambda o: None,
    ),
    "public_mbps": ("Mbps", lambda o: o.public_mbps, lambda o: None),
    "storage_type": ("", lambda o: None if o.storage_type == "unknown" else o.storage_type, lambda o: None),
    "gpu_model": ("", lambda o: o.gpu_model, lambda o: None),
    "gpu_count": ("GPUs", lambda o: o.gpus_per_node, lambda o: None),
}


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


ClaimLimit = tuple[str, Callable[[OfferFacts], Any], float, float]  # key, the claim, pass and warn ratios


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
    claim_limits: tuple[ClaimLimit, ...] | None = None  # _claim_limits(evidence), read on first use

    def shared(self, key: tuple[Any, ...], code: str, texts: Texts, source: str | None = None) -> Reason:
        """One Reason object for every offer that fails the same way (e.g. "needs RDMA, has none")."""
        reason = self.reasons.get((*key, source))
        if reason is None:
            reason = self.reasons[(*key, source)] = Reason(code, texts, None, source)
        return reason


Constraint = Callable[[Assessment, Context], None]
OfferKey = Callable[[OfferFacts], Any]


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


Scorer = Callable[[Assessment, Context], float]
Explainer = Callable[[Assessment, Context], Reason]
CONSTRAINTS: dict[str, Constraint] = {}
CRITERIA: dict[str, Scorer] = {}
EXPLANATIONS: dict[str, Explainer] = {}


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


# ---------------------------------------------------------------- shared lookups
def gpu_preference_rank(needs: Needs, gpu_model: str) -> int | None:
    """Position of the offer's GPU in the buyer's preference list (0 = first), or None.

    `gpu_model` is a registry spelling ("H100") or what a trial measured ("NVIDIA H100 80GB HBM3", several
    names joined by ", "): every name must be a preferred model, and the least preferred one counts.
    """
    wanted = [model_key(name) for name in needs.gpu_models]
    worst = None
    for name in gpu_model.split(", "):
        key = model_key(name)
        rank = next((index for index, want in enumerate(wanted) if key.startswith(want)), None)
        if rank is None:
            return None
        worst = rank if worst is None else max(worst, rank)
    return worst


def datacenter_city(offer: OfferFacts) -> tuple[cities.City | None, bool]:
    """The datacenter's city from the table, else its province's capital (True: a fallback)."""
    city = cities.lookup(offer.datacenter_city)
    if city is None and offer.datacenter_province:
        return cities.capital_of(offer.datacenter_province), True
    return city, False


def rtt_to(origin: cities.City, city: cities.City) -> float:
    """Estimated round trip between two cities."""
    constants = latency_constants()
    return sizing.rtt_ms(
        cities.distance_km(origin, city),
        route_factor=constants["route_factor"],
        km_per_ms=constants["km_per_ms"],
        equipment_ms=constants["equipment_ms"],
    )


def _cost_text(cost: MonthlyCost, a: Assessment, needs: Needs) -> tuple[str, str]:
    offer = a.offer
    parts_zh, parts_en = [], []
    if cost.by_month is not None:
        parts_zh.append(
            f"月价 {fmt(offer.price_month_cny)} 元 × {needs.nodes} 节点 = {fmt(cost.by_month)} 元"
        )
        parts_en.append(
            f"monthly price CNY {fmt(offer.price_month_cny)} × {needs.nodes} nodes = {fmt(cost.by_month)}"
        )
    if cost.by_gpu_hour is not None:
        parts_zh.append(
            f"{fmt(offer.price_gpu_hour_cny)} 元/卡·时 × {offer.gpus_per_node} 卡 "
            f"× {fmt(needs.hours_per_month)} h × "
            f"{needs.nodes} 节点 = {fmt(cost.by_gpu_hour)} 元"
        )
        parts_en.append(
            f"CNY {fmt(offer.price_gpu_hour_cny)}/GPU-h × {offer.gpus_per_node} GPUs "
            f"× {fmt(needs.hours_per_month)} h "
            f"× {needs.nodes} nodes = {fmt(cost.by_gpu_hour)}"
        )
    basis_zh = {"month": "按月价", "gpu_hour": "按卡时价", "unknown": "无报价"}[cost.basis]
    basis_en = {"month": "monthly price", "gpu_hour": "GPU-hour price", "unknown": "no price"}[cost.basis]
    return f"{'；'.join(parts_zh)}（取{basis_zh}）", f"{'; '.join(parts_en)} (using the {basis_en})"


# ---------------------------------------------------------------- hard constraints
class Scope:
    """What a provider's own records say about renting from it in one province (shared by its offers)."""

    __slots__ = ("confirm", "coverage", "excluded", "marks", "offer_kind", "provider", "province")

    # A plain slotted class: one is made per provider, province and offer kind (tens of thousands).
    def __init__(self, provider: ProviderFacts, province: str | None, offer_kind: str) -> None:
        self.provider = provider
        self.province = province
        self.offer_kind = offer_kind
        self.excluded: list[Reason] = []
        self.marks: list[Reason] = []
        self.confirm: list[tuple[str, Reason]] = []
        self.coverage: Coverage | None = None

    def exclude(self, code: str, zh: str | Texts, en: str | None = None, *, source: str) -> None:
        """Record a hard constraint every offer of this scope fails, and the source it rests on."""
        self.excluded.append(Reason(code, zh, en, source))


ProviderConstraint = Callable[[Scope, "Context"], None]
PROVIDER_CONSTRAINTS: dict[str, ProviderConstraint] = {}


PROVIDER_COLUMNS: dict[str, tuple[str, ...]] = {}  # per provider constraint, the columns it reads
PROVIDER_ROWS: dict[str, Rows] = {}  # the provider constraints with a column form


def provider_constraint(
    name: str, *, columns: tuple[str, ...], rows: Rows | None = None
) -> Callable[[ProviderConstraint], ProviderConstraint]:
    """Register a hard constraint on the provider (status, licences, findings, certifications); the
    ranking decides it once per distinct value of its `columns` (offer_table names), not once per offer."""

    def decorator(check: ProviderConstraint) -> ProviderConstraint:
        if name in PROVIDER_CONSTRAINTS:
            raise ValueError(f"provider constraint {name!r} is registered twice")
        PROVIDER_CONSTRAINTS[name] = check
        PROVIDER_COLUMNS[name] = columns
        if rows is not None:
            PROVIDER_ROWS[name] = rows
        return check

    return decorator


def _provider_outcome(
    offer: OfferFacts, ctx: Context, checks: Iterable[ProviderConstraint] | None = None
) -> Outcome:
    """The provider constraints' (or `checks'`) verdict for the offer's provider, province and kind (its
    待确认 last)."""
    scope = Scope(offer.provider, offer.datacenter_province, offer.offer_kind)
    for check in PROVIDER_CONSTRAINTS.values() if checks is None else checks:
        check(scope, ctx)
    confirm = scope.confirm
    return Outcome(
        tuple(scope.excluded),
        (*scope.marks, *(reason for _key, reason in confirm)),
        (),
        tuple(key for key, _reason in confirm),
        (("coverage", scope.coverage),),
    )


def _provider_parts() -> list[Part]:
    """Each provider constraint on its own columns (a provider's licences, findings and certifications)."""
    return [
        Part(PROVIDER_COLUMNS[name], partial(_provider_outcome, checks=(check,)), PROVIDER_ROWS.get(name))
        for name, check in PROVIDER_CONSTRAINTS.items()
    ]


@constraint(
    "provider",
    columns=("provider.id", "datacenter_province", "offer_kind"),
    sets=("coverage",),
    outcome_of=_provider_outcome,
    parts=_provider_parts,
)
def _provider(a: Assessment, ctx: Context) -> None:
    _provider_outcome(a.offer, ctx).apply(a)


@provider_constraint("provider_status", columns=("provider.status",))
def _provider_status(scope: Scope, ctx: Context) -> None:
    status = scope.provider.status
    if status in ("rejected", "suspended"):
        label = {"rejected": "已拒绝", "suspended": "已暂停"}[status]
        scope.exclude(
            "provider.status",
            f"该供应商在登记中为“{label}”状态",
            f"the provider is marked {status} in the registry",
            source=VERIFIED,
        )


def _licence_rows(table: OfferTable, ctx: Context) -> RowVerdict:
    """_licence for every offer, in two steps: each provider's licences in force (per distinct licence
    terms), then coverage per distinct (licences in force, province, offer kind)."""
    terms, first = combine([table.column("provider.licence_terms")], table.size)
    standings = [idc_licences(table.offers[row].provider.licences, ctx.today) for row in first.tolist()]
    standing_codes, distinct = factorize(map(_standing_key, standings))
    place = [table.column("datacenter_province"), table.column("offer_kind")]
    codes, first = combine([(standing_codes[terms], distinct), *place], table.size)
    excluded = []
    for row in first.tolist():
        offer = table.offers[row]
        found = check_coverage(
            offer.provider.licences,
            province=offer.datacenter_province,
            offer_kind=offer.offer_kind,
            today=ctx.today,
            standing=standings[terms[row]],
        )
        excluded.append(found.covered is False)
    per_offer = np.array(excluded, dtype=np.int64)[codes]
    return RowVerdict(per_offer, licence=per_offer > 0)


def _standing_key(standing: list[LicenceFacts] | Coverage) -> tuple[Any, ...]:
    """What of a provider's licences in force decides coverage (not their numbers, dates or notes)."""
    if isinstance(standing, Coverage):
        return ("fixed", standing.covered)
    return tuple((lic.issuer_level, lic.province, lic.coverage, lic.resource_collab) for lic in standing)


@provider_constraint(
    "licence", columns=("provider.licence_terms", "datacenter_province", "offer_kind"), rows=_licence_rows
)
def _licence(scope: Scope, ctx: Context) -> None:
    provider = scope.provider
    standing = ctx.standing.get(provider.id)
    if standing is None:
        standing = ctx.standing[provider.id] = idc_licences(provider.licences, ctx.today)
    coverage = scope.coverage = check_coverage(
        provider.licences,
        province=scope.province,
        offer_kind=scope.offer_kind,
        today=ctx.today,
        standing=standing,
    )
    if coverage.covered is False:
        coverage.reason.source = coverage.reason.source or CLAIMED
        scope.excluded.append(coverage.reason)
    elif coverage.covered is None:
        scope.marks.append(coverage.reason)
    scope.marks.extend(coverage.notes)


@provider_constraint("findings", columns=("provider.blocker_count",))
def _findings(scope: Scope, ctx: Context) -> None:
    provider = scope.provider
    for finding in provider.findings:
        # Benchmark findings are about one offer, whose measured figures the ranking weighs itself.
        if finding.severity != "blocker" or is_evidence_failure(finding):
            continue
        if is_licence_failure(finding):
            texts = licence_failure_texts(finding.red_flag, finding.message_zh, finding.message_en)  # type: ignore[arg-type]
        else:
            texts = (
                f"资质核查发现阻断问题：{finding.message_zh}",
                f"the credential check found a blocker: {finding.message_en}",
            )
        scope.exclude(f"finding.{finding.rule_id}", *texts, source=VERIFIED)
    if fails_on_evidence_only(provider):
        failed = [f for f in provider.findings if is_evidence_failure(f)]
        texts = evidence_failure_texts([f.message_zh for f in failed], [f.message_en for f in failed])
        scope.marks.append(Reason("verdict.fails_on_evidence", *texts, MEASURED))


@provider_constraint(
    "compliance",
    columns=("provider.iso27001", "provider.dengbao_level", "provider.certifications_on_record"),
)
def _compliance(scope: Scope, ctx: Context) -> None:
    needs, provider = ctx.needs, scope.provider
    recorded = provider.certifications_on_record
    if needs.iso27001 and not provider.iso27001:
        if "iso27001" not in recorded:
            scope.confirm.append(("iso27001", _unrecorded("iso27001", *CONFIRM_TEXTS["iso27001"])))
        else:
            scope.exclude(
                "compliance.iso27001",
                "你要求 ISO 27001，登记中该供应商的 ISO 27001 证书已过期",
                "you require ISO 27001; the certificate on record for this provider has expired",
                source=CLAIMED,
            )
    if needs.dengbao_level and (provider.dengbao_level or 0) < needs.dengbao_level:
        _dengbao(scope, needs.dengbao_level, "dengbao" in recorded)


def _dengbao(scope: Scope, wanted: int, recorded: bool) -> None:
    """A 等保 level below the need excludes; no 等保 record at all is to be confirmed (待确认)."""
    level = scope.provider.dengbao_level
    if level is None and not recorded:
        zh, en = CONFIRM_TEXTS["dengbao"]
        scope.confirm.append(
            ("dengbao", _unrecorded("dengbao", f"{zh}（要求 {wanted} 级）", f"{en} (level {wanted} needed)"))
        )
        return
    have = f"{level} 级" if level else "已过期的记录"
    have_en = f"level {level}" if level else "an expired record only"
    scope.exclude(
        "compliance.dengbao",
        f"你要求等保 {wanted} 级及以上，该供应商为{have}",
        f"you require 等保 (MLPS) level {wanted} or above; this provider has {have_en}",
        source=CLAIMED,
    )


# What is not on record, per fact to confirm with the provider (the question to ask is in checklist.yaml).
CONFIRM_TEXTS = {
    "iso27001": (
        "登记中没有该供应商的 ISO 27001 记录",
        "the registry holds no ISO 27001 record for this provider",
    ),
    "dengbao": ("登记中没有该供应商的等保记录", "the registry holds no 等保 (MLPS) record for this provider"),
}


def _unrecorded(key: str, zh: str, en: str) -> Reason:
    """The 待确认 mark of a fact nobody recorded: not a failure, a question for the provider."""
    return Reason(
        f"confirm.{key}", f"待确认：{zh}，请向服务商索取", f"to confirm: {en}; ask the provider", UNKNOWN
    )


@constraint(
    "gpu", columns=("gpus_per_node", "gpu_model", "gpu_memory_gb"), measures=("gpu_count", "gpu_model")
)
def _gpu(a: Assessment, ctx: Context) -> None:
    needs, offer = ctx.needs, a.offer
    have, have_source = (
        best(offer, "gpu_count", offer.gpus_per_node)
        if offer.measurements
        else (
            offer.gpus_per_node,
            CLAIMED,
        )
    )
    want = needs.gpus_per_node
    if have < want:
        a.fail(
            ctx.shared(
                ("gpu.per_node", have),
                "gpu.per_node",
                lambda: (
                    f"每节点只有 {fmt(have)} 张 GPU（{SOURCE_LABELS[have_source][0]}），"
                    f"你需要每节点 {want} 张",
                    f"{fmt(have)} GPUs per node ({SOURCE_LABELS[have_source][1]}); you need {want} per node",
                ),
                have_source,
            )
        )
    model, model_source = (
        best(offer, "gpu_model", offer.gpu_model)
        if offer.measurements
        else (
            offer.gpu_model,
            CLAIMED,
        )
    )
    if needs.gpu_strict and needs.gpu_models and gpu_preference_rank(needs, model) is None:
        wanted = needs.gpu_models
        a.fail(
            ctx.shared(
                ("gpu.model", model),
                "gpu.model",
                lambda: (
                    f"GPU 型号 {model} 不在你限定的型号（{'、'.join(wanted)}）中",
                    f"GPU model {model} is not one of the required models ({', '.join(wanted)})",
                ),
                model_source,
            )
        )
    least = needs.min_gpu_memory_gb
    if least:
        memory = offer.gpu_memory_gb
        if memory is None:
            a.to_confirm(
                "gpu_memory_gb",
                ctx.shared(
                    ("gpu.memory_unknown",),
                    "gpu.memory_unknown",
                    lambda: (
                        f"套餐未写明显存，无法确认是否达到 {least} GB",
                        f"the offer does not state GPU memory; cannot confirm {least} GB",
                    ),
                ),
            )
        elif memory < least:
            a.fail(
                ctx.shared(
                    ("gpu.memory", memory),
                    "gpu.memory",
                    lambda: (
                        f"每卡显存 {memory} GB，低于要求的 {least} GB",
                        f"{memory} GB per GPU, below the required {least} GB",
                    ),
                    CLAIMED,
                )
            )


INTRANET_COLUMNS = ("rdma_type", "rdma_gbps", "intranet_gbps")  # what _effective_intranet reads
INTRANET_MEASURES = ("rdma_gbps", "intranet_gbps")


def intranet_contradiction(offer: OfferFacts, ctx: Context) -> float | None:
    """Measured / claimed intranet when that fails (below the warn ratio) on an offer whose RDMA figure is
    only claimed: the claim is contradicted, so the measured intranet counts instead of it."""
    measurements = offer.measurements
    if offer.rdma_type == "none" or offer.rdma_gbps is None or not measurements or not offer.intranet_gbps:
        return None
    measured = measurements.get("intranet_gbps")
    if measured is None or measured.source not in (MEASURED, VERIFIED) or "rdma_gbps" in measurements:
        return None
    warn_at = _claim_limit(ctx, INTRANET_CLAIM)[3]
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
    return judged & rdma_claimed & (ratio < _claim_limit(ctx, INTRANET_CLAIM)[3])


def _effective_intranet(offer: OfferFacts, ctx: Context) -> tuple[Any, str, float | None, str]:
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


def _intranet_rows(table: OfferTable, ctx: Context) -> RowVerdict:
    """_intranet for every offer: RDMA missing where required, intranet unknown, or too slow."""
    needs = ctx.needs
    if needs.allreduce_bytes is None or needs.kind != WorkloadKind.distributed_training:
        return RowVerdict()
    no_rdma = table.per_row("rdma_type", lambda kind: kind == "none", dtype=bool)
    rdma, rdma_source = best_rows(table, "rdma_gbps", table.numbers("rdma_gbps"))
    tcp, tcp_source = best_rows(table, "intranet_gbps", table.numbers("intranet_gbps"))
    use_rdma = ~no_rdma & ~np.isnan(rdma) & ~intranet_contradiction_rows(table, ctx)
    source = np.where(use_rdma, rdma_source, tcp_source)
    nominal = np.where(use_rdma, ctx.network["rdma"], ctx.network["tcp"])
    rated = (source == CLAIMED_CODE) | (source == SOURCE_CODES[ASSUMED])  # a line rate, not goodput
    effective = np.where(use_rdma, rdma, tcp) * np.where(rated, nominal, 1.0)
    failing = no_rdma if needs.rdma_required else np.zeros(table.size, dtype=bool)
    unknown = ~failing & np.isnan(effective)
    slow = np.zeros(table.size, dtype=bool)
    if needs.needed_effective_gbps is not None:
        slow = ~failing & ~unknown & (effective < needs.needed_effective_gbps)
    return RowVerdict((failing | slow).astype(np.int64), (("intranet_gbps", unknown),))


@constraint(
    "intranet",
    columns=INTRANET_COLUMNS,
    measures=INTRANET_MEASURES,
    sets=("effective_gbps", "sync_s"),
    rows=_intranet_rows,
)
def _intranet(a: Assessment, ctx: Context) -> None:
    needs, offer = ctx.needs, a.offer
    if needs.allreduce_bytes is None or needs.kind != WorkloadKind.distributed_training:
        return
    value, source, effective, transport = _effective_intranet(offer, ctx)
    a.effective_gbps = effective
    if effective is not None:
        a.sync_s = sync_seconds(needs.allreduce_bytes, effective, 1.0)
    if needs.rdma_required and offer.rdma_type == "none":
        gbps = fmt(needs.needed_effective_gbps)
        a.fail(
            ctx.shared(
                ("intranet.rdma",),
                "intranet.rdma",
                lambda: (
                    f"你的梯度同步需要约 {gbps} Gbps 有效带宽，须 RDMA，而该套餐没有 RDMA",
                    f"your gradient sync needs about {gbps} Gbps effective, which calls for RDMA; "
                    "this offer has none",
                ),
                CLAIMED,
            )
        )
        return
    if effective is None:
        a.to_confirm(
            "intranet_gbps",
            ctx.shared(
                ("intranet.unknown",),
                "intranet.unknown",
                lambda: (
                    "套餐未写明节点间内网带宽，无法确认梯度同步是否来得及（须实测）",
                    "the offer does not state intranet bandwidth; "
                    "the gradient sync cannot be checked (measure it)",
                ),
            ),
        )
        return
    if needs.needed_effective_gbps is not None and effective < needs.needed_effective_gbps:
        a.exclude(
            "intranet.too_slow",
            _too_slow_texts,
            source=source,
            key="rdma_gbps" if transport != "tcp" else "intranet_gbps",
            args=(needs, value, source, effective, transport, a.sync_s),
        )


TRANSPORT_NAMES = {"tcp": "TCP", "roce": "RoCE", "infiniband": "InfiniBand"}  # as the reasons write them


def _too_slow_texts(
    needs: Needs, value: float, source: str, effective: float, transport: str, sync: float | None
) -> tuple[str, str]:
    zh, en = SOURCE_LABELS[source]
    transport = TRANSPORT_NAMES.get(transport, transport)
    return (
        f"内网 {fmt(value)} Gbps（{zh}，{transport}）有效约 {fmt(effective)} Gbps，同步一次约 {fmt(sync)} s，"
        f"超出你允许的 {fmt(needs.sync_budget_s)} s；需要 {fmt(needs.needed_effective_gbps)} Gbps",
        f"intranet {fmt(value)} Gbps ({en}, {transport}) gives about {fmt(effective)} Gbps effective; "
        f"one sync takes {fmt(sync)} s, over your {fmt(needs.sync_budget_s)} s; "
        f"{fmt(needs.needed_effective_gbps)} Gbps is needed",
    )


STORAGE_MEASURES = ("storage_type", "read_iops", "write_mb_s")  # what storage_kind and storage_figures read


def storage_kind(offer: OfferFacts) -> str:
    """The storage type: measured (lsblk / findmnt) when a run found it, else what the offer says."""
    measured = offer.measurements.get("storage_type") if offer.measurements else None
    return str(measured.value) if measured is not None else offer.storage_type


def storage_figures(
    offer: OfferFacts, typical_storage: dict[str, dict[str, float]]
) -> tuple[tuple[Any, str], tuple[Any, str]]:
    """(value, source) of random-read IOPS and of write MB/s."""
    typical = typical_storage.get(storage_kind(offer))
    iops = best(offer, "read_iops", offer.nominal_iops, typical["iops"] if typical else None)
    write = best(offer, "write_mb_s", None, typical["write_mb_s"] if typical else None)
    return iops, write


def _checkpoint_texts(needs: Needs, write: float, source: str) -> tuple[str, str]:
    stall = sizing.checkpoint_stall_seconds(needs.checkpoint_gb or 0, write)
    zh, en = SOURCE_LABELS[source]
    return (
        f"写入约 {fmt(write)} MB/s（{zh}），保存一次 {fmt(needs.checkpoint_gb)} GB 检查点要停顿约 "
        f"{fmt(stall)} s，需要 {fmt(needs.checkpoint_write_mb_s)} MB/s",
        f"about {fmt(write)} MB/s of writes ({en}) stalls training for about {fmt(stall)} s per "
        f"{fmt(needs.checkpoint_gb)} GB checkpoint; {fmt(needs.checkpoint_write_mb_s)} MB/s is needed",
    )


def _storage_rows(table: OfferTable, ctx: Context) -> RowVerdict:
    """_storage for every offer: type unknown, IOPS or write rate short (to measure first if only typical)."""
    needs = ctx.needs
    codes, first = combine([table.column("storage_type"), table.column("m:storage_type")], table.size)
    kinds = [storage_kind(table.offers[row]) for row in first.tolist()]
    confirm = (("storage_type", np.array([kind == "unknown" for kind in kinds], dtype=bool)[codes]),)
    if needs.read_iops is None and needs.checkpoint_write_mb_s is None:
        return RowVerdict(None, confirm)
    typical = [ctx.typical_storage.get(kind) for kind in kinds]
    excluded, verify = np.zeros(table.size, dtype=np.int64), []
    for key, need, claimed in (
        ("read_iops", needs.read_iops, table.numbers("nominal_iops")),
        ("write_mb_s", needs.checkpoint_write_mb_s, np.full(table.size, np.nan)),
    ):
        if need is None:
            continue
        name = "iops" if key == "read_iops" else key
        per_kind = np.array([found[name] if found else np.nan for found in typical], dtype=float)
        value, source = best_rows(table, key, claimed, per_kind[codes])
        short = ~np.isnan(value) & (value < need)
        assumed = source == SOURCE_CODES[ASSUMED]
        excluded += short & ~assumed
        verify.append((key, short & assumed))
    return RowVerdict(excluded, confirm, tuple(verify))


@constraint(
    "storage",
    columns=("storage_type", "nominal_iops", "storage_capacity_gb"),
    measures=STORAGE_MEASURES,
    rows=_storage_rows,
)
def _storage(a: Assessment, ctx: Context) -> None:
    needs, offer = ctx.needs, a.offer
    if storage_kind(offer) == "unknown":
        a.to_confirm(
            "storage_type",
            ctx.shared(
                ("storage.unknown",),
                "storage.unknown",
                lambda: (
                    "套餐未写明存储类型（本地盘还是云盘），须让服务商书面说明并实测",
                    "the offer does not say whether storage is local or network; "
                    "get it in writing and measure it",
                ),
            ),
        )
    if needs.read_iops is None and needs.checkpoint_write_mb_s is None:
        _capacity(a, ctx)
        return
    (iops, iops_source), (write, write_source) = storage_figures(offer, ctx.typical_storage)
    if needs.read_iops is not None and iops is not None and iops < needs.read_iops:
        _shortfall(a, "read_iops", "storage.iops", _iops_texts, (needs, iops, iops_source), iops_source)
    if needs.checkpoint_write_mb_s is not None and write is not None and write < needs.checkpoint_write_mb_s:
        args = (needs, write, write_source)
        _shortfall(a, "write_mb_s", "storage.checkpoint", _checkpoint_texts, args, write_source)
    _capacity(a, ctx)


def _shortfall(a: Assessment, key: str, code: str, texts: Texts, args: tuple[Any, ...], source: str) -> None:
    """A storage figure below the need excludes, unless it is only a typical value (then: measure first)."""
    if source == ASSUMED:
        a.measure_first(key, Reason(f"verify.{key}", _measure_first, None, ASSUMED, args=(texts, *args)))
    else:
        a.exclude(code, texts, source=source, key=key, args=args)


def _measure_first(texts: Texts, *args: Any) -> tuple[str, str]:
    """The texts of a shortfall that rests on a typical value only: keep the offer, measure first."""
    zh, en = texts(*args)
    return f"先实测再签约：{zh}", f"measure before signing: {en}"


def _iops_texts(needs: Needs, iops: float, source: str) -> tuple[str, str]:
    zh, en = SOURCE_LABELS[source]
    return (
        f"随机读 {fmt(iops)} IOPS（{zh}）低于数据加载需要的 {fmt(needs.read_iops)} IOPS",
        f"{fmt(iops)} random-read IOPS ({en}) is below the {fmt(needs.read_iops)} IOPS the loader needs",
    )


def _capacity(a: Assessment, ctx: Context) -> None:
    capacity, dataset = a.offer.storage_capacity_gb, ctx.needs.dataset_gb
    if dataset and capacity is not None and capacity < dataset:
        a.note(
            ctx.shared(
                ("storage.capacity", capacity),
                "storage.capacity",
                lambda: (
                    f"本地存储 {fmt(capacity)} GB 放不下 {fmt(dataset)} GB 数据集，需另配共享存储做中转",
                    f"{fmt(capacity)} GB of storage cannot hold the {fmt(dataset)} GB dataset; plan shared "
                    "storage as a staging area",
                ),
            )
        )


BANDWIDTH_TEXTS = {
    "bandwidth.shared_ok": (
        "公网带宽为共享，晚高峰可能被挤占；偶尔上传少量数据尚可",
        "public bandwidth is shared and may collapse at evening peaks; fine for occasional small uploads",
    ),
    "bandwidth.shared": (
        "公网带宽为共享，而你的场景要求独享带宽（共享带宽在晚高峰可能掉到零头）",
        "public bandwidth is shared, but your case needs dedicated bandwidth (shared links can drop to a "
        "fraction at evening peaks)",
    ),
    "bandwidth.unknown": (
        "套餐未说明带宽是独享还是共享，须书面确认并在不同时段实测",
        "the offer does not say whether bandwidth is dedicated or shared; confirm in writing and measure at "
        "different times of day",
    ),
}


@constraint("bandwidth", columns=("bandwidth_type",), measures=("bandwidth_type",))
def _bandwidth(a: Assessment, ctx: Context) -> None:
    offer = a.offer
    claimed = None if offer.bandwidth_type == "unknown" else offer.bandwidth_type
    kind, source = best(offer, "bandwidth_type", claimed)
    if not ctx.needs.dedicated_bandwidth:
        if kind == "shared":
            zh, en = BANDWIDTH_TEXTS["bandwidth.shared_ok"]
            a.note(ctx.shared(("bandwidth.shared_ok",), "bandwidth.shared", lambda: (zh, en)))
        return
    if kind == "shared":
        zh, en = BANDWIDTH_TEXTS["bandwidth.shared"]
        a.fail(ctx.shared(("bandwidth.shared",), "bandwidth.shared", lambda: (zh, en), source))
    elif kind is None:
        zh, en = BANDWIDTH_TEXTS["bandwidth.unknown"]
        a.to_confirm(
            "bandwidth_type", ctx.shared(("bandwidth.unknown",), "bandwidth.unknown", lambda: (zh, en))
        )


@dataclass(slots=True)
class Place:
    """Where a datacenter is and how far its users are (shared by every offer in that city)."""

    city: cities.City | None
    office_rtt_ms: float | None = None
    user_rtt_ms: dict[str, float] = field(default_factory=dict)
    figure: Figure | None = None
    excluded: list[Reason] = field(default_factory=list)
    marks: list[Reason] = field(default_factory=list)
    verify: Reason | None = None
    confirm: Reason | None = None


def _place(offer: OfferFacts, ctx: Context) -> Place:
    needs = ctx.needs
    city, fallback = datacenter_city(offer)
    place = Place(city)
    if city is None:
        place.marks.append(
            Reason(
                "latency.no_city",
                "套餐未关联机房城市，无法估算时延",
                "the offer has no datacenter city, so latency cannot be estimated",
            )
        )
        if needs.kind == WorkloadKind.interactive_inference:
            place.confirm = Reason(
                "confirm.datacenter_city",
                "待确认：交互式推理须知道机房位置才能判断时延，请向服务商问清机房所在城市",
                "to confirm: interactive inference needs the datacenter location to judge latency; ask the "
                "provider which city it is in",
                UNKNOWN,
            )
        return place
    if fallback:
        written = offer.datacenter_city
        place.marks.append(
            Reason(
                "latency.city_fallback",
                f"机房城市“{written or '未填写'}”不在城市表中，时延按省会{city.name}估算",
                f"datacenter city {written or '(none)'!r} is not in the city table; latency is estimated "
                f"from the provincial capital {city.name}",
            )
        )
    place.office_rtt_ms = rtt_to(needs.office_city, city)
    place.user_rtt_ms = {user.name: rtt_to(user, city) for user in needs.user_cities}
    worst = max(place.user_rtt_ms.values()) if place.user_rtt_ms else place.office_rtt_ms
    place.figure = Figure("rtt_ms", worst, "ms", ESTIMATED, None, city.name)
    if needs.network_budget_ms is None or not place.user_rtt_ms:
        return place
    worst_city = max(place.user_rtt_ms, key=lambda name: place.user_rtt_ms[name])
    budget = needs.network_budget_ms
    if worst > budget * (1 + ctx.evidence["estimate_exclude_margin"]):
        place.excluded.append(
            Reason(
                "latency.budget",
                f"机房在{city.name}，{worst_city}的用户往返约 {fmt(worst)} ms（估算），"
                f"远超留给网络的 {fmt(budget)} ms",
                f"the datacenter is in {city.name}; users in {worst_city} would see about {fmt(worst)} ms "
                f"round trip (estimated), far over the {fmt(budget)} ms left for the network",
                ESTIMATED,
            )
        )
    elif worst > budget:
        place.verify = Reason(
            "verify.rtt_ms",
            f"先实测再签约：{worst_city}的用户往返估算约 {fmt(worst)} ms，略超 {fmt(budget)} ms 的预算，"
            "估算不足以排除，请实测",
            f"measure before signing: users in {worst_city} are estimated at about {fmt(worst)} ms round "
            f"trip, a little over the {fmt(budget)} ms budget; an estimate is not enough to exclude, so "
            "measure it",
            ESTIMATED,
        )
    return place


@constraint(
    "latency",
    columns=("datacenter_city", "datacenter_province"),
    sets=("city", "office_rtt_ms", "user_rtt_ms", "rtt_figure"),
)
def _latency(a: Assessment, ctx: Context) -> None:
    place = _place(a.offer, ctx)
    a.city = place.city
    a.office_rtt_ms = place.office_rtt_ms
    a.user_rtt_ms = place.user_rtt_ms
    a.rtt_figure = place.figure
    a.excluded += tuple(place.excluded)
    a.marks += tuple(place.marks)
    if place.verify is not None:
        a.measure_first("rtt_ms", place.verify)
    if place.confirm is not None:
        a.to_confirm("datacenter_city", place.confirm)


@constraint("budget", columns=("price_month_cny", "price_gpu_hour_cny", "gpus_per_node"), sets=("cost",))
def _budget(a: Assessment, ctx: Context) -> None:
    needs, offer = ctx.needs, a.offer
    cost = a.cost = monthly_cost(
        price_month_cny=offer.price_month_cny,
        price_gpu_hour_cny=offer.price_gpu_hour_cny,
        gpus_per_node=offer.gpus_per_node,
        nodes=needs.nodes,
        hours_per_month=needs.hours_per_month,
    )
    value = cost.value
    if value is None:
        a.to_confirm(
            "price",
            ctx.shared(
                ("cost.unknown",),
                "cost.unknown",
                lambda: ("套餐没有报价，无法核算成本", "the offer has no price; cost cannot be worked out"),
            ),
        )
        return
    budget = needs.budget_cny
    if budget is not None and value > budget:
        a.exclude("cost.budget", _over_budget_texts, source=CLAIMED, args=(value, budget))


def _over_budget_texts(value: float, budget: float) -> tuple[str, str]:
    return (
        f"每月约 {fmt(value)} 元，超出预算 {fmt(budget)} 元",
        f"about CNY {fmt(value)} a month, over the CNY {fmt(budget)} budget",
    )


# Measured figures compared with the claim: (key, the claim, the Thresholds fields <kind>_pass, <kind>_warn).
BELOW_CLAIM: tuple[tuple[str, Callable[[OfferFacts], Any], str], ...] = (
    ("intranet_gbps", lambda o: o.intranet_gbps, "bandwidth"),
    ("rdma_gbps", lambda o: o.rdma_gbps if o.rdma_type != "none" else None, "bandwidth"),  # perftest
    ("public_mbps", lambda o: o.public_mbps, "bandwidth"),
    ("read_iops", lambda o: o.nominal_iops, "iops"),
)
INTRANET_CLAIM = 0  # BELOW_CLAIM's index of the intranet figure
# The measured figures each criterion rests on (a stale one weighs less in that criterion).
CRITERION_FIGURES: dict[str, frozenset[str]] = {
    "intranet": frozenset({"intranet_gbps", "rdma_gbps"}),
    "storage": frozenset({"read_iops", "write_mb_s", "storage_type"}),
    "bandwidth": frozenset({"public_mbps", "bandwidth_type"}),
}
# The checklist item that settles each figure an offer must be measured on before signing.
VERIFY_ITEMS = {
    "read_iops": "fio_randread",
    "write_mb_s": "fio_checkpoint_write",
    "rtt_ms": "ping_users",
    "intranet_gbps": "intranet_iperf3",
    "rdma_gbps": "rdma_nccl",
}


# The offer columns each claim compared with a measured figure reads.
CLAIM_COLUMNS = {
    "intranet_gbps": ("intranet_gbps",),
    "rdma_gbps": ("rdma_type", "rdma_gbps"),
    "public_mbps": ("public_mbps",),
    "read_iops": ("nominal_iops",),
}
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


# What intranet_contradiction reads.
CONTRADICTION_COLUMNS = ("rdma_type", "rdma_gbps", "intranet_gbps", "m:rdma_gbps", "m:intranet_gbps")


def _rdma_contradicted(a: Assessment, ctx: Context) -> None:
    """Mark a claimed RDMA figure that a failed intranet measurement contradicts: measure RDMA first."""
    ratio = intranet_contradiction(a.offer, ctx)
    if ratio is None:
        return
    measured = a.offer.measurements["intranet_gbps"]
    args = (a.offer.rdma_gbps, measured.value, a.offer.intranet_gbps, ratio)
    reason = Reason("evidence.rdma_contradicted", _contradicted_texts, None, CLAIMED, measured.link, args)
    a.measure_first("rdma_gbps", reason)


def _rdma_contradicted_rows(table: OfferTable, ctx: Context) -> RowVerdict:
    """_rdma_contradicted for every offer: the offers to measure RDMA on before signing."""
    return RowVerdict(verify=(("rdma_gbps", intranet_contradiction_rows(table, ctx)),))


def _contradicted_texts(rdma: float, measured: float, claimed: float, ratio: float) -> tuple[str, str]:
    return (
        f"RDMA {fmt(rdma)} Gbps：服务商声称，已被其他实测否定：签约前请实测 RDMA"
        f"（内网实测 {fmt(measured)} Gbps，只有声称 {fmt(claimed)} Gbps 的 {ratio:.0%}；该声称不计分）",
        f"RDMA {fmt(rdma)} Gbps: claimed, contradicted elsewhere: measure RDMA before signing "
        f"(measured intranet {fmt(measured)} Gbps is only {ratio:.0%} of the claimed {fmt(claimed)} Gbps; "
        "the claim does not score)",
    )


def _stale(a: Assessment, ctx: Context) -> None:
    """Mark measurements older than the configured age (they weigh less in the score)."""
    measurements = a.offer.measurements
    before = ctx.stale_before
    stale = frozenset(k for k, m in measurements.items() if m.at is not None and m.at.date() < before)
    if stale:
        a.stale = stale
        days = ctx.evidence["stale_after_days"]
        oldest = min(measurements[key].at for key in stale)  # type: ignore[type-var]
        a.note(Reason("evidence.stale", _stale_texts, None, MEASURED, args=(sorted(stale), oldest, days)))


def _below_claim(a: Assessment, ctx: Context, *, index: int) -> None:
    """Lower the score when the measured figure BELOW_CLAIM[index] is far below the claim."""
    key, claim_of, pass_at, warn_at = _claim_limit(ctx, index)
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
            _below_claim_texts,
            None,
            measured.source,
            measured.link,
            args=(measured, claimed, ratio, verdict),
        )
    )


def _below_claim_rows(table: OfferTable, ctx: Context, *, index: int) -> RowVerdict:
    """_below_claim for every offer: the score factor of measured figure BELOW_CLAIM[index]."""
    key, claim_of, pass_at, warn_at = _claim_limit(ctx, index)
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


def _claim_limit(ctx: Context, index: int) -> ClaimLimit:
    """BELOW_CLAIM[index] with its pass and warn ratios (the limits are read once per run)."""
    if ctx.claim_limits is None:
        ctx.claim_limits = _claim_limits(ctx.evidence)
    return ctx.claim_limits[index]


def _claim_limits(evidence: dict[str, Any]) -> tuple[ClaimLimit, ...]:
    """Per figure compared with the claim: (key, the claim, pass ratio, warn ratio), read once per run."""
    thresholds = evidence["thresholds"]
    return tuple(
        (key, claim_of, getattr(thresholds, f"{kind}_pass"), getattr(thresholds, f"{kind}_warn"))
        for key, claim_of, kind in BELOW_CLAIM
    )


def _stale_texts(keys: list[str], oldest: Any, days: int) -> tuple[str, str]:
    listed = ", ".join(keys)
    return (
        f"实测数据已过期（最早于 {oldest:%Y-%m-%d} 测得，超过 {days} 天）：{listed}；"
        "评分按较低权重计，签约前请重测",
        f"stale measurements (the oldest taken on {oldest:%Y-%m-%d}, over {days} days ago): {listed}; "
        "they weigh less in the score, measure again before signing",
    )


def _below_claim_texts(measured: Measurement, claimed: float, ratio: float, verdict: str) -> tuple[str, str]:
    level_zh, level_en = {"warn": ("偏低", "below par"), "fail": ("不合格", "a failure")}[verdict]
    run_zh = f"（测试 #{measured.run_id}）" if measured.run_id else ""
    run_en = f" (run #{measured.run_id})" if measured.run_id else ""
    return (
        f"实测 {fmt(measured.value)} {measured.unit}，只有声称 {fmt(claimed)} {measured.unit} 的 "
        f"{ratio:.0%}{run_zh}，{level_zh}：得分相应降低",
        f"measured {fmt(measured.value)} {measured.unit}, only {ratio:.0%} of the claimed {fmt(claimed)} "
        f"{measured.unit}{run_en}, which is {level_en}: the score is lowered",
    )


def _stale_reason(reason: Reason) -> Reason:
    """The criterion's explanation, saying that it rests on a stale measurement."""
    return Reason(
        reason.code,
        lambda: (
            f"{reason.zh}（实测已过期，按较低权重计）",
            f"{reason.en} (stale measurement, weighted less)",
        ),
    )


# ---------------------------------------------------------------- criteria
@criterion("cost", after=("budget",))
def _cost_score(a: Assessment, ctx: Context) -> float:
    cost = a.cost
    if cost is None or cost.value is None:
        return 0.0
    return (ctx.cheapest / cost.value) if ctx.cheapest and cost.value else 1.0


@explanation("cost")
def _cost_reason(a: Assessment, ctx: Context) -> Reason:
    cost = a.cost
    if cost is None or cost.value is None:
        return Reason("cost", "无报价（未核实）", "no price (unverified)")
    text_zh, text_en = _cost_text(cost, a, ctx.needs)
    return Reason(
        "cost", f"每月约 {fmt(cost.value)} 元：{text_zh}", f"about CNY {fmt(cost.value)} a month: {text_en}"
    )


@criterion("gpu", columns=("gpu_model",))
def _gpu_score(a: Assessment, ctx: Context) -> float:
    needs = ctx.needs
    if not needs.gpu_models:
        return 1.0
    rank = gpu_preference_rank(needs, a.offer.gpu_model)
    if rank is None:
        return float(ctx.scoring["gpu_other_score"])
    return max(0.0, 1.0 - rank * float(ctx.scoring["gpu_rank_step"]))


@explanation("gpu")
def _gpu_reason(a: Assessment, ctx: Context) -> Reason:
    needs, offer = ctx.needs, a.offer
    if not needs.gpu_models:
        return Reason(
            "gpu", f"{offer.gpu_model}（未指定偏好型号）", f"{offer.gpu_model} (no preferred model given)"
        )
    rank = gpu_preference_rank(needs, offer.gpu_model)
    if rank is None:
        return Reason(
            "gpu",
            f"{offer.gpu_model} 不在偏好型号（{'、'.join(needs.gpu_models)}）中",
            f"{offer.gpu_model} is not among the preferred models ({', '.join(needs.gpu_models)})",
        )
    return Reason(
        "gpu",
        f"{offer.gpu_model} 是你的第 {rank + 1} 偏好",
        f"{offer.gpu_model} is your choice no. {rank + 1}",
    )


@criterion("intranet", columns=INTRANET_COLUMNS, measures=INTRANET_MEASURES)
def _intranet_score(a: Assessment, ctx: Context) -> float:
    needs = ctx.needs
    effective = a.effective_gbps = _effective_intranet(a.offer, ctx)[2]
    if effective is None:
        return 0.0
    if needs.needed_effective_gbps:
        headroom = effective / needs.needed_effective_gbps
        return min(1.0, headroom / float(assumptions()["storage"]["headroom"]))
    return min(1.0, effective / 10)


@explanation("intranet")
def _intranet_reason(a: Assessment, ctx: Context) -> Reason:
    needs = ctx.needs
    source = _effective_intranet(a.offer, ctx)[1]
    if a.effective_gbps is None:
        return Reason("intranet", "内网带宽未知（未核实）", "intranet bandwidth unknown (unverified)")
    zh, en = SOURCE_LABELS[source]
    if needs.needed_effective_gbps:
        headroom = a.effective_gbps / needs.needed_effective_gbps
        return Reason(
            "intranet",
            f"有效约 {fmt(a.effective_gbps)} Gbps（{zh}），为需求的 {fmt(headroom)} 倍，"
            f"同步一次约 {fmt(a.sync_s)} s",
            f"about {fmt(a.effective_gbps)} Gbps effective ({en}), {fmt(headroom)}× the need; one sync takes "
            f"about {fmt(a.sync_s)} s",
        )
    return Reason(
        "intranet",
        f"有效约 {fmt(a.effective_gbps)} Gbps（{zh}）",
        f"about {fmt(a.effective_gbps)} Gbps effective ({en})",
    )


@criterion("storage", columns=("storage_type", "nominal_iops"), measures=STORAGE_MEASURES)
def _storage_score(a: Assessment, ctx: Context) -> float:
    needs, offer = ctx.needs, a.offer
    parts = [needs.storage_fit.get(storage_kind(offer), 0.0)]
    (iops, _iops_source), (write, _write_source) = storage_figures(offer, ctx.typical_storage)
    headroom = float(assumptions()["storage"]["headroom"])
    if needs.read_iops and iops:
        parts.append(min(1.0, iops / needs.read_iops / headroom))
    if needs.checkpoint_write_mb_s and write:
        parts.append(min(1.0, write / needs.checkpoint_write_mb_s / headroom))
    return sum(parts) / len(parts)


@explanation("storage")
def _storage_reason(a: Assessment, ctx: Context) -> Reason:
    kind = storage_kind(a.offer)
    (iops, iops_source), (write, write_source) = storage_figures(a.offer, ctx.typical_storage)
    iops_zh, iops_en = SOURCE_LABELS[iops_source]
    write_zh, write_en = SOURCE_LABELS[write_source]
    name_zh, name_en = storage_name(kind, "zh"), storage_name(kind, "en")
    return Reason(
        "storage",
        f"{name_zh}，随机读 {fmt(iops)} IOPS（{iops_zh}），写入约 {fmt(write)} MB/s（{write_zh}）",
        f"{name_en}, {fmt(iops)} random-read IOPS ({iops_en}), about {fmt(write)} MB/s of writes "
        f"({write_en})",
    )


@criterion("latency", after=("latency",))
def _latency_score(a: Assessment, ctx: Context) -> float:
    needs = ctx.needs
    if a.city is None:
        return 0.0
    if a.user_rtt_ms and needs.network_budget_ms:
        return max(0.0, 1.0 - max(a.user_rtt_ms.values()) / needs.network_budget_ms)
    return max(0.0, 1.0 - (a.office_rtt_ms or 0.0) / 100)


@explanation("latency")
def _latency_reason(a: Assessment, ctx: Context) -> Reason:
    needs = ctx.needs
    if a.city is None:
        return Reason("latency", "机房位置未知（未核实）", "datacenter location unknown (unverified)")
    if a.user_rtt_ms and needs.network_budget_ms:
        listed = "、".join(f"{name} {fmt(ms)} ms" for name, ms in a.user_rtt_ms.items())
        listed_en = ", ".join(f"{name} {fmt(ms)} ms" for name, ms in a.user_rtt_ms.items())
        return Reason(
            "latency",
            f"机房在{a.city.name}，用户往返估算：{listed}（预算 {fmt(needs.network_budget_ms)} ms）",
            f"datacenter in {a.city.name}; estimated user round trips: {listed_en} "
            f"(budget {fmt(needs.network_budget_ms)} ms)",
        )
    rtt = a.office_rtt_ms or 0.0
    return Reason(
        "latency",
        f"机房在{a.city.name}，距{needs.office_city.name}办公室往返约 {fmt(rtt)} ms（估算）",
        f"datacenter in {a.city.name}; about {fmt(rtt)} ms round trip from the {needs.office_city.name} "
        "office (estimated)",
    )


BANDWIDTH_LABELS = {
    "dedicated": ("独享", "dedicated"),
    "shared": ("共享", "shared"),
    "unknown": ("未说明", "not stated"),
}


def _bandwidth_kind(offer: OfferFacts) -> str:
    claimed = None if offer.bandwidth_type == "unknown" else offer.bandwidth_type
    return best(offer, "bandwidth_type", claimed)[0] or "unknown"


@criterion("bandwidth", columns=("bandwidth_type",), measures=("bandwidth_type",))
def _bandwidth_score(a: Assessment, ctx: Context) -> float:
    return float(ctx.scoring["bandwidth_type_score"][_bandwidth_kind(a.offer)])


@explanation("bandwidth")
def _bandwidth_reason(a: Assessment, ctx: Context) -> Reason:
    offer = a.offer
    label = BANDWIDTH_LABELS[_bandwidth_kind(offer)]
    mbps, mbps_source = best(offer, "public_mbps", offer.public_mbps)
    zh, en = SOURCE_LABELS[mbps_source]
    return Reason(
        "bandwidth",
        f"公网 {fmt(mbps)} Mbps（{zh}），{label[0]}",
        f"public {fmt(mbps)} Mbps ({en}), {label[1]}",
    )


@criterion("compliance", columns=("provider.iso27001", "provider.dengbao_level"))
def _compliance_score(a: Assessment, ctx: Context) -> float:
    provider = a.offer.provider
    has_iso = 0.5 if provider.iso27001 else 0.0
    level = provider.dengbao_level or 0
    return has_iso + (0.5 if level >= 3 else (0.25 if level else 0.0))


@explanation("compliance")
def _compliance_reason(a: Assessment, ctx: Context) -> Reason:
    provider = a.offer.provider
    level = provider.dengbao_level or 0
    return Reason(
        "compliance",
        f"ISO 27001：{'有' if provider.iso27001 else '无记录'}；等保：{f'{level} 级' if level else '无记录'}",
        f"ISO 27001: {'yes' if provider.iso27001 else 'none on record'}; 等保 (MLPS): "
        f"{f'level {level}' if level else 'none on record'}",
    )


@criterion("credentials", columns=("provider.credential_standing",))
def _credentials_score(a: Assessment, ctx: Context) -> float:
    provider = a.offer.provider
    settings = ctx.scoring["credentials"]
    if provider.check is None and not provider.findings:
        return float(settings["unchecked_score"])
    warnings = sum(1 for f in provider.findings if f.severity == "warning")
    return max(0.0, 1.0 - warnings * float(settings["warning_penalty"]))


@explanation("credentials")
def _credentials_reason(a: Assessment, ctx: Context) -> Reason:
    provider = a.offer.provider
    warnings = [f for f in provider.findings if f.severity == "warning"]
    if provider.check is None and not provider.findings:
        return Reason(
            "credentials",
            "尚无资质核查记录：许可证、备案等只是登记数据（未核实）",
            "no credential check on record: licences and filings are registry data only (unverified)",
        )
    if not warnings:
        return Reason("credentials", "资质核查未发现问题", "the credential check found no problems")
    listed = "；".join(f.message_zh for f in warnings[:3])
    listed_en = "; ".join(f.message_en for f in warnings[:3])
    return Reason(
        "credentials",
        f"资质核查有 {len(warnings)} 条警告：{listed}",
        f"the credential check raised {len(warnings)} warning(s): {listed_en}",
    )


TRANSPARENCY_VALUES = {True: 0.5, None: 0.25, False: 0.0}


@criterion("transparency", columns=("provider.discloses_network", "provider.discloses_storage"))
def _transparency_score(a: Assessment, ctx: Context) -> float:
    provider = a.offer.provider
    return TRANSPARENCY_VALUES[provider.discloses_network] + TRANSPARENCY_VALUES[provider.discloses_storage]


@explanation("transparency")
def _transparency_reason(a: Assessment, ctx: Context) -> Reason:
    provider = a.offer.provider
    words = {True: ("公开", "disclosed"), None: ("未知", "unknown"), False: ("拒绝说明", "refused")}
    return Reason(
        "transparency",
        f"网络拓扑：{words[provider.discloses_network][0]}；存储配置：{words[provider.discloses_storage][0]}",
        f"network topology: {words[provider.discloses_network][1]}; storage configuration: "
        f"{words[provider.discloses_storage][1]}",
    )


def _explain(a: Assessment) -> list[CriterionScore]:
    """The criteria of a scored offer with their explanations (a stale figure says so)."""
    ctx = a._ctx
    assert ctx is not None and a._scores is not None
    out = []
    for (name, weight), score in zip(ctx.weights.items(), a._scores, strict=True):
        reason = EXPLANATIONS[name](a, ctx)
        if a.stale and a.stale & CRITERION_FIGURES.get(name, _NO_KEYS):
            reason = _stale_reason(reason)
        out.append(CriterionScore(name, weight, score, reason))
    return out


# ---------------------------------------------------------------- the run
def evidence_settings() -> dict[str, Any]:
    """How evidence counts: stale age, estimate margin, claim ratios and score factors (knowledge base)."""
    settings = assumptions()["evidence"]
    return {
        "stale_after_days": int(settings["stale_after_days"]["value"]),
        "estimate_exclude_margin": float(settings["estimate_exclude_margin"]["value"]),
        "stale_factor": float(load("scoring")["evidence"]["stale_factor"]),
        "below_claim_factor": load("scoring")["evidence"]["below_claim_factor"],
        "thresholds": benchmark_thresholds(),
    }


def weights_for(needs: Needs) -> dict[str, float]:
    """Criterion weights for the case's workload kind, its priorities boosted."""
    scoring = load("scoring")
    multiplier = float(scoring["priority_multiplier"])
    weights = {name: float(value) for name, value in scoring["weights"][needs.kind.value].items()}
    for name in needs.priorities:
        weights[name] = weights.get(name, 0.0) * multiplier if weights.get(name) else 5.0 * multiplier
    return weights


def context(needs: Needs, today: date) -> Context:
    """The per-run values every check and criterion reads (constants, weights, the stale date)."""
    evidence = evidence_settings()
    return Context(
        needs=needs,
        today=today,
        network=network_constants(),
        typical_storage=assumptions()["storage"]["typical"],
        scoring=load("scoring"),
        weights={name: weight for name, weight in weights_for(needs).items() if weight > 0},
        evidence=evidence,
        stale_before=today - timedelta(days=int(evidence["stale_after_days"])),
    )


def assess(offer: OfferFacts, ctx: Context, verdicts: dict[str, dict[Any, Outcome]]) -> Assessment:
    """Every constraint's reasons and values for one offer; offers without measured figures share a
    constraint's verdict by its key through `verdicts` (per constraint name)."""
    a = Assessment(offer)
    measured = bool(offer.measurements)
    for name, check in CONSTRAINTS.items():
        spec = CONSTRAINT_SPECS[name]
        if spec.measured_only and not measured:
            continue
        key_of = spec.key
        if key_of is None or (measured and spec.reads_measurements):
            check(a, ctx)
            continue
        known = verdicts.setdefault(name, {})
        key = key_of(offer)
        outcome = known.get(key)
        if outcome is None:
            outcome = known[key] = verdict(name, offer, ctx)
        if outcome is not EMPTY:
            outcome.apply(a)
    return a


def verdict(name: str, offer: OfferFacts, ctx: Context) -> Outcome:
    """One constraint's verdict on one offer, as recorded on a blank assessment."""
    spec = CONSTRAINT_SPECS[name]
    if spec.outcome_of is not None:
        return spec.outcome_of(offer, ctx)
    return Outcome.record(CONSTRAINTS[name], offer, ctx, spec.sets)


def score(a: Assessment, ctx: Context) -> None:
    """Score an offer that passed every constraint (ctx.cheapest set); a stale figure weighs less."""
    weights = ctx.weights
    total = sum(weights.values())
    stale_factor = float(ctx.evidence["stale_factor"])
    points, scores = 0.0, []
    for name, weight in weights.items():
        value = _clamped(CRITERIA[name](a, ctx))
        if a.stale and a.stale & CRITERION_FIGURES.get(name, _NO_KEYS):
            value *= stale_factor
        scores.append(value)
        points += weight * value
    a._scores, a._ctx = scores, ctx
    a.score = round(points / total * 100 * a.penalty, 1) if total else 0.0


def _clamped(score: float) -> float:
    return min(1.0, max(0.0, score)) if math.isfinite(score) else 0.0


def assessment_dict(a: Assessment, needs: Needs) -> dict[str, Any]:
    """JSON form of one assessed offer."""
    offer, labels = a.offer, load("scoring")["criteria"]
    cost_zh, cost_en = a.cost_text(needs) or (None, None)
    return {
        "rank": a.rank,
        "offer_id": offer.id,
        "offer_name": offer.name,
        "offer_kind": offer.offer_kind,
        "provider_id": offer.provider.id,
        "provider_name": offer.provider.name,
        "gpu_model": offer.gpu_model,
        "gpus_per_node": offer.gpus_per_node,
        "datacenter": {
            "name": offer.datacenter_name,
            "province": offer.datacenter_province,
            "city": offer.datacenter_city,
        },
        "monthly_cost_cny": round(a.cost.value, 2) if a.cost and a.cost.value is not None else None,
        "cost_basis": a.cost.basis if a.cost else "unknown",
        "cost_arithmetic_zh": cost_zh,
        "cost_arithmetic_en": cost_en,
        "score": a.score,
        "excluded": bool(a.excluded),
        "excluded_because": [reason.to_dict() for reason in a.excluded],
        "measure_before_signing": bool(a.verify) and not a.excluded,
        "to_confirm": bool(a.confirm) and not a.excluded,
        "confirm": [_confirm_dict(key) for key in a.confirm],
        "verify": [{"key": key, "checklist_key": VERIFY_ITEMS.get(key)} for key in a.verify],
        "stale": sorted(a.stale),
        "score_factor": round(a.penalty, 3),
        "marks": [reason.to_dict() for reason in a.marks],
        "reasons": [item.to_dict(labels) for item in a.criteria],
        "figures": [figure.to_dict() for figure in figures_of(a)],
        "office_rtt_ms": round(a.office_rtt_ms, 1) if a.office_rtt_ms is not None else None,
        "user_rtt_ms": {name: round(ms, 1) for name, ms in a.user_rtt_ms.items()},
        "licence": a.coverage.reason.to_dict() if a.coverage else None,
    }


def _confirm_dict(key: str) -> dict[str, Any]:
    """One unrecorded fact of an offer: what to ask the provider and the checklist item that checks it."""
    ask = confirm_asks().get(key, {})
    return {
        "key": key,
        "checklist_key": ask.get("item"),
        "ask_zh": ask.get("ask_zh"),
        "ask_en": ask.get("ask_en"),
    }
