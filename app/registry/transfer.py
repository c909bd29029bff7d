"""Import and export of providers as JSON or CSV; an import is previewed, then applied all or nothing.

Import matches each provider of the file to a stored one by credit code (or by the file's ``id``) and
updates it; the others are created (see app.registry.import_plan). A dry run is the preview: per provider
new / update / unchanged with every changed field (old -> new), and every refused row with its column.
Applying with the preview's ``expected`` tokens refuses, writing nothing, when a provider changed since.
CSV headers may be English (below) or Chinese (``ZH_COLUMNS``, the export's ``headers="zh"`` variant);
a column the file leaves out keeps the stored values. Messages go through gettext (the UI language).

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
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, get_args

import sqlalchemy as sa
from flask_babel import gettext as _
from sqlmodel import Session

from app.core.errors import FieldError, InvalidInput, ServiceError, field_path
from app.core.limits import depth_message, parse_id, too_deep
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
from app.registry import import_plan
from app.registry.bulk_insert import insert_providers
from app.registry.import_plan import CREATE, UNCHANGED, UPDATE, ProviderPlan, plain
from app.registry.providers import (
    PROVIDER_FIELDS,
    ProviderQuery,
    build_provider,
    list_providers,
    provider_input,
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
        where = _("第 %(row)s 行", row=self.row) if self.row else _("整个文件")
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
    warnings: list[ImportProblem] = field(default_factory=list)  # what the check will flag (no refusal)
    updated: int = 0  # providers changed (written, or to be written when a preview)
    unchanged: int = 0
    new: int = 0  # providers the file adds (created when applied)
    plans: list[ProviderPlan] = field(default_factory=list)  # per provider, in file order
    expected: list[list[int | None]] = field(default_factory=list)  # what apply must find again
    applied: bool = False
    conflict: bool = False  # refused because the registry changed since the preview (or while writing)

    @property
    def ok(self) -> bool:
        """True when the file had no problem (and, unless a dry run, was written)."""
        return not self.problems

    @property
    def changes(self) -> int:
        """Providers the import creates or changes."""
        return self.new + self.updated

    @property
    def shown_plans(self) -> list[ProviderPlan]:
        """The plans worth reading: new and changed providers first, in file order."""
        return [plan for plan in self.plans if plan.action != UNCHANGED]

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
            "warnings": [warning.as_dict() for warning in self.warnings[:limit]],
            "omitted": self.omitted + max(0, len(self.problems) - (limit or len(self.problems))),
            "updated": self.updated,
            "unchanged": self.unchanged,
            "new": self.new,
            "plans": [plan.as_dict() for plan in self.shown_plans[:limit]],
            "expected": self.expected,
            "applied": self.applied,
            "conflict": self.conflict,
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
            warnings=[ImportProblem(**warning) for warning in data.get("warnings", [])],
            omitted=data.get("omitted", 0),
            updated=data.get("updated", 0),
            unchanged=data.get("unchanged", 0),
            new=data.get("new", 0),
            plans=[ProviderPlan.from_dict(plan) for plan in data.get("plans", [])],
            expected=list(data.get("expected", [])),
            applied=data.get("applied", False),
            conflict=data.get("conflict", False),
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
    record_id: Any = None  # the file's provider id, if any (checked by _record_id)
    group: _CsvGroup | None = None  # the CSV rows it was read from
    given: import_plan.Given | None = None  # what the file gives (None: the keys of the JSON object)

    def given_fields(self) -> import_plan.Given:
        """Which provider fields and which nested fields the file gives (the rest keep stored values)."""
        if self.given is not None:
            return self.given
        given: import_plan.Given = {"": {name for name in PROVIDER_FIELDS if name in self.data}}
        for collection in import_plan.CHILD_FIELDS:
            if collection in self.data:
                given[collection] = None
        return given

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
        raise InvalidInput(_("不支持的格式“%(format)s”，可选 json 或 csv", format=format), field="format")
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
        raise _FileError("encoding", _("无法识别文件编码，请保存为 UTF-8 或 GBK")) from None


_plain = plain


def _all_providers(session: Session) -> list[dict[str, Any]]:
    """Every provider as a portable ProviderCreate-shaped dict with its id first, in name order."""
    result: list[dict[str, Any]] = []
    page = 1
    while True:
        batch = list_providers(session, query=ProviderQuery(sort="name", page=page, per_page=_EXPORT_PAGE))
        result.extend(
            {"id": provider.id, **_plain(provider_input(provider, portable=True))} for provider in batch.items
        )
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


ID_COLUMN = "id"
HEADER_LANGUAGES = ("en", "zh")
# Chinese column headers: the export's Chinese variant; import accepts them, the English ones and ALIASES.
ZH_COLUMNS = {
    ID_COLUMN: "供应商ID",
    "legal_name": "企业名称",
    "legal_name_en": "英文名称",
    "short_name": "简称",
    "uscc": "统一社会信用代码",
    "registered_province": "注册省份",
    "registered_address": "注册地址",
    "website": "网址",
    "registered_capital_cny": "注册资本（元）",
    "contact_name": "联系人",
    "contact_phone": "联系电话",
    "contact_email": "联系邮箱",
    "notes": "备注",
    "status": "状态",
    "discloses_network_topology": "公开网络拓扑",
    "discloses_storage_config": "公开存储配置",
    "datacenter_name": "机房名称",
    "datacenter_province": "机房省份",
    "datacenter_city": "机房城市",
    "offer_name": "套餐名称",
    "offer_kind": "租用方式",
    "gpu_model": "GPU 型号",
    "gpus_per_node": "每节点 GPU 数",
    "gpu_memory_gb": "显存（GB）",
    "vcpu": "vCPU",
    "ram_gb": "内存（GB）",
    "intranet_gbps": "内网带宽（Gbps，标称）",
    "rdma_type": "RDMA 类型",
    "rdma_gbps": "RDMA 带宽（Gbps）",
    "public_mbps": "公网带宽（Mbps）",
    "bandwidth_type": "带宽类型",
    "storage_type": "存储类型",
    "storage_capacity_gb": "存储容量（GB）",
    "nominal_iops": "标称 IOPS",
    "price_gpu_hour_cny": "单价（元/卡·时）",
    "price_month_cny": "月价（元/月）",
    "offer_notes": "套餐备注",
}
ZH_PREFIX = {"licence": "许可证", "filing": "备案", "certification": "认证"}
ZH_CHILD_FIELDS = {
    "number_raw": "编号（原文）",
    "company_name": "持证企业",
    "business_items": "业务种类",
    "b11_includes_resource_collab": "B11 含互联网资源协作服务",
    "coverage": "覆盖范围",
    "issuer": "发证机关",
    "issued_on": "发证日期",
    "expires_on": "有效期至",
    "status": "状态",
    "kind": "类型",
    "entity_name": "主办单位",
    "entity_nature": "单位性质",
    "domain": "域名",
    "name": "名称",
    "level": "级别",
    "number": "编号",
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
    match = _NUMBERED_COLUMN.match(column)
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


def _column_field(column: str) -> str | None:
    """The model field a CSV column holds (for type-aware parsing), or None if unknown."""
    if column in PROVIDER_FIELDS or column == ID_COLUMN:
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
    row = {name: _cell_text(provider.get(name)) for name in (ID_COLUMN, *PROVIDER_FIELDS)}
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
        "exported_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "count": len(providers),
        "providers": providers,
    }
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def export_providers(session: Session, format: str = "json", headers: str = "en") -> str:
    """Every provider with all nested records as JSON or CSV text (CSV starts with a BOM for Excel).

    `headers="zh"` gives the CSV Chinese column headers (import accepts either)."""
    _check_format(format)
    if headers not in HEADER_LANGUAGES:
        raise InvalidInput(_("列名语言须为 en 或 zh"), field="headers")
    providers = _all_providers(session)
    return _export_json(providers) if format == "json" else _export_csv(providers, headers)


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
            "", _("JSON 格式错误：第 %(line)s 行第 %(column)s 列", line=exc.lineno, column=exc.colno)
        ) from None
    except RecursionError:
        raise _FileError("", depth_message()) from None
    except ValueError:  # e.g. an integer of more than 4,300 digits
        raise _FileError("", _("JSON 无法解析：数字过长或内容无效")) from None
    deep = too_deep(document)
    if deep is not None:
        raise _FileError(field_path(deep), depth_message())
    return document


def _read_json(text: str) -> list[_Candidate]:
    document = _load_json(text)
    if isinstance(document, dict):
        if "format" in document and document["format"] != FORMAT_NAME:
            raise _FileError("format", _("不是 gpuvet 导出文件，format 应为“%(name)s”", name=FORMAT_NAME))
        version = document.get("version", FORMAT_VERSION)
        if not isinstance(version, int) or isinstance(version, bool) or version > FORMAT_VERSION:
            raise _FileError(
                "version",
                _(
                    "不支持的文件版本 %(version)s，最高支持 %(latest)s",
                    version=version,
                    latest=FORMAT_VERSION,
                ),
            )
        items = document.get("providers", document.get("items"))
    else:
        items = document
    if not isinstance(items, list):
        raise _FileError("providers", _("须为供应商列表，或含 providers 列表的对象"))
    candidates = []
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            data: dict[str, Any] = {"__not_an_object__": item}
            record_id = None
        else:
            data, record_id = _portable(item), item.get(ID_COLUMN)
        candidates.append(_Candidate(index, data, _json_locator(index), record_id=record_id))
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
    # Provider-level columns whose rows disagree: every distinct value with the first row holding it.
    variants: dict[str, dict[Any, int]] = field(default_factory=dict)
    datacenter_variants: dict[tuple[str, str], dict[Any, int]] = field(default_factory=dict)

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
    return key if _NUMBERED_COLUMN.match(key) and _column_field(key) is not None else None


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


def _merge_level(group: _CsvGroup, row: int, level: dict[str, Any], problems: list[ImportProblem]) -> None:
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
    field_name = _column_field(column)
    match = _NUMBERED_COLUMN.match(column)
    if match:
        items = stored.get(_COLLECTION_OF_PREFIX[match.group(1)]) or []
        number = int(match.group(2))
        value = items[number - 1].get(field_name) if number <= len(items) else None
    else:
        value = stored.get(column)
    return _cell_value(field_name, _cell_text(value))


def _resolve_variants(candidate: _Candidate, stored: dict[str, Any] | None) -> list[ImportProblem]:
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
        kept = _cell_value(key, _cell_text(stored_datacenters.get(name, {}).get(key)))
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
    group: _CsvGroup, row: int, values: dict[str, Any], problems: list[ImportProblem]
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
        elif known[key] != value:  # resolved like provider-level columns (see _resolve_variants)
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
        named = {m.group(3) for c in columns if (m := _NUMBERED_COLUMN.match(c)) and m.group(1) == prefix}
        if named:
            given[collection] = named
    datacenter = {name for column, name in DATACENTER_COLUMNS.items() if column in columns}
    if datacenter:
        given["datacenters"] = datacenter
    offer = {name for column, name in OFFER_COLUMNS.items() if column in columns}
    if offer:
        given["offers"] = offer | ({"datacenter_name"} if "datacenter_name" in columns else set())
    return given


def _read_csv(text: str) -> tuple[list[_Candidate], list[ImportProblem], dict[str, str]]:
    """The providers of a CSV text, the problems found while reading and how the file names each column."""
    problems: list[ImportProblem] = []
    rows, broken = _csv_rows(text)
    if broken is not None:
        return [], [broken], {}
    if not rows:
        raise _FileError("", _("文件为空，第一行须为列名"))
    header, named = _read_header(rows[0], problems)
    groups: list[_CsvGroup] = []
    for row_number, cells in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) > len(header) and any(cell.strip() for cell in cells[len(header) :]):
            problems.append(ImportProblem(row_number, "", _("单元格多于列名")))
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
    given = _given_by_header(named)
    candidates = []
    for group in groups:
        data = group.to_data()
        record_id = group.level.get(ID_COLUMN)
        candidate = _Candidate(group.first_row, data, group.locate, record_id, group=group, given=given)
        candidates.append(candidate)
    return candidates, problems, named


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
                    _(
                        "统一社会信用代码 %(uscc)s 在文件中重复（第 %(first)s 行已有）",
                        uscc=uscc,
                        first=first[uscc].row,
                    ),
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
    return [ImportProblem(candidate.row, "", _("每个供应商须为 JSON 对象"))]


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
            problems.append(ImportProblem(row, where, _("本供应商没有名为“%(name)s”的机房", name=name)))
    return problems


def _record_id(candidate: _Candidate) -> tuple[int | None, ImportProblem | None]:
    """The provider id the file gives (None when blank), or the problem with it."""
    value = candidate.record_id
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    text = str(value).strip() if isinstance(value, int | str) and not isinstance(value, bool) else ""
    number = parse_id(text)
    if number is None:
        row, where = candidate.locate(ID_COLUMN)
        return None, ImportProblem(
            row, where, _("供应商ID须为正整数（导出文件中的编号）；新增的供应商请留空")
        )
    return number, None


Progress = Callable[[int, int, str], None]


def _no_progress(_done: int, _total: int, _current: str) -> None:
    return None


@dataclass
class _Checked:
    """What checking found: a plan per provider of the file, and what applying it writes."""

    plans: list[ProviderPlan] = field(default_factory=list)
    updates: dict[int, dict[str, Any]] = field(default_factory=dict)  # candidate index -> merged data
    new: dict[int, Provider] = field(default_factory=dict)  # candidate index -> unsaved provider
    problems: list[ImportProblem] = field(default_factory=list)
    written: list[int] = field(default_factory=list)  # ids of the providers applying changed or created


def _matches(session: Session, candidates: list[_Candidate], checked: _Checked) -> list[Provider | None]:
    """The stored provider each candidate updates (None: a new one); id problems go to `checked`."""
    keys = []
    for candidate in candidates:
        record_id, problem = _record_id(candidate)
        if problem is not None:
            checked.problems.append(problem)
        keys.append((candidate.uscc, record_id))
    stored = import_plan.load_providers(
        session,
        usccs=[uscc for uscc, _id in keys if uscc],
        ids=[record_id for _uscc, record_id in keys if record_id is not None],
    )
    return import_plan.match(keys, stored)


def _check_update(
    candidate: _Candidate, target: Provider, before: dict[str, Any], checked: _Checked, index: int
) -> ProviderPlan:
    """Merge the file's values into a stored provider, validate the result and list what changes."""
    data = import_plan.merged(before, candidate.data, candidate.given_fields())
    provider, errors = _build(data)
    checked.problems.extend(candidate.problems(errors))
    name = candidate.name or target.legal_name
    plan = ProviderPlan(candidate.row, name, UPDATE, target.id, target.version)
    if provider is not None:
        plan.changes = import_plan.diff(before, import_plan.stored_input(provider))
        if plan.changes:
            checked.updates[index] = data
        else:
            plan.action = UNCHANGED
    return plan


def _check_all(
    session: Session,
    candidates: list[_Candidate],
    duplicated: set[int],
    reported: set[tuple[int, str]],
    progress: Progress,
) -> _Checked:
    """Match, merge and validate every candidate without writing anything."""
    checked = _Checked()
    targets = _matches(session, candidates, checked)
    first_row: dict[int, int] = {}  # stored provider id -> the file row that updates it
    step = max(1, len(candidates) // 100)
    found = len(checked.problems)
    for index, candidate in enumerate(candidates):
        if index % step == 0:
            progress(index, len(candidates), candidate.name)
        target = targets[index]
        before = import_plan.stored_input(target) if target is not None else None
        checked.problems.extend(_resolve_variants(candidate, before))
        if "__not_an_object__" in candidate.data:
            checked.problems.extend(_not_an_object(candidate))
            checked.plans.append(ProviderPlan(candidate.row, "", CREATE))
            continue
        if target is not None and index not in duplicated and target.id in first_row:
            row, where = candidate.locate(ID_COLUMN)
            message = _(
                "与第 %(first)s 行是同一家已登记的供应商（%(name)s），每家供应商只能出现一次",
                first=first_row[target.id],
                name=target.legal_name,
            )
            checked.problems.append(ImportProblem(row, where, message))
            checked.plans.append(
                ProviderPlan(candidate.row, candidate.name, UPDATE, target.id, target.version)
            )
            continue
        if target is not None and index not in duplicated:
            first_row[target.id] = candidate.row
            checked.plans.append(_check_update(candidate, target, before, checked, index))
            continue
        unknown = _unknown_datacenters(candidate)
        checked.problems.extend(unknown)
        provider, errors = _build(_validation_data(candidate, index in duplicated))
        skip = {(p.row, p.field) for p in unknown}
        checked.problems.extend(p for p in candidate.problems(errors) if (p.row, p.field) not in skip)
        checked.plans.append(ProviderPlan(candidate.row, candidate.name, CREATE))
        if provider is not None and index not in duplicated:
            checked.new[index] = provider
    checked.problems[found:] = [p for p in checked.problems[found:] if (p.row, p.field) not in reported]
    return checked


def _stale(session: Session, plans: list[ProviderPlan], expected: list[Any]) -> list[ImportProblem]:
    """Providers that changed between the preview (`expected`, its plan tokens) and now."""
    if not isinstance(expected, list) or len(expected) != len(plans):
        return [ImportProblem(0, "", _("文件与预览时不一致，没有写入任何数据。请重新上传并预览。"))]
    problems = []
    for plan, token in zip(plans, expected, strict=True):
        if list(token or []) == plan.token:
            continue
        was_id = token[0] if isinstance(token, list) and token else None
        current = plan.version if plan.provider_id == was_id else None
        message = import_plan.changed_meanwhile(session, plan.name, was_id, current)
        problems.append(ImportProblem(plan.row, "", message))
    return problems


def _write_problem(message: str) -> list[ImportProblem]:
    return [ImportProblem(0, "", message)]


def _write_all(session: Session, checked: _Checked) -> list[ImportProblem]:
    """Apply the plan in one transaction (all or nothing): changed providers re-read at their previewed
    versions and updated through the ORM, new ones by bulk statements, every change audited."""
    actor = session.info.get("actor", (None, "system"))
    session.rollback()  # end the checking's reads; the write re-reads what it changes
    plans = {index: checked.plans[index] for index in checked.updates}
    try:
        stored = import_plan.load_providers(session, ids=[plan.provider_id for plan in plans.values()])
        by_id = {provider.id: provider for provider in stored}
        for index, data in checked.updates.items():
            plan = plans[index]
            provider = by_id.get(plan.provider_id)
            if provider is None or provider.version != plan.version:
                current = provider.version if provider is not None else None
                message = import_plan.changed_meanwhile(session, plan.name, plan.provider_id, current)
                session.rollback()
                return [ImportProblem(plan.row, "", message)]
            import_plan.apply_update(provider, data)
        created = insert_providers(session.connection(), list(checked.new.values()), actor)
        session.commit()
        checked.written = [plan.provider_id for plan in plans.values()] + created
    except sa.orm.exc.StaleDataError:
        session.rollback()
        return _write_problem(_("写入时发现有人同时修改了其中的供应商，没有写入任何数据。请重新预览。"))
    except sa.exc.IntegrityError:
        session.rollback()
        return _write_problem(
            _("写入时与已有数据冲突（可能有人同时登记了同一家供应商），没有写入任何数据。请重新预览。")
        )
    except ServiceError as exc:
        session.rollback()
        return _write_problem(exc.errors[0].message if exc.errors else str(exc))
    return []


def _number_warnings(candidates: list[_Candidate], checked: _Checked) -> list[ImportProblem]:
    """Each malformed licence, filing or credit-code number of the providers the file writes, worded as
    the credential check will word it (red flag 9), so the preview says so before anything is applied."""
    from app.vetting.rules.numbers import malformed_numbers

    providers: list[tuple[int, Any]] = list(checked.new.items())
    for index, data in checked.updates.items():
        built, _errors = _build(data)
        if built is not None:
            providers.append((index, built))
    warnings = []
    for index, provider in sorted(providers, key=lambda pair: pair[0]):
        for path, value, problems in malformed_numbers(provider):
            row, where = candidates[index].locate(path)
            message = _(
                "编号格式错误（核查将记为红旗 9）：%(value)s：%(problems)s", value=value, problems=problems
            )
            warnings.append(ImportProblem(row, where, message))
    return warnings


def _check_written(session: Session, provider_ids: list[int]) -> None:
    """Check every provider the import created or changed, in the background: a file's licences and
    filings are vetted as soon as they land, never left unchecked until the nightly re-check."""
    from flask import has_app_context

    if not provider_ids or not has_app_context():  # outside the app (a script) the nightly check catches up
        return
    from app.core.jobs import enqueue

    enqueue(session, kind="vetting.check_all", params={"provider_ids": sorted(provider_ids)})


def import_provider_dicts(
    session: Session, *, providers: list[dict[str, Any]], dry_run: bool = False, format: str = "json"
) -> ImportReport:
    """Import already-parsed provider dicts (ProviderCreate-shaped): update matched ones, create the rest."""
    candidates = [
        _Candidate(
            i, _portable(p), _json_locator(i), record_id=p.get(ID_COLUMN) if isinstance(p, dict) else None
        )
        for i, p in enumerate(providers, start=1)
    ]
    return _import(session, candidates, [], format=format, dry_run=dry_run)


def _in_file_terms(problems: list[ImportProblem], columns: dict[str, str]) -> list[ImportProblem]:
    """Problems naming columns as the file's header does (e.g. in Chinese)."""
    return [
        ImportProblem(p.row, columns.get(p.field, p.field), p.message) if p.field in columns else p
        for p in problems
    ]


def _import(
    session: Session,
    candidates: list[_Candidate],
    problems: list[ImportProblem],
    *,
    format: str,
    dry_run: bool,
    progress: Progress = _no_progress,
    expected: list[Any] | None = None,
    columns: dict[str, str] | None = None,
    check_written: bool = False,
) -> ImportReport:
    """Check everything first (reads only), then write all in one short transaction, or nothing;
    `check_written` queues a credential check of the providers written."""
    report = ImportReport(format=format, dry_run=dry_run, providers=len(candidates))
    report.names = [candidate.name for candidate in candidates]
    duplicate_problems, duplicated = _duplicates(candidates)
    problems = problems + duplicate_problems
    reported = {(problem.row, problem.field) for problem in problems}
    checked = _check_all(session, candidates, duplicated, reported, progress)
    problems = sorted(problems + checked.problems, key=lambda p: p.row)
    report.plans = checked.plans
    report.warnings = _number_warnings(candidates, checked)
    report.expected = [plan.token for plan in checked.plans]
    actions = [plan.action for plan in checked.plans]
    report.new, report.updated = actions.count(CREATE), actions.count(UPDATE)
    report.unchanged = actions.count(UNCHANGED)
    if not problems and expected is not None:
        problems = _stale(session, checked.plans, expected)
        report.conflict = bool(problems)
    if not dry_run and not problems and (checked.new or checked.updates):
        progress(len(candidates), len(candidates), _("写入数据库"))
        problems = _write_all(session, checked)
        report.applied, report.conflict = not problems, bool(problems)
        report.created = len(checked.new) if report.applied else 0
        if report.applied and check_written:
            _check_written(session, checked.written)
    progress(len(candidates), len(candidates), "")
    report.problems = _in_file_terms(problems, columns or {})
    report.warnings = _in_file_terms(report.warnings, columns or {})
    if not candidates and not report.problems:
        report.problems = [ImportProblem(0, "providers", _("文件中没有供应商"))]
    return report


def import_providers(
    session: Session,
    *,
    data: bytes | str,
    format: str,
    dry_run: bool = False,
    progress: Progress = _no_progress,
    expected: list[Any] | None = None,
) -> ImportReport:
    """Preview (dry run) or apply a JSON or CSV file: matched providers are updated, the rest created.

    `session` supplies the database and the audit actor. Checking takes no write lock (a dry run never
    writes); applying is one transaction at the end, all or nothing. `expected` is a preview's
    `report.expected`: apply then refuses, writing nothing, when a provider changed since that preview.
    `progress(done, total, current)` is called as the rows are checked.
    """
    _check_format(format)
    columns: dict[str, str] = {}
    try:
        text = decode(data)
        if format == "json":
            candidates, problems = _read_json(text), []
        else:
            candidates, problems, columns = _read_csv(text)
    except _FileError as exc:
        return ImportReport(
            format=format, dry_run=dry_run, problems=[ImportProblem(0, exc.field, exc.message)]
        )
    return _import(
        session,
        candidates,
        problems,
        format=format,
        dry_run=dry_run,
        progress=progress,
        expected=expected,
        columns=columns,
        check_written=True,
    )
