"""Read the providers of a CSV file: headers, rows grouped per provider, rows that disagree."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from typing import Any

from flask_babel import gettext as _

from app.registry import import_plan
from app.registry.providers import PROVIDER_FIELDS
from app.registry.transfer.candidates import Candidate, CsvGroup
from app.registry.transfer.columns import (
    COLLECTION_OF_PREFIX,
    DATACENTER_COLUMNS,
    ID_COLUMN,
    NUMBERED,
    NUMBERED_COLUMN,
    OFFER_COLUMNS,
    cell_text,
    cell_value,
    column_field,
    header_column,
)
from app.registry.transfer.formats import FileError
from app.registry.transfer.report import ImportProblem


def _same_provider(group: CsvGroup | None, uscc: str | None, name: str | None) -> bool:
    if group is None:
        return False
    if uscc and group.uscc:
        return uscc == group.uscc
    if name and group.name:
        return name == group.name
    return not uscc and not name


def _delimiter(text: str) -> str:
    first = text.split("\n", 1)[0]
    return max((",", ";", "\t"), key=first.count)


def _read_header(raw: list[str], problems: list[ImportProblem]) -> tuple[list[str | None], dict[str, str]]:
    """The column of every header cell (None: skipped) and how the file names each column."""
    header: list[str | None] = []
    named: dict[str, str] = {}
    for cell in raw:
        text = cell.strip().removeprefix("\ufeff").strip()
        if not text:
            header.append(None)
            continue
        column = header_column(text)
        if column is None:
            problems.append(
                ImportProblem(1, text, _("不认识的列名；可用的列名见导出文件（英文或中文列名均可）"))
            )
            header.append(None)
            continue
        if column in named:
            problems.append(ImportProblem(1, text, _("列名重复：与“%(first)s”是同一列", first=named[column])))
            header.append(None)
            continue
        named[column] = text
        header.append(column)
    if "legal_name" not in named and "uscc" not in named:
        problems.append(ImportProblem(1, "legal_name", _("缺少企业名称列（或统一社会信用代码列）")))
    return header, named


def _merge_level(group: CsvGroup, row: int, level: dict[str, Any], problems: list[ImportProblem]) -> None:
    for column, value in level.items():
        if value is None:
            continue
        if group.level.get(column) is None:
            group.level[column] = value
            group.level_rows[column] = row
        elif group.level[column] != value:
            # Resolved once the stored provider is known: an edit in one row of many is no contradiction.
            variants = group.variants.setdefault(column, {group.level[column]: group.level_rows[column]})
            variants.setdefault(value, row)


def _disagreements(column: str, variants: dict[Any, int]) -> list[ImportProblem]:
    """Rows of one provider that hold different values in a provider-level column."""
    (first_value, first_row), *others = variants.items()
    return [
        ImportProblem(
            row,
            column,
            _(
                "与第 %(first)s 行的“%(value)s”不一致；同一供应商的各行须相同或留空（或只改其中一行）",
                first=first_row,
                value=first_value,
            ),
        )
        for _value, row in others
    ]


def _stored_cell(stored: dict[str, Any], column: str) -> Any:
    """A stored provider's value of a provider-level CSV column, as import reads the exported cell."""
    field_name = column_field(column)
    match = NUMBERED_COLUMN.match(column)
    if match:
        items = stored.get(COLLECTION_OF_PREFIX[match.group(1)]) or []
        number = int(match.group(2))
        value = items[number - 1].get(field_name) if number <= len(items) else None
    else:
        value = stored.get(column)
    return cell_value(field_name, cell_text(value))


def resolve_variants(candidate: Candidate, stored: dict[str, Any] | None) -> list[ImportProblem]:
    """Take a value edited in some rows of a provider when the other rows still hold the stored value."""
    group = candidate.group
    if group is None or not (group.variants or group.datacenter_variants):
        return []
    problems = []
    for column, variants in group.variants.items():
        kept = _stored_cell(stored, column) if stored is not None and column != ID_COLUMN else None
        edit = _single_edit(variants, kept, stored is not None)
        if edit is not None:
            group.level[column], group.level_rows[column] = edit, variants[edit]
        else:
            problems.extend(_disagreements(column, variants))
    stored_datacenters = {dc.get("name"): dc for dc in (stored or {}).get("datacenters") or []}
    for (name, key), variants in group.datacenter_variants.items():
        kept = cell_value(key, cell_text(stored_datacenters.get(name, {}).get(key)))
        edit = _single_edit(variants, kept, name in stored_datacenters)
        if edit is not None:
            group.datacenters[name][key] = edit
            continue
        (first_value, first_row), *others = variants.items()
        message = _(
            "机房“%(name)s”在第 %(first)s 行为“%(value)s”，此处不一致",
            name=name,
            first=first_row,
            value=first_value,
        )
        problems.extend(ImportProblem(row, f"datacenter_{key}", message) for _value, row in others)
    candidate.data = group.to_data()
    return problems


def _single_edit(variants: dict[Any, int], kept: Any, known: bool) -> Any:
    """The one value that differs from the stored one when every other row still holds it, else None."""
    edits = [value for value in variants if value != kept]
    return edits[0] if known and kept in variants and len(edits) == 1 else None


def _add_datacenter(
    group: CsvGroup, row: int, values: dict[str, Any], problems: list[ImportProblem]
) -> str | None:
    datacenter = {name: values.get(column) for column, name in DATACENTER_COLUMNS.items()}
    if datacenter["name"] is None:
        if any(value is not None for value in datacenter.values()):
            problems.append(ImportProblem(row, "datacenter_name", _("填写了机房省份或城市却没有机房名称")))
        return None
    name = datacenter["name"]
    known = group.datacenters.get(name)
    if known is None:
        group.datacenters[name] = {key: value for key, value in datacenter.items() if value is not None}
        group.datacenter_rows[name] = row
        return name
    for key, value in datacenter.items():
        if value is None:
            continue
        if known.get(key) is None:
            known[key] = value
        elif known[key] != value:  # resolved like provider-level columns (see resolve_variants)
            variants = group.datacenter_variants.setdefault(
                (name, key), {known[key]: group.datacenter_rows[name]}
            )
            variants.setdefault(value, row)
    return name


def _csv_rows(text: str) -> tuple[list[list[str]], ImportProblem | None]:
    """The rows of a CSV text, or the problem at the row where quoting breaks (an unclosed quote would
    otherwise swallow the rest of the file into one cell)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text), strict=True)
    rows: list[list[str]] = []
    try:
        rows.extend(reader)
    except csv.Error:
        row = len(rows) + 1
        return rows, ImportProblem(
            row,
            "",
            _("CSV 格式错误：第 %(row)s 行无法读取，引号不成对、右引号后紧跟其他字符或单元格过大", row=row),
        )
    return rows, None


def _given_by_header(columns: Iterable[str]) -> import_plan.Given:
    """Which fields a CSV file gives, from its header (a collection without columns keeps stored records)."""
    columns = set(columns)
    given: import_plan.Given = {"": {name for name in PROVIDER_FIELDS if name in columns}}
    for collection, (prefix, _fields) in NUMBERED.items():
        named = {m.group(3) for c in columns if (m := NUMBERED_COLUMN.match(c)) and m.group(1) == prefix}
        if named:
            given[collection] = named
    datacenter = {name for column, name in DATACENTER_COLUMNS.items() if column in columns}
    if datacenter:
        given["datacenters"] = datacenter
    offer = {name for column, name in OFFER_COLUMNS.items() if column in columns}
    if offer:
        given["offers"] = offer | ({"datacenter_name"} if "datacenter_name" in columns else set())
    return given


def read_csv(text: str) -> tuple[list[Candidate], list[ImportProblem], dict[str, str]]:
    """The providers of a CSV text, the problems found while reading and how the file names each column."""
    problems: list[ImportProblem] = []
    rows, broken = _csv_rows(text)
    if broken is not None:
        return [], [broken], {}
    if not rows:
        raise FileError("", _("文件为空，第一行须为列名"))
    header, named = _read_header(rows[0], problems)
    groups: list[CsvGroup] = []
    for row_number, cells in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) > len(header) and any(cell.strip() for cell in cells[len(header) :]):
            problems.append(ImportProblem(row_number, "", _("单元格多于列名")))
        values = {
            column: cell_value(column_field(column), cell)
            for column, cell in zip(header, cells, strict=False)
            if column is not None
        }
        level = {
            column: value
            for column, value in values.items()
            if column not in DATACENTER_COLUMNS and column not in OFFER_COLUMNS
        }
        uscc = "".join(level["uscc"].split()).upper() if level.get("uscc") else None
        current = groups[-1] if groups else None
        if not _same_provider(current, uscc, level.get("legal_name")):
            current = CsvGroup(first_row=row_number)
            groups.append(current)
        _merge_level(current, row_number, level, problems)
        datacenter = _add_datacenter(current, row_number, values, problems)
        offer = {name: values.get(column) for column, name in OFFER_COLUMNS.items()}
        if any(value is not None for value in offer.values()):
            offer = {key: value for key, value in offer.items() if value is not None}
            offer["datacenter_name"] = datacenter
            current.offers.append(offer)
            current.offer_rows.append(row_number)
    given = _given_by_header(named)
    candidates = []
    for group in groups:
        data = group.to_data()
        record_id = group.level.get(ID_COLUMN)
        candidate = Candidate(group.first_row, data, group.locate, record_id, group=group, given=given)
        candidates.append(candidate)
    return candidates, problems, named
