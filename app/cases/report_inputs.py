"""The case report's inputs (a complete case and its advice); the checklist ticks of the provider report."""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlmodel import Session

from app.cases import cases
from app.cases.quote_comparison import report_comparison
from app.reports.sources import plain, source

CASE_SCHEMA = "gpuvet-case-report/1"

# Eligible offers, and excluded ones (fewest reasons first), a case report keeps of its advice: the counts
# still cover every offer, and a registry of 20,000 offers does not make a 20,000-row snapshot and PDF.
CASE_REPORT_OFFERS = 50


def case_inputs(session: Session, *, case_id: int, today: date) -> dict[str, Any]:
    """A complete procurement case: its answers and the advice (requirements, ranking, checklist, FAQ)."""
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
        "comparison": plain(report_comparison(session, case_id=case.id, advice=advice)),
    }


# ---------------------------------------------------------------- checklist ticks (issue 5)
@source("checklist", module="app.models.cases")
def _checklist(session: Session, provider: Any) -> dict[str, Any] | None:
    from sqlmodel import col, select

    from app.advice import checklist
    from app.models.cases import ChecklistTick, ProcurementCase

    rows = session.exec(
        select(ChecklistTick, ProcurementCase.title)
        .join(ProcurementCase, col(ProcurementCase.id) == ChecklistTick.case_id)
        .where(ChecklistTick.provider_id == provider.id)
        .order_by(col(ChecklistTick.case_id), col(ChecklistTick.item_key))
    ).all()
    if not rows:
        return None
    titles = {item.key: item for item in checklist.items()}
    items = []
    for tick, case_title in rows:
        item = titles.get(tick.item_key)
        note = " · ".join(
            part for part in (case_title, tick.ticked_by, tick.comment, tick.evidence_url) if part
        )
        items.append(
            {
                "text_zh": item.title_zh if item else tick.item_key,
                "text_en": item.title_en if item else tick.item_key,
                "status": checklist.PASSED if tick.done else checklist.OPEN,
                "note": note,
                "case_id": tick.case_id,
                "ticked_at": tick.ticked_at,
            }
        )
    return {"items": items}
