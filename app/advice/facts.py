"""Plain, immutable facts about offers, providers, licences, findings and measurements.

The services layer builds these from the database (or the perf script builds thousands of them); the
ranking reads nothing else, so it stays pure and fast.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from app.vetting.identifiers import identify

# Where a figure came from, strongest first.
MEASURED = "measured"  # a benchmark run on a trial server
VERIFIED = "verified"  # confirmed by a credential check / official lookup
CLAIMED = "claimed"  # what the provider states (registry data)
ASSUMED = "assumed"  # a typical value for the kind of thing (knowledge base), not about this offer
ESTIMATED = "estimated"  # computed by this product from other figures (e.g. RTT from distance)
UNKNOWN = "unknown"

SOURCE_LABELS = {
    MEASURED: ("实测", "measured"),
    VERIFIED: ("已核实", "verified"),
    CLAIMED: ("服务商声称", "claimed by provider"),
    ASSUMED: ("按类型估算", "typical for its type (assumed)"),
    ESTIMATED: ("估算", "estimated"),
    UNKNOWN: ("未知", "unknown"),
}


@dataclass(frozen=True)
class LicenceFacts:
    """A licence as recorded, with what its number says about issuer and province."""

    number: str
    kind: str  # identify() kind: "licence", or e.g. "icp_filing" when a filing was shown as the licence
    province: str | None  # province of a provincial licence (from its prefix)
    issuer_level: str | None  # "provincial" or "ministry"
    foreign_invested: bool
    business_items: frozenset[str]
    resource_collab: bool | None
    coverage: tuple[str, ...]
    status: str
    issued_on: date | None = None
    expires_on: date | None = None

    @classmethod
    def from_record(
        cls,
        *,
        number_raw: str,
        business_items: list[str] | tuple[str, ...],
        b11_includes_resource_collab: bool | None,
        coverage: list[str] | tuple[str, ...],
        status: Any,
        issued_on: date | None,
        expires_on: date | None,
    ) -> LicenceFacts:
        """Facts of one licence record; the number is parsed to learn its province and issuer level."""
        number, kind, province, issuer_level, foreign_invested = parse_licence_number(number_raw)
        return cls(
            number=number,
            kind=kind,
            province=province,
            issuer_level=issuer_level,
            foreign_invested=foreign_invested,
            business_items=frozenset(business_items),
            resource_collab=b11_includes_resource_collab,
            coverage=tuple(coverage),
            status=getattr(status, "value", status),
            issued_on=issued_on,
            expires_on=expires_on,
        )


# Cached: every advice reads every licence of the registry, and a number always parses the same way.
@functools.lru_cache(maxsize=65536)
def parse_licence_number(number_raw: str) -> tuple[str, str, str | None, str | None, bool]:
    """(normalised number, kind, province, issuer level, foreign-invested) of a licence number."""
    ident = identify(number_raw)
    parts = ident.parts
    return (
        ident.normalized or number_raw,
        ident.kind,
        ident.province,
        parts.get("issuer_level"),
        bool(parts.get("foreign_invested")),
    )


@dataclass(frozen=True)
class FindingFacts:
    """A stored finding of a credential (or benchmark) check about a provider."""

    rule_id: str
    severity: str  # blocker | warning | info
    message_zh: str
    message_en: str
    red_flag: int | None = None
    subject: str = ""
    link: str | None = None


@dataclass(frozen=True)
class CheckFacts:
    """That a credential check ran for a provider, when, and where to see it."""

    at: datetime | None
    link: str | None = None
    label: str = ""
    run_id: int | None = None  # the stored check run
    verdict: str = ""  # its verdict: pass / needs_review / fail ("" when not known)


@dataclass(frozen=True)
class Measurement:
    """A figure measured on a trial server (or verified elsewhere), beating what the offer claims."""

    value: float
    unit: str
    source: str = MEASURED
    link: str | None = None
    at: datetime | None = None
    note: str = ""
    run_id: int | None = None
    origin: str = "executed"  # "executed" by gpuvet, or "uploaded" by hand (trusted less)

    # As OfferFacts.of: the frozen dataclass __init__ costs about 2 µs, and one advice reads tens of
    # thousands of measured figures.
    @classmethod
    def of(cls, values: dict[str, Any]) -> Measurement:
        """A measurement from the value of every field, built without the frozen dataclass's checks."""
        measured = object.__new__(cls)
        measured.__dict__.update(values)
        return measured


@dataclass(frozen=True)
class ProviderFacts:
    """What the ranking needs to know about a provider."""

    id: int
    name: str
    short_name: str | None = None
    status: str = "candidate"
    licences: tuple[LicenceFacts, ...] = ()
    iso27001: bool = False
    dengbao_level: int | None = None
    certifications_on_record: frozenset[str] = frozenset()  # kinds with any record, expired ones included
    discloses_network: bool | None = None
    discloses_storage: bool | None = None
    check: CheckFacts | None = None
    findings: tuple[FindingFacts, ...] = ()

    @property
    def display_name(self) -> str:
        """Short name when there is one."""
        return self.short_name or self.name

    @property
    def licence_terms(self) -> tuple[tuple[Any, ...], ...]:
        """What decides licence coverage, without the numbers (equal terms are judged alike)."""
        return tuple(
            (
                lic.kind,
                lic.province,
                lic.issuer_level,
                lic.business_items,
                lic.resource_collab,
                lic.coverage,
                lic.status,
                lic.issued_on,
                lic.expires_on,
            )
            for lic in self.licences
        )

    @property
    def blocker_count(self) -> int:
        """Blocker findings of the credential rules (benchmark findings are weighed per offer instead)."""
        return sum(
            1 for f in self.findings if f.severity == "blocker" and not f.rule_id.startswith("benchmarks.")
        )

    @property
    def credential_standing(self) -> tuple[bool, int]:
        """(never checked, warning count): what the credentials score reads."""
        warnings = sum(1 for f in self.findings if f.severity == "warning")
        return self.check is None and not self.findings, warnings


@dataclass(frozen=True)
class OfferFacts:
    """One offer of the registry with its provider and datacenter, ready to be ranked."""

    id: int
    provider: ProviderFacts
    name: str | None
    offer_kind: str
    gpu_model: str
    gpus_per_node: int
    gpu_memory_gb: int | None = None
    intranet_gbps: float | None = None
    rdma_type: str = "none"
    rdma_gbps: float | None = None
    public_mbps: float | None = None
    bandwidth_type: str = "unknown"
    storage_type: str = "unknown"
    storage_capacity_gb: int | None = None
    nominal_iops: int | None = None
    price_gpu_hour_cny: float | None = None
    price_month_cny: float | None = None
    datacenter_name: str | None = None
    datacenter_province: str | None = None
    datacenter_city: str | None = None
    measurements: dict[str, Measurement] = field(default_factory=dict)

    # The frozen dataclass __init__ sets each field through object.__setattr__ (about 2 µs an offer, 40 ms
    # for the 20,000 offers one advice reads); `values` must name every field.
    @classmethod
    def of(cls, values: dict[str, Any]) -> OfferFacts:
        """An offer's facts from the value of every field, built without the frozen dataclass's checks."""
        facts = object.__new__(cls)
        facts.__dict__.update(values)
        return facts

    @property
    def label(self) -> str:
        """Provider and offer name for lists."""
        return f"{self.provider.display_name} · {self.name or self.gpu_model}"
