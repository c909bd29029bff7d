"""Export every provider as JSON or CSV (one row per offer, Chinese or English headers)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from flask_babel import gettext as _
from sqlmodel import Session

from app.core import clock
from app.core.errors import InvalidInput
from app.registry.import_plan import plain
from app.registry.provider_list import ProviderQuery, list_providers
from app.registry.providers import PROVIDER_FIELDS, provider_input
from app.registry.transfer.columns import (
    DATACENTER_COLUMNS,
    HEADER_LANGUAGES,
    ID_COLUMN,
    NUMBERED,
    OFFER_COLUMNS,
    cell_text,
    csv_header,
    zh_column,
)
from app.registry.transfer.formats import FORMAT_NAME, FORMAT_VERSION, check_format

_EXPORT_PAGE = 100


def _all_providers(session: Session) -> list[dict[str, Any]]:
    """Every provider as a portable ProviderCreate-shaped dict with its id first, in name order."""
    result: list[dict[str, Any]] = []
    page = 1
    while True:
        batch = list_providers(session, query=ProviderQuery(sort="name", page=page, per_page=_EXPORT_PAGE))
        result.extend(
            {"id": provider.id, **plain(provider_input(provider, portable=True))} for provider in batch.items
        )
        if page >= batch.pages:
            return result
        page += 1


def _provider_level(provider: dict[str, Any], counts: dict[str, int]) -> dict[str, str]:
    row = {name: cell_text(provider.get(name)) for name in (ID_COLUMN, *PROVIDER_FIELDS)}
    for collection, (prefix, fields) in NUMBERED.items():
        items = provider.get(collection) or []
        for number in range(1, max(1, counts.get(collection, 0)) + 1):
            item = items[number - 1] if number <= len(items) else {}
            for name in fields:
                row[f"{prefix}_{number}_{name}"] = cell_text(item.get(name))
    return row


def _datacenter_cells(datacenter: dict[str, Any] | None) -> dict[str, str]:
    datacenter = datacenter or {}
    return {column: cell_text(datacenter.get(name)) for column, name in DATACENTER_COLUMNS.items()}


def _offer_cells(offer: dict[str, Any]) -> dict[str, str]:
    return {column: cell_text(offer.get(name)) for column, name in OFFER_COLUMNS.items()}


def _provider_rows(provider: dict[str, Any], counts: dict[str, int]) -> list[dict[str, str]]:
    """CSV rows of one provider; datacenter-only rows keep datacenters in their stored order."""
    level = _provider_level(provider, counts)
    datacenters = provider.get("datacenters") or []
    offers = provider.get("offers") or []
    by_name = {dc["name"]: dc for dc in datacenters}
    used = list(dict.fromkeys(o["datacenter_name"] for o in offers if o.get("datacenter_name")))
    unused = [dc for dc in datacenters if dc["name"] not in used]
    lead: list[dict[str, Any]] = []
    tail: list[dict[str, Any]] = unused
    if used + [dc["name"] for dc in unused] != [dc["name"] for dc in datacenters]:
        # Import orders datacenters by first appearance: list them all first to keep their order.
        lead, tail = datacenters, []
    rows = [{**level, **_datacenter_cells(dc)} for dc in lead]
    for offer in offers:
        rows.append(
            {**level, **_datacenter_cells(by_name.get(offer.get("datacenter_name"))), **_offer_cells(offer)}
        )
    rows.extend({**level, **_datacenter_cells(dc)} for dc in tail)
    return rows or [level]


def _export_csv(providers: list[dict[str, Any]], headers: str = "en") -> str:
    counts = {
        collection: max((len(p.get(collection) or []) for p in providers), default=0)
        for collection in NUMBERED
    }
    header = csv_header(counts)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=header, restval="", lineterminator="\r\n")
    writer.writerow({column: zh_column(column) if headers == "zh" else column for column in header})
    for provider in providers:
        writer.writerows(_provider_rows(provider, counts))
    return "\ufeff" + buffer.getvalue()


def _export_json(providers: list[dict[str, Any]]) -> str:
    document = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": clock.now().isoformat(timespec="seconds"),
        "count": len(providers),
        "providers": providers,
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def export_providers(session: Session, format: str = "json", headers: str = "en") -> str:
    """Every provider with all nested records as JSON or CSV text (CSV starts with a BOM for Excel).

    `headers="zh"` gives the CSV Chinese column headers (import accepts either)."""
    check_format(format)
    if headers not in HEADER_LANGUAGES:
        raise InvalidInput(_("列名语言须为 en 或 zh"), field="headers")
    providers = _all_providers(session)
    return _export_json(providers) if format == "json" else _export_csv(providers, headers)
