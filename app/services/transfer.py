"""Import and export of providers as JSON or CSV; an import is all-or-nothing and lists every problem.

JSON (``{"format": "gpuvet-providers", "version": 1, "exported_at": ..., "providers": [...]}``) carries every
field of every record exactly as `provider_input(portable=True)` gives it; offers name their datacenter
with ``datacenter_name``. Re-imported into an empty database it reproduces every record. JSON import also
accepts a bare list of providers and API output (``{"items": [...]}``, with ids and ``datacenter_id``).

CSV has one row per offer, plus one row per datacenter without offers (or one row for a provider with
neither). Columns: the provider's fields (``legal_name``, ``uscc`` ...), the numbered licences, filings and
certifications (``licence_1_number_raw``, ``licence_1_business_items``, ``filing_2_kind``,
``certification_1_level`` ...), the row's datacenter (``datacenter_name``, ``datacenter_province``,
``datacenter_city``) and the offer (``offer_name``, ``offer_kind``, ``gpu_model`` ... ``offer_notes``).
Provider-level columns are repeated on every row of a provider; on import they may also be left blank
on the rows after the first, but they must not contradict each other. Consecutive rows with the same
``uscc`` (or, without one, the same ``legal_name``, or with both blank) belong to one provider. Lists are
written joined with "、"; booleans true/false (是/否 accepted); dates YYYY-MM-DD (2024/1/5 and
2024年1月5日 accepted). Cells starting with = + - @ get a leading ' on export (so spreadsheets do not run
them as formulas) that import removes again.

What round-trips through CSV: every field of providers, licences, filings, certifications, datacenters and
offers, including the order of every list. What only JSON carries: exact types (CSV is text, so a
spreadsheet may rewrite long digit-only codes or dates; see above for what import tolerates) and
the export metadata (format, version, exported_at). Export writes UTF-8 with a BOM so that Excel opens it
correctly; import reads UTF-8 with or without a BOM, and GBK/GB18030 (what Excel in China saves).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from enum import Enum
from typing import Any, get_args

import sqlalchemy as sa
from sqlmodel import Session

from app.limits import depth_message, too_deep
from app.models import Provider
from app.models.fields import blank_to_none
from app.models.provider import (
    CertificationBase,
    DatacenterBase,
    FilingBase,
    LicenceBase,
    OfferBase,
    ProviderBase,
)
from app.services.bulk_insert import insert_providers
from app.services.errors import FieldError, InvalidInput, ServiceError, field_path
from app.services.providers import (
    PROVIDER_FIELDS,
    ProviderQuery,
    build_provider,
    list_providers,
    provider_input,
    registered_usccs,
)

FORMAT_NAME = "gpuvet-providers"
FORMAT_VERSION = 1
FORMATS = ("json", "csv")
MEDIA_TYPES = {"json": "application/json", "csv": "text/csv"}
_EXPORT_PAGE = 100

# ---------------------------------------------------------------- report


@dataclass(frozen=True)
class ImportProblem:
    """One problem found in an import file: where (row, field) and what is wrong."""

    row: int  # JSON: position in the provider list (1-based); CSV: spreadsheet row (header = 1); 0: the file
    field: str
    message: str

    def __str__(self) -> str:
        where = f"row {self.row}" if self.row else "file"
        return f"{where}, {self.field or '-'}: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        """JSON form for the API and the page."""
        return {"row": self.row, "field": self.field, "message": self.message}


@dataclass
class ImportReport:
    """Outcome of an import: what the file held, what was written and every problem."""

    format: str
    dry_run: bool
    providers: int = 0
    created: int = 0
    names: list[str] = field(default_factory=list)
    problems: list[ImportProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when the file had no problem (and, unless a dry run, was written)."""
        return not self.problems

    omitted: int = 0  # problems left out of a stored report (see as_dict's limit)

    @property
    def problem_total(self) -> int:
        """Every problem found, including those left out of a stored report."""
        return len(self.problems) + self.omitted

    def as_dict(self, limit: int | None = None) -> dict[str, Any]:
        """JSON form of the report; `limit` keeps at most that many names and problems."""
        return {
            "format": self.format,
            "dry_run": self.dry_run,
            "providers": self.providers,
            "created": self.created,
            "names": self.names[:limit],
            "problems": [problem.as_dict() for problem in self.problems[:limit]],
            "omitted": self.omitted + max(0, len(self.problems) - (limit or len(self.problems))),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ImportReport:
        """The report stored by as_dict (e.g. as a background job's result)."""
        return cls(
            format=data["format"],
            dry_run=data["dry_run"],
            providers=data["providers"],
            created=data["created"],
            names=list(data["names"]),
            problems=[ImportProblem(**problem) for problem in data["problems"]],
            omitted=data.get("omitted", 0),
        )


class _FileError(Exception):
    """The file as a whole cannot be read (encoding, syntax, shape)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


Locator = Callable[[str], tuple[int, str]]


@dataclass
class _Candidate:
    """One provider read from the file, with a way to point its field errors back to the file."""

    row: int
    data: dict[str, Any]
    locate: Locator

    @property
    def name(self) -> str:
        """The legal name as given (for the report)."""
        return str(self.data.get("legal_name") or "")

    @property
    def uscc(self) -> str | None:
        """The credit code as the model will store it."""
        value = self.data.get("uscc")
        if not isinstance(value, str):
            return None
        return "".join(value.split()).upper() or None

    def problems(self, errors: Iterable[FieldError]) -> list[ImportProblem]:
        """Translate service field errors into problems at this candidate's rows."""
        result = []
        for error in errors:
            row, where = self.locate(error.field)
            result.append(ImportProblem(row, where, error.message))
        return result


# ---------------------------------------------------------------- shared helpers


def format_for_filename(filename: str | None) -> str | None:
    """The import format a file name's extension suggests (json or csv), else None."""
    suffix = (filename or "").rsplit(".", 1)[-1].lower() if "." in (filename or "") else ""
    return suffix if suffix in FORMATS else None


def _check_format(format: str) -> str:
    if format not in FORMATS:
        raise InvalidInput(
            f"不支持的格式“{format}”，可选 json 或 csv (format must be json or csv)", field="format"
        )
    return format


def decode(data: bytes | str) -> str:
    """Text of an uploaded file: UTF-8 (with or without BOM), else GB18030/GBK."""
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030")
    except UnicodeDecodeError:
        raise _FileError(
            "encoding", "无法识别文件编码，请保存为 UTF-8 或 GBK (file is neither UTF-8 nor GBK)"
        ) from None


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


def _all_providers(session: Session) -> list[dict[str, Any]]:
    """Every provider as a portable ProviderCreate-shaped dict, in name order."""
    result: list[dict[str, Any]] = []
    page = 1
    while True:
        batch = list_providers(session, query=ProviderQuery(sort="name", page=page, per_page=_EXPORT_PAGE))
        result.extend(_plain(provider_input(provider, portable=True)) for provider in batch.items)
        if page >= batch.pages:
            return result
        page += 1


# ---------------------------------------------------------------- CSV columns


def _fields(model: type) -> list[str]:
    return list(model.model_fields)


LICENCE_FIELDS = _fields(LicenceBase)
FILING_FIELDS = _fields(FilingBase)
CERTIFICATION_FIELDS = _fields(CertificationBase)
DATACENTER_FIELDS = _fields(DatacenterBase)
OFFER_FIELDS = _fields(OfferBase)
# Numbered column groups: collection -> (column prefix, fields).
NUMBERED = {
    "licences": ("licence", LICENCE_FIELDS),
    "filings": ("filing", FILING_FIELDS),
    "certifications": ("certification", CERTIFICATION_FIELDS),
}
# At most 4 digits: more could never be within COLLECTION_LIMITS, and int() refuses 4,301 digits.
_NUMBERED_COLUMN = re.compile(r"^(licence|filing|certification)_(\d{1,4})_(.+)$")
_COLLECTION_OF_PREFIX = {prefix: collection for collection, (prefix, _) in NUMBERED.items()}
# Offer fields whose names would clash with provider columns get an "offer_" prefix.
_OFFER_RENAMED = {"name": "offer_name", "notes": "offer_notes"}
OFFER_COLUMNS = {_OFFER_RENAMED.get(name, name): name for name in OFFER_FIELDS}
DATACENTER_COLUMNS = {f"datacenter_{name}": name for name in DATACENTER_FIELDS}


def _annotated(models: Iterable[type], wanted: type) -> set[str]:
    names = set()
    for model in models:
        for name, info in model.model_fields.items():
            if info.annotation is wanted or wanted in get_args(info.annotation):
                names.add(name)
    return names


_MODELS = (ProviderBase, LicenceBase, FilingBase, CertificationBase, DatacenterBase, OfferBase)
BOOL_FIELDS = _annotated(_MODELS, bool)
DATE_FIELDS = _annotated(_MODELS, date)


def csv_header(counts: dict[str, int] | None = None) -> list[str]:
    """CSV column names, with `counts[collection]` numbered groups (at least one each)."""
    counts = counts or {}
    header = list(PROVIDER_FIELDS)
    for collection, (prefix, fields) in NUMBERED.items():
        for number in range(1, max(1, counts.get(collection, 0)) + 1):
            header.extend(f"{prefix}_{number}_{name}" for name in fields)
    header.extend(DATACENTER_COLUMNS)
    header.extend(OFFER_COLUMNS)
    return header


def _column_field(column: str) -> str | None:
    """The model field a CSV column holds (for type-aware parsing), or None if unknown."""
    if column in PROVIDER_FIELDS:
        return column
    if column in DATACENTER_COLUMNS:
        return DATACENTER_COLUMNS[column]
    if column in OFFER_COLUMNS:
        return OFFER_COLUMNS[column]
    match = _NUMBERED_COLUMN.match(column)
    if match and int(match.group(2)) >= 1:
        fields = NUMBERED[_COLLECTION_OF_PREFIX[match.group(1)]][1]
        if match.group(3) in fields:
            return match.group(3)
    return None


# ---------------------------------------------------------------- CSV cells

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_DATE_LOOSE = re.compile(r"^(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?$")
_TRUE = {"true", "1", "yes", "y", "是", "有", "t"}
_FALSE = {"false", "0", "no", "n", "否", "无", "f"}


def _cell_text(value: Any) -> str:
    """How one value is written into a CSV cell."""
    value = _plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "、".join(str(item) for item in value)
    text = str(value)
    if isinstance(value, str) and text.startswith(_FORMULA_START):
        return "'" + text
    return text


def _cell_value(field_name: str | None, text: str) -> Any:
    """A CSV cell as input for the models: blanks become None, formula guards and loose forms undone."""
    text = text.strip()
    if text.startswith("'") and text[1:].startswith(_FORMULA_START):
        text = text[1:]
    if not text:
        return None
    if field_name in BOOL_FIELDS and text.lower() in _TRUE | _FALSE:
        return text.lower() in _TRUE
    if field_name in DATE_FIELDS:
        match = _DATE_LOOSE.match(text)
        if match:
            year, month, day = (int(part) for part in match.groups())
            return f"{year:04d}-{month:02d}-{day:02d}"
    return text


# ---------------------------------------------------------------- export


def _provider_level(provider: dict[str, Any], counts: dict[str, int]) -> dict[str, str]:
    row = {name: _cell_text(provider.get(name)) for name in PROVIDER_FIELDS}
    for collection, (prefix, fields) in NUMBERED.items():
        items = provider.get(collection) or []
        for number in range(1, max(1, counts.get(collection, 0)) + 1):
            item = items[number - 1] if number <= len(items) else {}
            for name in fields:
                row[f"{prefix}_{number}_{name}"] = _cell_text(item.get(name))
    return row


def _datacenter_cells(datacenter: dict[str, Any] | None) -> dict[str, str]:
    datacenter = datacenter or {}
    return {column: _cell_text(datacenter.get(name)) for column, name in DATACENTER_COLUMNS.items()}


def _offer_cells(offer: dict[str, Any]) -> dict[str, str]:
    return {column: _cell_text(offer.get(name)) for column, name in OFFER_COLUMNS.items()}


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


def _export_csv(providers: list[dict[str, Any]]) -> str:
    counts = {
        collection: max((len(p.get(collection) or []) for p in providers), default=0)
        for collection in NUMBERED
    }
    header = csv_header(counts)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=header, restval="", lineterminator="\r\n")
    writer.writeheader()
    for provider in providers:
        writer.writerows(_provider_rows(provider, counts))
    return "\ufeff" + buffer.getvalue()


def _export_json(providers: list[dict[str, Any]]) -> str:
    document = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "count": len(providers),
        "providers": providers,
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def export_providers(session: Session, format: str = "json") -> str:
    """Every provider with all nested records as JSON or CSV text (CSV starts with a BOM for Excel)."""
    _check_format(format)
    providers = _all_providers(session)
    return _export_json(providers) if format == "json" else _export_csv(providers)


# ---------------------------------------------------------------- JSON import

_BOOKKEEPING = ("id", "version", "created_at", "updated_at")
_DERIVED = {"licences": ("number", "number_kind", "categories"), "filings": ("number",)}


def _portable(item: dict[str, Any]) -> dict[str, Any]:
    """Drop database ids and derived fields that API output carries, keep everything else for validation."""
    data = {key: value for key, value in item.items() if key not in _BOOKKEEPING}
    names = {}
    for datacenter in data.get("datacenters") or []:
        if isinstance(datacenter, dict) and "id" in datacenter:
            names[datacenter["id"]] = datacenter.get("name")
    for collection in ("licences", "filings", "certifications", "datacenters", "offers"):
        items = data.get(collection)
        if not isinstance(items, list):
            continue
        cleaned = []
        for child in items:
            if isinstance(child, dict):
                child = {k: v for k, v in child.items() if k not in ("id", *_DERIVED.get(collection, ()))}
                if collection == "offers" and "datacenter_id" in child:
                    dc_id = child.pop("datacenter_id")
                    if dc_id is not None and not child.get("datacenter_name"):
                        child["datacenter_name"] = names.get(dc_id, f"#{dc_id}")
            cleaned.append(child)
        data[collection] = cleaned
    return data


def _json_locator(row: int) -> Locator:
    return lambda path: (row, path)


def _load_json(text: str) -> Any:
    """The parsed document, refusing bad syntax, huge numbers and nesting deeper than MAX_JSON_DEPTH."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _FileError(
            "", f"JSON 格式错误：第 {exc.lineno} 行第 {exc.colno} 列 (invalid JSON: {exc.msg})"
        ) from None
    except RecursionError:
        raise _FileError("", depth_message()) from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        raise _FileError("", f"JSON 无法解析 (invalid JSON: {exc})") from None
    deep = too_deep(document)
    if deep is not None:
        raise _FileError(field_path(deep), depth_message())
    return document


def _read_json(text: str) -> list[_Candidate]:
    document = _load_json(text)
    if isinstance(document, dict):
        if "format" in document and document["format"] != FORMAT_NAME:
            raise _FileError(
                "format", f"不是 gpuvet 导出文件，format 应为“{FORMAT_NAME}” (unexpected format)"
            )
        version = document.get("version", FORMAT_VERSION)
        if not isinstance(version, int) or isinstance(version, bool) or version > FORMAT_VERSION:
            raise _FileError(
                "version", f"不支持的文件版本 {version}，最高支持 {FORMAT_VERSION} (unsupported version)"
            )
        items = document.get("providers", document.get("items"))
    else:
        items = document
    if not isinstance(items, list):
        raise _FileError(
            "providers", "须为供应商列表，或含 providers 列表的对象 (expected a list of providers)"
        )
    candidates = []
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            data: dict[str, Any] = {"__not_an_object__": item}
        else:
            data = _portable(item)
        candidates.append(_Candidate(index, data, _json_locator(index)))
    return candidates


# ---------------------------------------------------------------- CSV import

_CHILD_PATH = re.compile(r"^(licences|filings|certifications|datacenters|offers)\[(\d+)\](?:\.(.+))?$")


@dataclass
class _CsvGroup:
    """Rows of one provider in a CSV file."""

    first_row: int
    level: dict[str, Any] = field(default_factory=dict)
    level_rows: dict[str, int] = field(default_factory=dict)
    datacenters: dict[str, dict[str, Any]] = field(default_factory=dict)
    datacenter_rows: dict[str, int] = field(default_factory=dict)
    offers: list[dict[str, Any]] = field(default_factory=list)
    offer_rows: list[int] = field(default_factory=list)
    numbers: dict[str, list[int]] = field(default_factory=dict)

    @property
    def uscc(self) -> str | None:
        """The group's credit code, normalised like the model does."""
        value = self.level.get("uscc")
        return "".join(value.split()).upper() if isinstance(value, str) else None

    @property
    def name(self) -> str | None:
        """The group's legal name."""
        return self.level.get("legal_name")

    def to_data(self) -> dict[str, Any]:
        """The group as a ProviderCreate-shaped dict."""
        data: dict[str, Any] = {
            name: self.level[name] for name in PROVIDER_FIELDS if self.level.get(name) is not None
        }
        for collection, (prefix, fields) in NUMBERED.items():
            present = sorted(
                {
                    int(match.group(2))
                    for column, value in self.level.items()
                    if value is not None
                    and (match := _NUMBERED_COLUMN.match(column))
                    and match.group(1) == prefix
                }
            )
            self.numbers[collection] = present
            data[collection] = [
                {
                    name: self.level[f"{prefix}_{number}_{name}"]
                    for name in fields
                    if self.level.get(f"{prefix}_{number}_{name}") is not None
                }
                for number in present
            ]
        data["datacenters"] = list(self.datacenters.values())
        data["offers"] = self.offers
        return data

    def locate(self, path: str) -> tuple[int, str]:
        """Row and column of a service field path such as offers[2].gpus_per_node."""
        match = _CHILD_PATH.match(path)
        if not match:
            return self.level_rows.get(path, self.first_row), path
        collection, index, rest = match.group(1), int(match.group(2)), match.group(3) or ""
        if collection == "offers" and index < len(self.offer_rows):
            if rest == "datacenter_name":
                return self.offer_rows[index], "datacenter_name"
            return self.offer_rows[index], {v: k for k, v in OFFER_COLUMNS.items()}.get(rest, rest)
        if collection == "datacenters":
            names = list(self.datacenters)
            if index < len(names):
                column = f"datacenter_{rest}" if rest else "datacenter_name"
                return self.datacenter_rows[names[index]], column
        if collection in NUMBERED:
            numbers = self.numbers.get(collection) or []
            if index < len(numbers):
                column = f"{NUMBERED[collection][0]}_{numbers[index]}_{rest}".rstrip("_")
                return self.level_rows.get(column, self.first_row), column
        return self.first_row, path


def _same_provider(group: _CsvGroup | None, uscc: str | None, name: str | None) -> bool:
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


def _read_header(raw: list[str], problems: list[ImportProblem]) -> list[str | None]:
    header: list[str | None] = []
    seen: set[str] = set()
    for cell in raw:
        column = cell.strip().removeprefix("\ufeff").lower()
        if not column:
            header.append(None)
            continue
        if _column_field(column) is None:
            problems.append(
                ImportProblem(1, column, "不认识的列名，可用的列见导出文件 (unknown column; see an export)")
            )
            header.append(None)
            continue
        if column in seen:
            problems.append(ImportProblem(1, column, "列名重复 (duplicate column)"))
            header.append(None)
            continue
        seen.add(column)
        header.append(column)
    if "legal_name" not in seen and "uscc" not in seen:
        problems.append(
            ImportProblem(
                1, "legal_name", "缺少 legal_name 列（或 uscc 列） (a legal_name or uscc column is required)"
            )
        )
    return header


def _merge_level(group: _CsvGroup, row: int, level: dict[str, Any], problems: list[ImportProblem]) -> None:
    for column, value in level.items():
        if value is None:
            continue
        if group.level.get(column) is None:
            group.level[column] = value
            group.level_rows[column] = row
        elif group.level[column] != value:
            first = group.level_rows[column]
            problems.append(
                ImportProblem(
                    row,
                    column,
                    f"与第 {first} 行的“{group.level[column]}”不一致；同一供应商的各行须相同或留空"
                    f" (differs from row {first}; rows of one provider must agree or be blank)",
                )
            )


def _add_datacenter(
    group: _CsvGroup, row: int, values: dict[str, Any], problems: list[ImportProblem]
) -> str | None:
    datacenter = {name: values.get(column) for column, name in DATACENTER_COLUMNS.items()}
    if datacenter["name"] is None:
        if any(value is not None for value in datacenter.values()):
            problems.append(
                ImportProblem(
                    row, "datacenter_name", "填写了机房省份或城市却没有机房名称 (datacenter name is required)"
                )
            )
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
        elif known[key] != value:
            first = group.datacenter_rows[name]
            problems.append(
                ImportProblem(
                    row,
                    f"datacenter_{key}",
                    f"机房“{name}”在第 {first} 行为“{known[key]}”，此处不一致 (differs from row {first})",
                )
            )
    return name


def _csv_rows(text: str) -> tuple[list[list[str]], ImportProblem | None]:
    """The rows of a CSV text, or the problem at the row where quoting breaks (an unclosed quote would
    otherwise swallow the rest of the file into one cell)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=_delimiter(text), strict=True)
    rows: list[list[str]] = []
    try:
        rows.extend(reader)
    except csv.Error as exc:
        row = len(rows) + 1
        return rows, ImportProblem(
            row,
            "",
            f"CSV 格式错误：第 {row} 行无法读取，引号不成对、右引号后紧跟其他字符或单元格过大 "
            f"(invalid CSV at row {row}: unbalanced quote, text after a closing quote or a huge cell: {exc})",
        )
    return rows, None


def _read_csv(text: str) -> tuple[list[_Candidate], list[ImportProblem]]:
    problems: list[ImportProblem] = []
    rows, broken = _csv_rows(text)
    if broken is not None:
        return [], [broken]
    if not rows:
        raise _FileError("", "文件为空，第一行须为列名 (empty file; the first row must be the header)")
    header = _read_header(rows[0], problems)
    groups: list[_CsvGroup] = []
    for row_number, cells in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) > len(header) and any(cell.strip() for cell in cells[len(header) :]):
            problems.append(ImportProblem(row_number, "", "单元格多于列名 (more cells than header columns)"))
        values = {
            column: _cell_value(_column_field(column), cell)
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
            current = _CsvGroup(first_row=row_number)
            groups.append(current)
        _merge_level(current, row_number, level, problems)
        datacenter = _add_datacenter(current, row_number, values, problems)
        offer = {name: values.get(column) for column, name in OFFER_COLUMNS.items()}
        if any(value is not None for value in offer.values()):
            offer = {key: value for key, value in offer.items() if value is not None}
            offer["datacenter_name"] = datacenter
            current.offers.append(offer)
            current.offer_rows.append(row_number)
    candidates = []
    for group in groups:
        data = group.to_data()
        candidates.append(_Candidate(group.first_row, data, group.locate))
    return candidates, problems


# ---------------------------------------------------------------- validation and writing


def _duplicates(candidates: list[_Candidate]) -> tuple[list[ImportProblem], set[int]]:
    """USCCs that appear more than once in the file; later occurrences are the problem rows."""
    first: dict[str, _Candidate] = {}
    problems = []
    duplicated = set()
    for index, candidate in enumerate(candidates):
        uscc = candidate.uscc
        if not uscc:
            continue
        if uscc in first:
            row, where = candidate.locate("uscc")
            problems.append(
                ImportProblem(
                    row,
                    where,
                    f"统一社会信用代码 {uscc} 在文件中重复（第 {first[uscc].row} 行已有）"
                    f" (duplicate in this file: see row {first[uscc].row})",
                )
            )
            duplicated.add(index)
        else:
            first[uscc] = candidate
    return problems, duplicated


def _build(data: dict[str, Any]) -> tuple[Provider | None, list[FieldError]]:
    """Validate one provider into unsaved objects, or the field errors that refuse it."""
    try:
        return build_provider(data=data), []
    except ServiceError as exc:
        return None, list(exc.errors)


def _validation_data(candidate: _Candidate, duplicate: bool) -> dict[str, Any]:
    data = dict(candidate.data)
    if "__not_an_object__" in data:
        return data
    if duplicate:
        data.pop("uscc", None)  # already reported; validate the rest without a second, misleading clash
    return data


def _not_an_object(candidate: _Candidate) -> list[ImportProblem]:
    return [
        ImportProblem(candidate.row, "", "每个供应商须为 JSON 对象 (each provider must be a JSON object)")
    ]


def _unknown_datacenters(candidate: _Candidate) -> list[ImportProblem]:
    """Offers naming a datacenter the provider does not list (found before the service's first-error stop)."""
    datacenters, offers = candidate.data.get("datacenters") or [], candidate.data.get("offers")
    if not isinstance(datacenters, list) or not isinstance(offers, list):
        return []
    names = {blank_to_none(dc.get("name")) for dc in datacenters if isinstance(dc, dict)}
    problems = []
    for index, offer in enumerate(offers):
        name = blank_to_none(offer.get("datacenter_name")) if isinstance(offer, dict) else None
        if isinstance(name, str) and name not in names:
            row, where = candidate.locate(f"offers[{index}].datacenter_name")
            problems.append(
                ImportProblem(
                    row, where, f"本供应商没有名为“{name}”的机房 (no such datacenter for this provider)"
                )
            )
    return problems


Progress = Callable[[int, int, str], None]


def _no_progress(_done: int, _total: int, _current: str) -> None:
    return None


def _registered_problems(
    session: Session, candidates: list[_Candidate], built: dict[int, Provider]
) -> list[ImportProblem]:
    """Credit codes of the file that the registry already holds (one read, no lock)."""
    holders = registered_usccs(session, (provider.uscc for provider in built.values() if provider.uscc))
    problems = []
    for index, provider in built.items():
        if provider.uscc in holders:
            row, where = candidates[index].locate("uscc")
            problems.append(
                ImportProblem(
                    row,
                    where,
                    f"统一社会信用代码 {provider.uscc} 已登记在“{holders[provider.uscc]}”名下 "
                    "(already registered)",
                )
            )
    return problems


def _validate_all(
    session: Session,
    candidates: list[_Candidate],
    duplicated: set[int],
    reported: set[tuple[int, str]],
    progress: Progress,
) -> tuple[dict[int, Provider], list[ImportProblem]]:
    """Build every candidate without writing anything; the problems of those that fail."""
    problems: list[ImportProblem] = []
    built: dict[int, Provider] = {}
    step = max(1, len(candidates) // 100)
    for index, candidate in enumerate(candidates):
        if index % step == 0:
            progress(index, len(candidates), candidate.name)
        if "__not_an_object__" in candidate.data:
            problems.extend(_not_an_object(candidate))
            continue
        provider, errors = _build(_validation_data(candidate, index in duplicated))
        problems.extend(p for p in candidate.problems(errors) if (p.row, p.field) not in reported)
        if provider is not None and index not in duplicated:
            built[index] = provider
    problems.extend(_registered_problems(session, candidates, built))
    return built, problems


def _write_all(session: Session, providers: list[Provider]) -> list[ImportProblem]:
    """Store every provider in one short transaction (all or nothing), by bulk statements, audited."""
    bind = session.get_bind()
    engine = bind.engine if isinstance(bind, sa.Connection) else bind
    actor = session.info.get("actor", (None, "system"))
    try:
        with engine.begin() as connection:
            insert_providers(connection, providers, actor)
    except sa.exc.IntegrityError as exc:
        return [
            ImportProblem(
                0,
                "",
                "写入时与已有数据冲突（可能有人同时登记了同一家供应商），没有导入任何数据 "
                f"(conflicts with data stored meanwhile; nothing was imported): {exc.orig}",
            )
        ]
    return []


def import_provider_dicts(
    session: Session, *, providers: list[dict[str, Any]], dry_run: bool = False, format: str = "json"
) -> ImportReport:
    """Import already-parsed provider dicts (ProviderCreate-shaped) all-or-nothing."""
    candidates = [_Candidate(i, _portable(p), _json_locator(i)) for i, p in enumerate(providers, start=1)]
    return _import(session, candidates, [], format=format, dry_run=dry_run)


def _import(
    session: Session,
    candidates: list[_Candidate],
    problems: list[ImportProblem],
    *,
    format: str,
    dry_run: bool,
    progress: Progress = _no_progress,
) -> ImportReport:
    """Check everything first (reads only), then write all in one short transaction, or nothing."""
    report = ImportReport(format=format, dry_run=dry_run, providers=len(candidates))
    report.names = [candidate.name for candidate in candidates]
    duplicate_problems, duplicated = _duplicates(candidates)
    problems = problems + duplicate_problems
    for candidate in candidates:
        problems.extend(_unknown_datacenters(candidate))
    reported = {(problem.row, problem.field) for problem in problems}
    built, row_problems = _validate_all(session, candidates, duplicated, reported, progress)
    problems = sorted(problems + row_problems, key=lambda p: p.row)
    if not dry_run and not problems and built:
        progress(len(candidates), len(candidates), "写入数据库 (writing)")
        problems = _write_all(session, list(built.values()))
        report.created = 0 if problems else len(built)
    progress(len(candidates), len(candidates), "")
    report.problems = problems
    if not candidates and not report.problems:
        report.problems = [ImportProblem(0, "providers", "文件中没有供应商 (the file holds no providers)")]
    return report


def import_providers(
    session: Session,
    *,
    data: bytes | str,
    format: str,
    dry_run: bool = False,
    progress: Progress = _no_progress,
) -> ImportReport:
    """Validate every provider in a JSON or CSV file, then write all of them in one transaction or none.

    `session` supplies the database and the audit actor. Checking takes no write lock (a dry run never
    writes); the write is one transaction at the end. `progress(done, total, current)` is called as the
    rows are checked.
    """
    _check_format(format)
    try:
        text = decode(data)
        if format == "json":
            candidates, problems = _read_json(text), []
        else:
            candidates, problems = _read_csv(text)
    except _FileError as exc:
        return ImportReport(
            format=format, dry_run=dry_run, problems=[ImportProblem(0, exc.field, exc.message)]
        )
    return _import(session, candidates, problems, format=format, dry_run=dry_run, progress=progress)
