"""Labels of enum values, field names and audit vocabulary for pages: the vocabulary's table, read lazily."""

from __future__ import annotations

from typing import Any

from flask_babel import LazyString
from flask_babel import lazy_gettext as _l
from sqlmodel import SQLModel

from app.core import vocabulary


def _lazy(kind: str) -> dict[str, Any]:
    """The vocabulary's labels of a kind as lazy strings: read in the language of the page that shows them."""
    return {value: LazyString(vocabulary.label, value, kind=kind) for value in vocabulary.order(kind)}


# Every label group pages use, by vocabulary kind (app/core/vocabulary.py holds the wording).
GROUPS: dict[str, dict[str, Any]] = {
    kind: _lazy(kind)
    for kind in (
        "provider_status",
        "licence_status",
        "certificate_status",
        "registration_status",
        "filing_kind",
        "identifier_kind",
        "certification_kind",
        "offer_kind",
        "rdma_type",
        "bandwidth_type",
        "storage_type",
        "role",
        "business_item",
        "action",
        "entity",
        "collection",
        "field",
        "bench_suite",
        "bench_step",
        "step_status",
        "net_path",
        "storage_class",
        "command_role",
        "unit",
        "bench_check",
        "figure",
        "bench_verdict",
        "job_state",
        "quote_channel",
        "lookup_state",
        "run_origin",
        "severity",
        "verdict",
        "residency",
        "setting_origin",
        "decision_state",
    )
}
PROVIDER_STATUS = GROUPS["provider_status"]
RESIDENCY = GROUPS["residency"]
SETTING_ORIGIN = GROUPS["setting_origin"]
LICENCE_STATUS = GROUPS["licence_status"]
CERTIFICATE_STATUS = GROUPS["certificate_status"]
FILING_KIND = GROUPS["filing_kind"]
IDENTIFIER_KIND = GROUPS["identifier_kind"]
CERTIFICATION_KIND = GROUPS["certification_kind"]
OFFER_KIND = GROUPS["offer_kind"]
RDMA_TYPE = GROUPS["rdma_type"]
BANDWIDTH_TYPE = GROUPS["bandwidth_type"]
STORAGE_TYPE = GROUPS["storage_type"]
ROLE = GROUPS["role"]
BUSINESS_ITEM = GROUPS["business_item"]
AUDIT_ACTION = GROUPS["action"]
ENTITY = GROUPS["entity"]
COLLECTION = GROUPS["collection"]
FIELD = GROUPS["field"]
BENCH_CHECK = GROUPS["bench_check"]
FIGURE = GROUPS["figure"]
BENCH_VERDICT = GROUPS["bench_verdict"]
RUN_ORIGIN = GROUPS["run_origin"]
BENCH_SUITE = GROUPS["bench_suite"]
BENCH_STEP = GROUPS["bench_step"]
STEP_STATUS = GROUPS["step_status"]
NET_PATH = GROUPS["net_path"]
STORAGE_CLASS = GROUPS["storage_class"]
COMMAND_ROLE = GROUPS["command_role"]
UNIT = GROUPS["unit"]
SEVERITY = GROUPS["severity"]
VERDICT = GROUPS["verdict"]
CHECK_VERDICT = {value: VERDICT[value] for value in ("pass", "needs_review", "fail")}  # a check run's
JOB_STATE = GROUPS["job_state"]
LOOKUP_STATE = GROUPS["lookup_state"]
QUOTE_CHANNEL = GROUPS["quote_channel"]
TRISTATE = {"": _l("未知"), "true": _l("是"), "false": _l("否")}

# Bootstrap colour of each provider status badge.
PROVIDER_STATUS_COLOUR = {
    "candidate": "secondary",
    "approved": "success",
    "rejected": "danger",
    "suspended": "warning",
}

STEP_STATUS_COLOUR = {
    "pending": "secondary",
    "running": "primary",
    "ok": "success",
    "failed": "danger",
    "not_installed": "warning",
    "cancelled": "dark",
    "skipped": "light",
    "interrupted": "warning",
}


def label(value: Any, group: str) -> Any:
    """Label of `value` in a label group; unknown values are shown as they are."""
    if value is None:
        return ""
    key = getattr(value, "value", value)
    return GROUPS[group].get(key, key)


def field_label(name: str) -> Any:
    """Label of a field name (the last part of a path such as licences[0].number_raw)."""
    return FIELD.get(name.rsplit(".", 1)[-1], name)


def value_label(field: str, value: Any) -> Any:
    """Label of a stored value of `field` when it is an enum value, else the value itself."""
    if field in vocabulary.FIELD_KINDS and isinstance(value, str):
        return vocabulary.value_label(field, value)
    if isinstance(value, bool):
        return TRISTATE["true" if value else "false"]
    if isinstance(value, list):
        return ", ".join(str(item) for item in value) if value else "—"
    if value is None or value == "":
        return "—"
    if isinstance(value, (int, float)):
        return number(value, grouping=False)
    return value


def number(value: Any, *, grouping: bool = True) -> Any:
    """Numbers without a useless '.0' and, by default, with thousands separators; None stays None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float) and not value.is_integer():
        text = f"{value:,.3f}" if grouping else f"{value:.3f}"
        return text.rstrip("0").rstrip(".")
    return f"{int(value):,}" if grouping else str(int(value))


# Columns the audit trail records that say nothing to a reader.
_HIDDEN_CHANGES = {"id", "provider_id"}


def ordered_changes(changes: dict[str, Any], entity: str = "") -> list[tuple[str, Any, Any]]:
    """Audit changes as (field, before, after) in the table's column order, bookkeeping left out."""
    table = SQLModel.metadata.tables.get(entity)
    order = {name: index for index, name in enumerate(table.columns.keys())} if table is not None else {}
    rows = [(name, *pair) for name, pair in changes.items() if name not in _HIDDEN_CHANGES and len(pair) == 2]
    return sorted(rows, key=lambda row: (order.get(row[0], len(order)), row[0]))
