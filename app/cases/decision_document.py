"""The signed decision document (采购决定书): its inputs, and its export as a numbered, always-signed PDF.

The inputs are plain data gathered here (the decision, its case, the chosen offers, the quote comparison,
conditions, risk acceptances, the evidence hashes); app/reports/decision_document.py words them and
app/reports/templates/decision.html lays them out. Exports are ExportRecords of kind "decision", numbered
like every other report and signed whatever GPUVET_SIGN_REPORTS says: the signature is the point.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlmodel import Session, col, select

from app.cases import cases
from app.cases import decisions as service
from app.cases.quote_comparison import report_comparison
from app.core import clock
from app.credentials import report_exports as exports
from app.models.decisions import Decision
from app.models.provider import Offer, Provider
from app.models.reports import ExportRecord, ReportKind
from app.reports.pdf import PdfRenderer
from app.reports.signing import report_signer
from app.reports.sources import plain

DECISION_SCHEMA = "gpuvet-decision/1"
# The decision's own fields the document prints (besides its state, conditions and acceptances).
DECISION_FIELDS = (
    "id",
    "case_id",
    "state",
    "scope",
    "term_months",
    "justification",
    "single_source_reason",
    "offer_ids",
    "provider_ids",
    "quote_ids",
    "proposed_by_name",
    "proposed_at",
    "decided_by_name",
    "decided_at",
    "decision_comment",
    "valid_from",
    "valid_until",
    "evidence_sha256",
    "snapshot_sha256",
)


# What an offer dict of the comparison keeps in the document (the page's dicts carry much more).
def _comparison(session: Session, decision: Decision, today: date) -> dict[str, Any]:
    """The case's quote comparison as the case page shows it now, the chosen offers' columns marked."""
    advice = cases.advise_case(session, case_id=decision.case_id, today=today)
    return report_comparison(session, case_id=decision.case_id, advice=advice, chosen=decision.offer_ids)


def chosen_offers(session: Session, decision: Decision, verdicts: dict[int, Any]) -> list[dict[str, Any]]:
    """The decision's chosen offers with their provider's name (and the verdict given for the offer)."""
    rows = session.exec(
        select(Offer, Provider.legal_name)
        .join(Provider, col(Provider.id) == Offer.provider_id)
        .where(col(Offer.id).in_(decision.offer_ids or [-1]))
    ).all()
    by_id = {offer.id: (offer, name) for offer, name in rows}
    gone = {"provider_id": None, "offer_name": None, "gpu_model": None, "gpus_per_node": None}
    return [
        {
            "offer_id": offer_id,
            "provider_id": by_id[offer_id][0].provider_id,
            "provider_name": by_id[offer_id][1],
            "offer_name": by_id[offer_id][0].name,
            "gpu_model": by_id[offer_id][0].gpu_model,
            "gpus_per_node": by_id[offer_id][0].gpus_per_node,
            "verdict": verdicts.get(offer_id),
        }
        if offer_id in by_id
        else {**gone, "offer_id": offer_id, "provider_name": f"#{offer_id}", "verdict": None}
        for offer_id in decision.offer_ids
    ]


def _conditions(session: Session, decision_id: int) -> list[dict[str, Any]]:
    conditions = service.conditions_of(session, decision_id)
    return [{"text": row.text, "due_on": row.due_on, "met_at": row.met_at} for row in conditions]


def _acceptances(session: Session, decision_id: int) -> list[dict[str, Any]]:
    acceptances = service.acceptances_of(session, decision_id)
    ids = {row.provider_id for row in acceptances}
    rows = session.exec(select(Provider.id, Provider.legal_name).where(col(Provider.id).in_(sorted(ids))))
    names = {provider_id: name for provider_id, name in rows}
    fields = ("rule_id", "subject", "severity", "message_zh", "message_en", "reason", "accepted_by_name")
    return [
        {
            **{name: getattr(row, name) for name in fields},
            "provider_name": names.get(row.provider_id, ""),
            "until": row.until,
        }
        for row in acceptances
    ]


def _signature() -> dict[str, Any] | None:
    """Who signs (the certificate's subject) and whether the certificate is self-signed; None unsigned."""
    signer = report_signer(always=True)
    return None if signer is None else {"subject": signer.subject, "self_signed": signer.self_signed}


def decision_inputs(session: Session, *, decision_id: int, today: date) -> dict[str, Any]:
    """Everything the decision document prints, as plain data (its SHA-256 is printed and stored)."""
    decision = service.get_decision(session, decision_id=decision_id)
    case = cases.get_case(session, case_id=decision.case_id)
    found = _comparison(session, decision, today)
    verdicts = found.pop("verdicts")
    fields = {name: getattr(decision, name) for name in DECISION_FIELDS}
    return plain(
        {
            "schema": DECISION_SCHEMA,
            "today": today,
            "case": {"id": case.id, "title": case.title, "owner_name": case.owner_name},
            "decision": {**fields, "effective_state": service.effective_state(decision, today)},
            "offers": chosen_offers(session, decision, verdicts),
            "conditions": _conditions(session, decision.id),
            "risk_acceptances": _acceptances(session, decision.id),
            "comparison": found,
            "signature": _signature(),
        }
    )


def decision_subject(session: Session, decision_id: int, now: datetime) -> Any:
    """The decision as a report subject (its inputs gathered now), to be signed whatever the settings say."""
    inputs = decision_inputs(session, decision_id=decision_id, today=clock.business_today(now))
    name = f"#{decision_id} {inputs['case']['title']}"
    return exports.ReportSubject(ReportKind.decision, decision_id, name, None, inputs, signed=True)


def export_decision(
    session: Session,
    *,
    decision_id: int,
    language: Any,
    author: exports.Author,
    renderer: PdfRenderer,
    now: datetime | None = None,
) -> ExportRecord:
    """Render the decision document, sign it, number it and store the export (NotFound for no decision)."""
    language = exports.parse_language(language)
    now = now or clock.now()
    subject = decision_subject(session, decision_id, now)
    return exports.export_subject(
        session, subject, language=language, author=author, renderer=renderer, now=now
    )


def _same_decision(record: ExportRecord, decision: Decision, today: date) -> bool:
    """Whether an export printed the decision as it stands now (same state, decider and snapshot)."""
    printed = (record.inputs_json.get("inputs") or {}).get("decision") or {}
    now = plain({name: getattr(decision, name) for name in DECISION_FIELDS})
    return printed.get("effective_state") == service.effective_state(decision, today) and all(
        printed.get(name) == now[name] for name in DECISION_FIELDS
    )


def decision_pdf(
    session: Session, *, decision_id: int, language: Any, author: exports.Author, renderer: PdfRenderer
) -> ExportRecord:
    """The latest export of the decision in `language` while the decision is unchanged since; else a new one.

    Downloading the document again hands out the same signed, numbered file instead of a new number.
    """
    language = exports.parse_language(language)
    decision = service.get_decision(session, decision_id=decision_id)
    today = clock.business_today()
    for record in exports.list_exports(session, kind=ReportKind.decision, subject_id=decision_id, limit=20):
        if record.language != language:
            continue
        full = exports.get_export(session, export_id=record.id)
        if _same_decision(full, decision, today) and exports.verify_export(full):
            return full
        break
    return export_decision(
        session, decision_id=decision_id, language=language, author=author, renderer=renderer
    )
