"""What an import will do to the registry: match file rows to stored providers, diff them, apply the plan.

A row matches a stored provider by its unified social credit code; a row without one (or with a code not yet
registered, for a stored provider that has none) matches by the file's ``id``. Matched providers are
updated, the rest created. A file that leaves a column out keeps the stored values of that field; a blank
cell clears it. Nested records are paired by position (the export's order), so a spreadsheet edit of one
cell changes just that field of that record.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import date, datetime
from enum import Enum
from typing import Any

from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.core.clock import aware, when
from app.models import AuditEntry, Provider
from app.models.io import ProviderCreate
from app.models.provider import CertificationBase, DatacenterBase, FilingBase, LicenceBase, OfferBase
from app.registry.providers import (
    CHILD_ORDER,
    PROVIDER_FIELDS,
    _replace_children,
    _touch,
    _validate,
    provider_input,
    with_children,
)

CREATE, UPDATE, UNCHANGED = "create", "update", "unchanged"
_CHUNK = 500
# The fields a file carries for each kind of nested record (no ids, no derived fields).
CHILD_FIELDS: dict[str, tuple[str, ...]] = {
    "licences": tuple(LicenceBase.model_fields),
    "filings": tuple(FilingBase.model_fields),
    "certifications": tuple(CertificationBase.model_fields),
    "datacenters": tuple(DatacenterBase.model_fields),
    "offers": (*OfferBase.model_fields, "datacenter_name"),
}


def plain(value: Any) -> Any:
    """A value as JSON has it: enums by value, dates as ISO text, lists and dicts element by element."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    return value


@dataclass(frozen=True)
class Change:
    """One difference between the stored provider and the file."""

    kind: str  # "changed", "added" (a nested record the file adds) or "removed"
    collection: str = ""  # "" for the provider's own fields
    number: int = 0  # 1-based position of the nested record
    item: str = ""  # the nested record's name or number, for the reader
    field: str = ""  # the changed field ("" for added or removed records)
    old: Any = None
    new: Any = None


@dataclass
class ProviderPlan:
    """What the import does to one provider of the file."""

    row: int
    name: str
    action: str  # CREATE, UPDATE or UNCHANGED
    provider_id: int | None = None
    version: int | None = None
    changes: list[Change] = field(default_factory=list)

    @property
    def token(self) -> list[int | None]:
        """What apply must find again: the matched provider and its version (None, None for a new one)."""
        return [self.provider_id, self.version]

    def as_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {**asdict(self), "changes": [asdict(change) for change in self.changes]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProviderPlan:
        """The plan stored by as_dict."""
        changes = [Change(**change) for change in data.get("changes", [])]
        return cls(**{**data, "changes": changes})


# ---------------------------------------------------------------- matching


def load_providers(session: Session, *, usccs: Iterable[str] = (), ids: Iterable[int] = ()) -> list[Provider]:
    """Stored providers with these credit codes or ids, with every nested record (a few statements)."""
    found: dict[int, Provider] = {}
    for column, values in ((Provider.uscc, sorted(set(usccs))), (Provider.id, sorted(set(ids)))):
        for start in range(0, len(values), _CHUNK):
            chunk = values[start : start + _CHUNK]
            statement = select(Provider).where(col(column).in_(chunk)).options(*with_children())
            found.update((provider.id, provider) for provider in session.exec(statement).all())
    return list(found.values())


def match(keys: list[tuple[str | None, int | None]], stored: list[Provider]) -> list[Provider | None]:
    """The stored provider each (credit code, id) pair of the file updates, or None for a new one."""
    by_uscc = {provider.uscc: provider for provider in stored if provider.uscc}
    by_id = {provider.id: provider for provider in stored}
    result: list[Provider | None] = []
    for uscc, record_id in keys:
        if uscc and uscc in by_uscc:
            result.append(by_uscc[uscc])
            continue
        holder = by_id.get(record_id) if record_id is not None else None
        if holder is not None and (not uscc or not holder.uscc):
            result.append(holder)
        else:
            result.append(None)
    return result


# ---------------------------------------------------------------- merging and diffing


def stored_input(provider: Provider) -> dict[str, Any]:
    """A stored provider as the file-shaped dict it would export to (plain values)."""
    data = plain(provider_input(provider, portable=True))
    for collection in CHILD_ORDER:
        fields = CHILD_FIELDS[collection]
        data[collection] = [{k: v for k, v in item.items() if k in fields} for item in data[collection]]
    return data


Given = dict[
    str, set[str] | None
]  # "" -> provider fields given; collection -> its fields (None: the item's keys)


def merged(stored: dict[str, Any], file: dict[str, Any], given: Given) -> dict[str, Any]:
    """The provider after the import: the file's values for what it gives, the stored ones for the rest."""
    provider_given = given.get("") or set()
    data = {name: file.get(name) if name in provider_given else stored.get(name) for name in PROVIDER_FIELDS}
    for collection in CHILD_ORDER:
        if collection not in given:
            data[collection] = stored.get(collection) or []
            continue
        items = file.get(collection)
        if not isinstance(items, list):
            data[collection] = items  # let validation name the problem
            continue
        kept = stored.get(collection) or []
        fields = CHILD_FIELDS[collection]
        result = []
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                result.append(item)
                continue
            base = kept[index] if index < len(kept) else {}
            named = given[collection] if given[collection] is not None else set(item)
            merged_item = {name: item.get(name) if name in named else base.get(name) for name in fields}
            merged_item.update({key: value for key, value in item.items() if key not in fields})
            result.append(merged_item)
        data[collection] = result
    return _without_blanks(data)


def _without_blanks(data: dict[str, Any]) -> dict[str, Any]:
    """Drop None values so that the models' defaults apply, as for a new provider."""
    result = {key: value for key, value in data.items() if value is not None}
    for collection in CHILD_ORDER:
        items = result.get(collection)
        if isinstance(items, list):
            result[collection] = [
                {k: v for k, v in item.items() if v is not None} if isinstance(item, dict) else item
                for item in items
            ]
    return result


def _item_name(collection: str, item: dict[str, Any]) -> str:
    for key in ("name", "number_raw", "kind", "number", "gpu_model"):
        if item.get(key):
            return str(item[key])
    return ""


def _blank(value: Any) -> bool:
    return value in (None, "", [])


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """Every field that differs between two file-shaped providers (nested records paired by position)."""
    changes = [
        Change("changed", field=name, old=before.get(name), new=after.get(name))
        for name in PROVIDER_FIELDS
        if before.get(name) != after.get(name) and not (_blank(before.get(name)) and _blank(after.get(name)))
    ]
    for collection in CHILD_ORDER:
        old_items, new_items = before.get(collection) or [], after.get(collection) or []
        fields = CHILD_FIELDS[collection]
        for index in range(max(len(old_items), len(new_items))):
            number = index + 1
            if index >= len(old_items):
                item = new_items[index]
                changes.append(Change("added", collection, number, _item_name(collection, item)))
                continue
            if index >= len(new_items):
                item = old_items[index]
                changes.append(Change("removed", collection, number, _item_name(collection, item)))
                continue
            old, new = old_items[index], new_items[index]
            for name in fields:
                if old.get(name) != new.get(name) and not (_blank(old.get(name)) and _blank(new.get(name))):
                    changes.append(
                        Change(
                            "changed",
                            collection,
                            number,
                            _item_name(collection, old),
                            name,
                            old.get(name),
                            new.get(name),
                        )
                    )
    return changes


def with_child_ids(provider: Provider, data: dict[str, Any]) -> dict[str, Any]:
    """The merged data with the stored nested records' ids, paired by position (so they are updated)."""
    result = dict(data)
    for collection in CHILD_ORDER:
        records = getattr(provider, collection)
        items = result.get(collection) or []
        result[collection] = [
            {**item, "id": records[index].id} if index < len(records) else dict(item)
            for index, item in enumerate(items)
        ]
    return result


# ---------------------------------------------------------------- applying


def apply_update(provider: Provider, data: dict[str, Any]) -> None:
    """Change a loaded provider to the merged data (its nested records paired by position), one version up."""
    payload: ProviderCreate = _validate(ProviderCreate, with_child_ids(provider, data))
    for name in PROVIDER_FIELDS:
        value = getattr(payload, name)
        if getattr(provider, name) != value:
            setattr(provider, name, value)
    for collection in CHILD_ORDER:
        _replace_children(provider, collection, getattr(payload, collection))
    _touch(provider)


def changed_meanwhile(session: Session, name: str, provider_id: int | None, current: int | None) -> str:
    """Why apply refuses a provider that was registered, changed or deleted after the preview."""
    if provider_id is None:
        return _(
            "“%(name)s”在预览之后已由他人登记，现在导入会修改它而不是新增。没有写入任何数据，请重新预览。",
            name=name,
        )
    if current is None:
        return _("“%(name)s”在预览之后已被删除。没有写入任何数据，请重新预览。", name=name)
    last = session.exec(
        select(AuditEntry).where(AuditEntry.provider_id == provider_id).order_by(col(AuditEntry.id).desc())
    ).first()
    if last is None:
        return _("“%(name)s”在预览之后已被他人修改。没有写入任何数据，请重新预览。", name=name)
    return _(
        "“%(name)s”在预览之后已被 %(who)s 于 %(at)s 修改。没有写入任何数据，请重新预览后再应用。",
        name=name,
        who=last.actor_name,
        at=when(aware(last.at)),
    )
