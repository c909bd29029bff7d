"""The CSV columns and cells: English and Chinese headers, numbered groups, and how a value is written."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from datetime import date
from typing import Any, get_args

from app.core import vocabulary
from app.models.provider import (
    CertificationBase,
    DatacenterBase,
    FilingBase,
    LicenceBase,
    OfferBase,
    ProviderBase,
)
from app.registry.import_plan import plain
from app.registry.providers import PROVIDER_FIELDS


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
NUMBERED_COLUMN = re.compile(r"^(licence|filing|certification)_(\d{1,4})_(.+)$")


COLLECTION_OF_PREFIX = {prefix: collection for collection, (prefix, _) in NUMBERED.items()}


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


ID_COLUMN = "id"


HEADER_LANGUAGES = ("en", "zh")


# Columns that are no field of one record (the CSV flattens a datacenter and an offer into its row); every
# other Chinese header is the field's label in app.core.vocabulary.
CSV_ONLY_ZH = {
    ID_COLUMN: "供应商ID",
    "datacenter_name": "机房名称",
    "datacenter_province": "机房省份",
    "datacenter_city": "机房城市",
    "offer_name": "套餐名称",
    "offer_notes": "套餐备注",
}


def _field_zh(name: str) -> str:
    return vocabulary.LABELS["field"][name][0]


# Chinese column headers: the export's Chinese variant; import accepts them, the English ones and ALIASES.
ZH_COLUMNS = {
    column: CSV_ONLY_ZH.get(column) or _field_zh(column)
    for column in (ID_COLUMN, *PROVIDER_FIELDS, *DATACENTER_COLUMNS, *OFFER_COLUMNS)
}
ZH_PREFIX = {"licence": "许可证", "filing": "备案", "certification": "认证"}
ZH_CHILD_FIELDS = {
    name: _field_zh(name) for name in dict.fromkeys((*LICENCE_FIELDS, *FILING_FIELDS, *CERTIFICATION_FIELDS))
}


ALIASES = {
    "公司名称": "legal_name",
    "企业全称": "legal_name",
    "credit_code": "uscc",
    "信用代码": "uscc",
    "社会信用代码": "uscc",
    "provider_id": ID_COLUMN,
    "编号ID": ID_COLUMN,
    "ID": ID_COLUMN,
}


def _header_key(text: str) -> str:
    """A header cell as compared: NFKC (full-width brackets become ASCII), lower case, no spaces."""
    return "".join(unicodedata.normalize("NFKC", text.removeprefix("\ufeff")).lower().split())


def zh_column(column: str) -> str:
    """The Chinese header of a CSV column."""
    match = NUMBERED_COLUMN.match(column)
    if match:
        return f"{ZH_PREFIX[match.group(1)]}{match.group(2)}·{ZH_CHILD_FIELDS[match.group(3)]}"
    return ZH_COLUMNS[column]


def csv_header(counts: dict[str, int] | None = None) -> list[str]:
    """CSV column names, with `counts[collection]` numbered groups (at least one each)."""
    counts = counts or {}
    header = [ID_COLUMN, *PROVIDER_FIELDS]
    for collection, (prefix, fields) in NUMBERED.items():
        for number in range(1, max(1, counts.get(collection, 0)) + 1):
            header.extend(f"{prefix}_{number}_{name}" for name in fields)
    header.extend(DATACENTER_COLUMNS)
    header.extend(OFFER_COLUMNS)
    return header


def column_field(column: str) -> str | None:
    """The model field a CSV column holds (for type-aware parsing), or None if unknown."""
    if column in PROVIDER_FIELDS or column == ID_COLUMN:
        return column
    if column in DATACENTER_COLUMNS:
        return DATACENTER_COLUMNS[column]
    if column in OFFER_COLUMNS:
        return OFFER_COLUMNS[column]
    match = NUMBERED_COLUMN.match(column)
    if match and int(match.group(2)) >= 1:
        fields = NUMBERED[COLLECTION_OF_PREFIX[match.group(1)]][1]
        if match.group(3) in fields:
            return match.group(3)
    return None


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


_DATE_LOOSE = re.compile(r"^(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?$")


_TRUE = {"true", "1", "yes", "y", "是", "有", "t"}


_FALSE = {"false", "0", "no", "n", "否", "无", "f"}


def cell_text(value: Any) -> str:
    """How one value is written into a CSV cell."""
    value = plain(value)
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


def cell_value(field_name: str | None, text: str) -> Any:
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


_ZH_NUMBERED = re.compile(r"^(许可证|备案|认证)(\d{1,4})[·・._\-]?(.+)$")


def _header_lookup() -> dict[str, str]:
    """Every accepted header (compared by _header_key) and the column it names, numbered ones aside."""
    lookup = {_header_key(column): column for column in ZH_COLUMNS}
    lookup.update({_header_key(zh): column for column, zh in ZH_COLUMNS.items()})
    lookup.update({_header_key(alias): column for alias, column in ALIASES.items()})
    return lookup


_HEADERS = _header_lookup()


_ZH_CHILD_KEYS = {_header_key(zh): name for name, zh in ZH_CHILD_FIELDS.items()}


_PREFIX_OF_ZH = {zh: prefix for prefix, zh in ZH_PREFIX.items()}


def header_column(cell: str) -> str | None:
    """The column a header cell names (English, Chinese or an alias), or None if unknown."""
    key = _header_key(cell)
    if key in _HEADERS:
        return _HEADERS[key]
    match = _ZH_NUMBERED.match(key)
    if match and match.group(3) in _ZH_CHILD_KEYS:
        key = f"{_PREFIX_OF_ZH[match.group(1)]}_{match.group(2)}_{_ZH_CHILD_KEYS[match.group(3)]}"
    return key if NUMBERED_COLUMN.match(key) and column_field(key) is not None else None
