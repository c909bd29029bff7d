"""The provider's constraints (status, licences, findings, certifications), decided once per scope."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import numpy as np

from app.advice.facts import CLAIMED, MEASURED, VERIFIED, LicenceFacts, OfferFacts, ProviderFacts
from app.advice.licensing import Coverage, check_coverage, idc_licences
from app.advice.offer_table import OfferTable, combine, factorize
from app.advice.provider_verdict import (
    evidence_failure_texts,
    fails_on_evidence_only,
    is_evidence_failure,
    is_licence_failure,
    licence_failure_texts,
)
from app.advice.ranking.assessment import Assessment, Context, Outcome, Part, Rows, RowVerdict
from app.advice.ranking.registry import constraint
from app.advice.ranking.texts import CONFIRM_TEXTS, unrecorded
from app.advice.reasons import Reason, Texts


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


def provider_outcome(
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
        Part(PROVIDER_COLUMNS[name], partial(provider_outcome, checks=(check,)), PROVIDER_ROWS.get(name))
        for name, check in PROVIDER_CONSTRAINTS.items()
    ]


@constraint(
    "provider",
    columns=("provider.id", "datacenter_province", "offer_kind"),
    sets=("coverage",),
    outcome_of=provider_outcome,
    parts=_provider_parts,
)
def _provider(a: Assessment, ctx: Context) -> None:
    provider_outcome(a.offer, ctx).apply(a)


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
            scope.confirm.append(("iso27001", unrecorded("iso27001", *CONFIRM_TEXTS["iso27001"])))
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
            ("dengbao", unrecorded("dengbao", f"{zh}（要求 {wanted} 级）", f"{en} (level {wanted} needed)"))
        )
        return
    have = f"{level} 级" if level else "已过期的记录"
    have_en = f"level {level}" if level else "an expired record only"
    scope.exclude(
        "compliance.dengbao",
        f"你要求等保 {wanted} 级及以上，该供应商为{have}",
        f"you require MLPS level {wanted} or above; this provider has {have_en}",
        source=CLAIMED,
    )
