"""Gather everything a provider report shows into one JSON-plain snapshot of its inputs."""

from __future__ import annotations

import hashlib
import json
from datetime import date
from typing import Any

from sqlmodel import Session

from app.models.io import (
    CertificationPublic,
    DatacenterPublic,
    FilingPublic,
    LicencePublic,
    OfferPublic,
    ProviderSummary,
)
from app.registry.providers import get_provider
from app.reports.sources import gather, plain
from app.vetting.identifiers import identify

PROVIDER_SCHEMA = "gpuvet-provider-report/1"
# Eligible offers, and excluded ones (fewest reasons first), a case report keeps of its advice: the counts
# still cover every offer, and a registry of 20,000 offers does not make a 20,000-row snapshot and PDF.
CASE_REPORT_OFFERS = 50


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
    from app.credentials.compare_runs import changes_since_previous_export

    return {"status": "ok", "data": plain(changes_since_previous_export(session, provider_id, today=today))}


def canonical_json(data: Any) -> bytes:
    """Stable JSON bytes (sorted keys, no spaces) for hashing a snapshot."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()


def snapshot_sha256(data: Any) -> str:
    """SHA-256 of the canonical JSON of `data`."""
    return hashlib.sha256(canonical_json(data)).hexdigest()


CASE_SCHEMA = "gpuvet-case-report/1"


def case_inputs(session: Session, *, case_id: int, today: date) -> dict[str, Any]:
    """A complete procurement case: its answers and the advice (requirements, ranking, checklist, FAQ)."""
    from app.cases import cases  # procurement cases (issue 5); callers check they are installed

    case = cases.get_case(session, case_id=case_id)
    advice = cases.advise_case(session, case_id=case_id, today=today)
    return {
        "schema": CASE_SCHEMA,
        "today": today.isoformat(),
        "case": plain(
            {
                "id": case.id,
                "title": case.title,
                "workload_kind": case.workload_kind,
                "owner_name": case.owner_name,
                "version": case.version,
                "created_at": case.created_at,
                "updated_at": case.updated_at,
            }
        ),
        "answers": plain(case.answers),
        "advice": plain(advice.to_dict(limit=CASE_REPORT_OFFERS)),
    }
