"""The provider report's inputs: the registry aggregate, each number's format check and every report source.

The sources kept here read credential data (checks, the shared verdict, stored evidence, credit records);
the other domains register theirs next to the data they read (app.cases, app.trials, app.disclosure).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlmodel import Session

from app.credentials.compare_runs import changes_since_previous_export
from app.models.io import (
    CertificationPublic,
    DatacenterPublic,
    FilingPublic,
    LicencePublic,
    OfferPublic,
    ProviderSummary,
)
from app.registry.providers import get_provider
from app.reports.sources import gather, plain, source
from app.vetting.identifiers import identify

PROVIDER_SCHEMA = "gpuvet-provider-report/1"


def _dump(model: type, record: Any) -> dict[str, Any]:
    return model.model_validate(record).model_dump(mode="json")


def provider_inputs(session: Session, *, provider_id: int, today: date) -> dict[str, Any]:
    """The provider aggregate, each number's format check and every report source, as plain data."""
    provider = get_provider(session, provider_id=provider_id)
    datacenters = {datacenter.id: datacenter.name for datacenter in provider.datacenters}
    return {
        "schema": PROVIDER_SCHEMA,
        "today": today.isoformat(),
        "provider": _dump(ProviderSummary, provider),
        "uscc_check": plain(identify(provider.uscc).to_dict()) if provider.uscc else None,
        "licences": [
            {**_dump(LicencePublic, licence), "check": plain(identify(licence.number_raw).to_dict())}
            for licence in provider.licences
        ],
        "filings": [
            {**_dump(FilingPublic, filing), "check": plain(identify(filing.number_raw).to_dict())}
            for filing in provider.filings
        ],
        "certifications": [_dump(CertificationPublic, item) for item in provider.certifications],
        "datacenters": [_dump(DatacenterPublic, item) for item in provider.datacenters],
        "offers": [
            {**_dump(OfferPublic, offer), "datacenter_name": datacenters.get(offer.datacenter_id)}
            for offer in provider.offers
        ],
        "sources": {**gather(session, provider), "changes": _changes(session, provider.id, today)},
    }


def _changes(session: Session, provider_id: int, today: date) -> dict[str, Any]:
    """The change events since the provider's previous export from before `today` (issue 12), as a source."""
    return {"status": "ok", "data": plain(changes_since_previous_export(session, provider_id, today=today))}


# ---------------------------------------------------------------- credential checks (issue 3)
@source("checks", module="app.credentials.checks")
def _checks(session: Session, provider: Any) -> dict[str, Any] | None:
    from app.credentials import checks

    run = checks.latest_check(session, provider_id=provider.id)
    if run is None:
        return None
    return {
        "id": run.id,
        "verdict": run.verdict,
        "checked_on": run.checked_on,
        "created_at": run.created_at,
        "created_by": run.created_by_name,
        "provider_version": run.provider_version,
        "rules_version": run.rules_version,
        "counts": {"blocker": run.blockers, "warning": run.warnings, "info": run.infos},
        "fact_errors": run.fact_errors,
        "findings": [
            checks.finding_dict(stored) for stored in checks.run_findings(session, check_run_id=run.id)
        ],
    }


# ---------------------------------------------------------------- the provider verdict (issue 10)
@source("verdict", module="app.credentials.verdicts")
def _verdict(session: Session, provider: Any) -> dict[str, Any]:
    """The same verdict the provider list and pages show (app.credentials.verdicts)."""
    from app.credentials.verdicts import verdict_of

    verdict = verdict_of(session, provider.id)
    return {**verdict.to_dict(), "items": [item.to_dict() for item in verdict.items]}


# ---------------------------------------------------------------- stored evidence (issue 3)
# Fetches that show something about the provider; tokens and captchas are plumbing, not evidence.
EVIDENCE_PURPOSES = ("footer", "footer_page", "icp_query", "licence_query")
MAX_EVIDENCE = 100


@source("evidence", module="app.credentials.evidence")
def _evidence(session: Session, provider: Any) -> list[dict[str, Any]] | None:
    from app.credentials import evidence

    rows, _total = evidence.list_evidence(
        session, provider_id=provider.id, purposes=EVIDENCE_PURPOSES, per_page=MAX_EVIDENCE
    )
    labels = getattr(evidence, "PURPOSES", {})
    return [
        {
            **evidence.evidence_ref(row),
            "title_zh": labels.get(row.purpose, (row.purpose, row.purpose))[0],
            "title_en": labels.get(row.purpose, (row.purpose, row.purpose))[1],
            "status": row.status,
            "error": row.error_code,
        }
        for row in reversed(rows)  # oldest first, so E-numbers follow the order of fetching
    ]


# ---------------------------------------------------------------- enterprise credit (issue 24)
@source("credit", module="app.credentials.credit")
def _credit(session: Session, provider: Any) -> dict[str, Any] | None:
    """The latest credit record of each public system, and how far the credit item is verified."""
    from app.credentials.credit import report_credit

    return report_credit(session, provider)
