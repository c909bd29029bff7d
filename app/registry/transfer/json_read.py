"""Read the providers of a JSON file: gpuvet exports, bare lists and API output."""

from __future__ import annotations

import json
from typing import Any

from flask_babel import gettext as _

from app.core.errors import field_path
from app.core.limits import depth_message, too_deep
from app.registry.transfer.candidates import Candidate, Locator
from app.registry.transfer.columns import ID_COLUMN
from app.registry.transfer.formats import FORMAT_NAME, FORMAT_VERSION, FileError

_BOOKKEEPING = ("id", "version", "created_at", "updated_at")


_DERIVED = {"licences": ("number", "number_kind", "categories"), "filings": ("number",)}


def portable(item: dict[str, Any]) -> dict[str, Any]:
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


def json_locator(row: int) -> Locator:
    return lambda path: (row, path)


def _load_json(text: str) -> Any:
    """The parsed document, refusing bad syntax, huge numbers and nesting deeper than MAX_JSON_DEPTH."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FileError(
            "", _("JSON 格式错误：第 %(line)s 行第 %(column)s 列", line=exc.lineno, column=exc.colno)
        ) from None
    except RecursionError:
        raise FileError("", depth_message()) from None
    except ValueError:  # e.g. an integer of more than 4,300 digits
        raise FileError("", _("JSON 无法解析：数字过长或内容无效")) from None
    deep = too_deep(document)
    if deep is not None:
        raise FileError(field_path(deep), depth_message())
    return document


def read_json(text: str) -> list[Candidate]:
    document = _load_json(text)
    if isinstance(document, dict):
        if "format" in document and document["format"] != FORMAT_NAME:
            raise FileError("format", _("不是 gpuvet 导出文件，format 应为“%(name)s”", name=FORMAT_NAME))
        version = document.get("version", FORMAT_VERSION)
        if not isinstance(version, int) or isinstance(version, bool) or version > FORMAT_VERSION:
            raise FileError(
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
        raise FileError("providers", _("须为供应商列表，或含 providers 列表的对象"))
    candidates = []
    for index, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            data: dict[str, Any] = {"__not_an_object__": item}
            record_id = None
        else:
            data, record_id = portable(item), item.get(ID_COLUMN)
        candidates.append(Candidate(index, data, json_locator(index), record_id=record_id))
    return candidates
