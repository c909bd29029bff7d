"""The registry's offers as the advice reads them: provider and offer facts, with their measurements."""

from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from flask import has_request_context, url_for
from sqlmodel import Session, col

from app.advice.facts import (
    MEASURED,
    CheckFacts,
    FindingFacts,
    LicenceFacts,
    Measurement,
    OfferFacts,
    ProviderFacts,
)
from app.core import clock
from app.models import Certification, Datacenter, Licence, Offer, Provider
from app.models.checks import CheckRun, StoredFinding
from app.models.enums import CertificationKind
from app.models.latest_runs import latest_run_ids
from app.trials.measurements import counting_runs
from benchmarks.gc_pause import without_gc


def _red_flags() -> dict[str, int | None]:
    from app.vetting.findings import load_rules

    return {rule_id: rule.red_flag for rule_id, rule in load_rules().items()}


Providers = Collection[int] | None  # the providers whose rows to read (None: every provider)


def _only(statement: Any, column: Any, providers: Providers) -> Any:
    """`statement` limited to rows whose `column` names one of `providers` (unchanged for None)."""
    return statement if providers is None else statement.where(column.in_(sorted(providers)))


def _latest_checks(session: Session, providers: Providers = None) -> dict[int, Any]:
    """Each provider's most recent check run (id, provider, time, verdict: no ORM objects), in one
    statement."""
    columns = (col(CheckRun.id), col(CheckRun.provider_id), col(CheckRun.created_at), col(CheckRun.verdict))
    statement = sa.select(*columns).where(col(CheckRun.id).in_(latest_run_ids(providers)))
    return {row.provider_id: row for row in session.connection().execute(statement)}


FINDING_COLUMNS = ("provider_id", "rule_id", "red_flag", "severity", "subject", "message_zh", "message_en")


def _latest_findings(session: Session, providers: Providers = None) -> dict[int, list[Any]]:
    """The findings of each provider's most recent check run (the columns advice reads), in one statement."""
    table: Any = StoredFinding.__table__
    stmt = (
        sa.select(*(table.c[name] for name in FINDING_COLUMNS))
        .where(table.c.check_run_id.in_(latest_run_ids(providers)))
        .order_by(table.c.check_run_id, table.c.position)
    )
    found: dict[int, list[Any]] = {}
    for row in session.connection().execute(stmt):
        found.setdefault(row.provider_id, []).append(row)
    return found


def _finding_facts(rows: list[Any], flags: dict, link: str | None) -> tuple[FindingFacts, ...]:
    return tuple(
        FindingFacts(
            rule_id=row.rule_id,
            severity=getattr(row.severity, "value", row.severity),
            message_zh=row.message_zh,
            message_en=row.message_en,
            red_flag=getattr(row, "red_flag", None) or flags.get(row.rule_id),
            subject=getattr(row, "subject", "") or "",
            link=link,
        )
        for row in rows
    )


def _provider_facts(
    provider: Any,
    records: dict[str, list[Any]],
    today: date,
    stored: Any,
    findings: list[Any],
    flags: dict,
    link: str | None,
) -> ProviderFacts:
    """A provider's facts from its row and its licence and certification rows."""
    licences = tuple(
        LicenceFacts.from_record(
            number_raw=licence.number_raw,
            business_items=licence.business_items,
            b11_includes_resource_collab=licence.b11_includes_resource_collab,
            coverage=licence.coverage,
            status=licence.status,
            issued_on=licence.issued_on,
            expires_on=licence.expires_on,
        )
        for licence in records.get("licences", ())
    )
    certifications = records.get("certifications", ())
    current = [c for c in certifications if c.expires_on is None or c.expires_on >= today]
    iso = any(c.kind == CertificationKind.iso27001 for c in current)
    levels = [c.level for c in current if c.kind == CertificationKind.dengbao and c.level]
    check = (
        CheckFacts(at=stored.created_at, link=link, run_id=stored.id, verdict=stored.verdict)
        if stored is not None
        else None
    )
    return ProviderFacts(
        id=provider.id,  # type: ignore[arg-type]
        name=provider.legal_name,
        short_name=provider.short_name,
        status=getattr(provider.status, "value", provider.status),
        licences=licences,
        iso27001=iso,
        dengbao_level=max(levels) if levels else None,
        certifications_on_record=frozenset(getattr(c.kind, "value", c.kind) for c in certifications),
        discloses_network=provider.discloses_network_topology,
        discloses_storage=provider.discloses_storage_config,
        check=check,
        findings=_finding_facts(findings, flags, link),
    )


def _default_run_link(run_id: int) -> str | None:
    """The run's page while a request is served (pages and API); None elsewhere (CLI, PDF)."""
    if not has_request_context():
        return None
    return url_for("web.bench_run", run_id=run_id)


def offer_facts(
    session: Session,
    *,
    today: date | None = None,
    check_link: Callable[[int], str | None] | None = None,
    run_link: Callable[[int], str | None] | None = None,
    providers: Providers = None,
) -> list[OfferFacts]:
    """Every offer (of `providers` only, when given) with its provider's facts and measurements, in a fixed
    number of SQL statements, ordered by provider then id.

    `check_link(provider_id)` gives the address of the provider's credential-check page, when there is one;
    `run_link(run_id)` the address of a benchmark run's page (default: the web page, inside a request).
    """
    # Reading the registry allocates hundreds of thousands of objects and frees nothing cyclic: without the
    # cyclic collector meanwhile, it runs once at the end instead of rescanning the registry (half the time).
    with without_gc():
        return _offer_facts_of(session, today or clock.business_today(), check_link, run_link, providers)


def _offer_facts_of(
    session: Session,
    today: date,
    check_link: Callable[[int], str | None] | None,
    run_link: Callable[[int], str | None] | None,
    only: Providers,
) -> list[OfferFacts]:
    records = _registry_rows(session, only)
    checks, findings = _latest_checks(session, only), _latest_findings(session, only)
    flags = _red_flags() if findings else {}
    link = run_link or _default_run_link
    measured = offer_measurements(session, today=today, run_link=link, providers=only)
    providers = {row.id: row for row in _table_rows(session, Provider, PROVIDER_COLUMNS, only)}
    facts: list[OfferFacts] = []
    pfacts: ProviderFacts | None = None
    no_measurements: dict[str, Measurement] = {}
    for row in session.connection().execute(_offers_statement(only)).all():
        values = dict(zip(OFFER_FIELDS, row, strict=True))
        provider_id = values.pop("provider_id")
        if pfacts is None or pfacts.id != provider_id:
            link = check_link(provider_id) if check_link else None
            pfacts = _provider_facts(
                providers[provider_id],
                records.get(provider_id, {}),
                today,
                checks.get(provider_id),
                findings.get(provider_id, []),
                flags,
                link,
            )
        values["provider"] = pfacts
        values["measurements"] = measured.get(values["id"]) or no_measurements
        facts.append(OfferFacts.of(values))
    return facts


REGISTRY_CHILDREN = {"licences": Licence, "certifications": Certification}


# The licence columns advice reads (not the stored parse of the number: a JSON column it does not need).
REGISTRY_COLUMNS = {
    "licences": (
        "id",
        "provider_id",
        "number_raw",
        "business_items",
        "b11_includes_resource_collab",
        "coverage",
        "status",
        "issued_on",
        "expires_on",
    ),
}


PROVIDER_COLUMNS = (
    "id",
    "legal_name",
    "short_name",
    "status",
    "discloses_network_topology",
    "discloses_storage_config",
)


# OfferFacts fields read straight from an offer column (stored as plain strings, enums included).
OFFER_COLUMNS = (
    "id",
    "name",
    "offer_kind",
    "gpu_model",
    "gpus_per_node",
    "gpu_memory_gb",
    "intranet_gbps",
    "rdma_type",
    "rdma_gbps",
    "public_mbps",
    "bandwidth_type",
    "storage_type",
    "storage_capacity_gb",
    "nominal_iops",
    "price_gpu_hour_cny",
    "price_month_cny",
)


DATACENTER_COLUMNS = {"datacenter_name": "name", "datacenter_province": "province", "datacenter_city": "city"}


OFFER_FIELDS = ("provider_id", *OFFER_COLUMNS, *DATACENTER_COLUMNS)


def _offers_statement(providers: Providers = None) -> Any:
    """Every offer (the columns advice reads) with its own provider's datacenter, by provider then id."""
    offer: Any = Offer.__table__
    datacenter: Any = Datacenter.__table__
    joined = offer.outerjoin(
        datacenter,
        sa.and_(datacenter.c.id == offer.c.datacenter_id, datacenter.c.provider_id == offer.c.provider_id),
    )
    columns = [offer.c.provider_id, *(offer.c[name] for name in OFFER_COLUMNS)]
    columns += [datacenter.c[name] for name in DATACENTER_COLUMNS.values()]
    statement = sa.select(*columns).select_from(joined).order_by(offer.c.provider_id, offer.c.id)
    return _only(statement, offer.c.provider_id, providers)


def _table_rows(
    session: Session, model: Any, columns: tuple[str, ...] | None = None, providers: Providers = None
) -> list[Any]:
    """Every row of a model's table (or `columns` of it; of `providers` only, when given) as plain rows in
    id order (no ORM objects)."""
    table = model.__table__
    selected = [table.c[name] for name in columns] if columns else [table]
    owner = table.c.id if model is Provider else table.c.provider_id
    statement = _only(sa.select(*selected).order_by(table.c.id), owner, providers)
    return session.connection().execute(statement).all()


def _registry_rows(session: Session, providers: Providers = None) -> dict[int, dict[str, list[Any]]]:
    """Licences and certifications by provider id: one statement per table."""
    grouped: dict[int, dict[str, list[Any]]] = {}
    for name, model in REGISTRY_CHILDREN.items():
        for row in _table_rows(session, model, REGISTRY_COLUMNS.get(name), providers):
            grouped.setdefault(row.provider_id, {}).setdefault(name, []).append(row)
    return grouped


def offer_measurements(
    session: Session,
    *,
    today: date,
    run_link: Callable[[int], str | None] | None = None,
    providers: Providers = None,
) -> dict[int, dict[str, Measurement]]:
    """Measured figures per offer id: each figure from the run that counts (app.trials.measurements)."""
    links: dict[int, str | None] = {}

    def measurement(
        value: Any, unit: str, note: str, run_id: int, origin: str, at: datetime, _verdict: str | None
    ) -> Measurement:
        link = links.get(run_id, MISSING)
        if link is MISSING:
            link = links[run_id] = run_link(run_id) if run_link else None
        return Measurement.of(
            {
                "value": value,
                "unit": unit,
                "source": MEASURED,
                "link": link,
                "at": at,
                "note": note,
                "run_id": run_id,
                "origin": origin,
            }
        )

    return counting_runs(session, today=today, providers=providers, make=measurement)


MISSING: Any = object()
