"""Turn a decision document's inputs (app.cases.decision_document) into what the decision template shows."""

from __future__ import annotations

from typing import Any

from app.core import vocabulary
from app.reports.document import fmt_number, when_text
from app.reports.labels import Labels

# Quotes per comparison table: an A4 page holds the row headings and this many columns.
QUOTES_PER_TABLE = 4
# The quote's own rows, as the case page's comparison names them (app.cases.quote_comparison.QUOTE_ROWS).
PRICE_ROWS = ("price_gpu_hour_cny", "price_month_cny")


def _field(name: str, labels: Labels) -> str:
    pair = vocabulary.LABELS["field"].get(name)
    return labels.pick(*pair) if pair else name


def quote_value(name: str, value: Any, labels: Labels) -> str:
    """One cell of the comparison: a price grouped, a yes/no or coded value as words, else as stored."""
    if value is None or value == "":
        return labels.t("dash")
    if isinstance(value, bool):
        return labels.t("yes") if value else labels.t("no")
    if name in PRICE_ROWS or isinstance(value, (int, float)):
        return fmt_number(value)
    return vocabulary.value_label(name, str(value), labels.language)


def comparison_tables(comparison: dict[str, Any], labels: Labels) -> list[dict[str, Any]]:
    """The comparison cut into tables of QUOTES_PER_TABLE columns, each row worded in this language."""
    columns = comparison.get("columns") or []
    rows = comparison.get("rows") or []
    tables = []
    for start in range(0, len(columns), QUOTES_PER_TABLE):
        part = columns[start : start + QUOTES_PER_TABLE]
        tables.append(
            {
                "columns": part,
                "rows": [
                    (_field(name, labels), [quote_value(name, c["quote"].get(name), labels) for c in part])
                    for name in rows
                ],
            }
        )
    return tables


def decision_context(inputs: dict[str, Any], meta: dict[str, Any], language: str) -> dict[str, Any]:
    """Everything the decision template needs."""
    labels = Labels(language)
    decision = inputs["decision"]
    return {
        "L": labels,
        "lang": language,
        "meta": {**meta, "created_at_text": when_text(meta.get("created_at"))},
        "inputs": inputs,
        "case": inputs["case"],
        "decision": decision,
        "proposed_at": when_text(decision.get("proposed_at")),
        "decided_at": when_text(decision.get("decided_at")),
        "running_title": inputs["case"].get("title") or "",
        "offers": inputs.get("offers") or [],
        "conditions": inputs.get("conditions") or [],
        "acceptances": inputs.get("risk_acceptances") or [],
        "comparison": inputs.get("comparison") or {},
        "tables": comparison_tables(inputs.get("comparison") or {}, labels),
        "signature": inputs.get("signature"),
        "state": labels.v("decision_state", decision.get("effective_state") or decision.get("state")),
        "num": fmt_number,
    }
