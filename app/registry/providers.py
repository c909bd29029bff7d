"""Provider registry: create, read, change and delete providers and their nested records."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from flask_babel import gettext as _
from pydantic import BaseModel, ValidationError
from sqlalchemy.orm import object_session, selectinload
from sqlmodel import Session, SQLModel, col, select

from app.core import clock
from app.core.errors import Conflict, InvalidInput, NotFound, ServiceError, from_validation_error
from app.core.events import EvidenceChanged, publish
from app.core.records import get_or_404
from app.core.versions import VersionedKind, check_version, commit_versioned
from app.models import AuditEntry, Certification, Datacenter, Filing, Licence, Offer, Provider
from app.models.enums import FilingKind
from app.models.io import (
    CertificationIn,
    DatacenterIn,
    FilingIn,
    LicenceIn,
    OfferIn,
    ProviderCreate,
    ProviderPatch,
)
from app.models.provider import ProviderBase
from app.registry.status_lock import check_status_change
from app.vetting.identifiers import identify

PROVIDER_FIELDS = tuple(ProviderBase.model_fields)


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def atomic(function: Callable[..., Any]) -> Callable[..., Any]:
    """Roll the session back when a service refuses a change, so nothing half-done is flushed."""

    @functools.wraps(function)
    def wrapper(session: Session, **kwargs: Any) -> Any:
        try:
            return function(session, **kwargs)
        except ServiceError:
            session.rollback()
            raise

    return wrapper


def _derive_licence(licence: Licence, field: str) -> None:
    ident = identify(licence.number_raw)
    licence.number = ident.normalized
    licence.number_kind = ident.kind
    licence.categories = list(ident.parts.get("categories", [])) if ident.kind == "licence" else []


def _derive_filing(filing: Filing, field: str) -> None:
    ident = identify(filing.number_raw)
    if filing.kind is None:
        if ident.kind not in set(FilingKind):
            raise InvalidInput(
                _("无法从号码判断类型，请选择 ICP 备案 / ICP 证 / 公网安备"),
                field=_join(field, "kind"),
            )
        filing.kind = FilingKind(ident.kind)
    filing.number = ident.normalized


def _noop(_record: Any, _field: str) -> None:
    return None


@dataclass(frozen=True)
class ChildKind:
    """How one nested collection of a provider is validated, stored and derived."""

    collection: str
    schema: type[SQLModel]
    table: type[SQLModel]
    derive: Callable[[Any, str], None] = _noop


CHILD_KINDS = {
    kind.collection: kind
    for kind in (
        ChildKind("licences", LicenceIn, Licence, _derive_licence),
        ChildKind("filings", FilingIn, Filing, _derive_filing),
        ChildKind("certifications", CertificationIn, Certification),
        ChildKind("datacenters", DatacenterIn, Datacenter),
        ChildKind("offers", OfferIn, Offer),
    )
}


# Datacenters first, so that offers can refer to a datacenter created in the same request.
CHILD_ORDER = ("licences", "filings", "certifications", "datacenters", "offers")


def child_kind(collection: str) -> ChildKind:
    """Look up a nested collection by name; unknown names are a 404."""
    try:
        return CHILD_KINDS[collection]
    except KeyError:
        raise NotFound(_("没有这种记录：%(kind)s", kind=collection), field="collection") from None


def with_children() -> list[Any]:
    """Loader options that read every nested record of the providers a query selects."""
    return [
        selectinload(Provider.licences),
        selectinload(Provider.filings),
        selectinload(Provider.certifications),
        selectinload(Provider.datacenters),
        selectinload(Provider.offers),
    ]


def get_provider(session: Session, *, provider_id: int) -> Provider:
    """Load one provider with every nested record, or raise NotFound."""
    provider = session.exec(
        select(Provider).where(Provider.id == provider_id).options(*with_children())
    ).first()
    if provider is None:
        raise NotFound(_("供应商 %(id)s 不存在", id=provider_id), field="id")
    return provider


def provider_row(session: Session, provider_id: int) -> Provider:
    """The provider's own row (nothing nested loaded), or NotFound naming provider_id."""
    return get_or_404(
        session, Provider, provider_id, _("供应商 %(id)d 不存在", id=provider_id), field="provider_id"
    )


def history(session: Session, *, provider_id: int, limit: int = 200) -> list[AuditEntry]:
    """Audit entries of a provider and its nested records, newest first."""
    return list(
        session.exec(
            select(AuditEntry)
            .where(AuditEntry.provider_id == provider_id)
            .order_by(col(AuditEntry.id).desc())
            .limit(limit)
        ).all()
    )


def _validate(schema: type[BaseModel], data: Any, prefix: str = "") -> Any:
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise from_validation_error(exc, prefix) from None


PROVIDER_VERSIONS = VersionedKind(
    Provider, "供应商", "provider", lambda provider_id: AuditEntry.provider_id == provider_id
)


def _check_version(session: Session, provider: Provider, expected: Any) -> int:
    return check_version(session, PROVIDER_VERSIONS, provider, expected)


def _touch(provider: Provider) -> None:
    provider.version += 1
    provider.updated_at = clock.now()


@dataclass(frozen=True)
class _DatacenterIndex:
    """A provider's datacenters by name and by id, built once per change."""

    by_name: dict[str, Datacenter]
    by_id: dict[int, Datacenter]


def _datacenter_index(provider: Provider) -> _DatacenterIndex:
    by_name: dict[str, Datacenter] = {}
    for datacenter in provider.datacenters:
        by_name.setdefault(datacenter.name, datacenter)
    by_id = {dc.id: dc for dc in provider.datacenters if dc.id is not None}
    return _DatacenterIndex(by_name, by_id)


def _resolve_datacenter(
    provider: Provider, offer: Offer, data: OfferIn, field: str, index: _DatacenterIndex | None = None
) -> None:
    index = index or _datacenter_index(provider)
    if data.datacenter_name:
        if data.datacenter_name not in index.by_name:
            raise InvalidInput(
                _("本供应商没有名为“%(name)s”的机房", name=data.datacenter_name),
                field=_join(field, "datacenter_name"),
            )
        offer.datacenter = index.by_name[data.datacenter_name]
    elif data.datacenter_id is not None:
        if data.datacenter_id not in index.by_id:
            raise InvalidInput(
                _("机房不属于本供应商"),
                field=_join(field, "datacenter_id"),
            )
        offer.datacenter = index.by_id[data.datacenter_id]
    else:
        offer.datacenter = None


def _apply_child(
    provider: Provider,
    kind: ChildKind,
    record: Any,
    data: Any,
    field: str,
    datacenters: _DatacenterIndex | None = None,
) -> None:
    values = data.model_dump(exclude={"id", "datacenter_id", "datacenter_name"})
    for key, value in values.items():
        setattr(record, key, value)
    kind.derive(record, field)
    if kind.collection == "offers":
        _resolve_datacenter(provider, record, data, field, datacenters)


def _replace_children(provider: Provider, collection: str, items: list[Any]) -> None:
    """Make the collection exactly `items` (linear: records are compared by identity, not by value)."""
    kind = CHILD_KINDS[collection]
    records = getattr(provider, collection)
    current = {record.id: record for record in records if record.id is not None}
    present = {id(record) for record in records}
    kept: set[int] = set()
    datacenters = _datacenter_index(provider) if collection == "offers" else None
    for index, data in enumerate(items):
        field = f"{collection}[{index}]"
        if data.id is not None and data.id not in current:
            raise InvalidInput(_("本供应商没有这条记录"), field=f"{field}.id")
        record = current.get(data.id) if data.id is not None else kind.table()
        if id(record) not in present:
            records.append(record)
            present.add(id(record))
        _apply_child(provider, kind, record, data, field, datacenters)
        kept.add(id(record))
    for position in reversed(range(len(records))):
        record = records[position]
        if id(record) in kept:
            continue
        del records[position]
        if (session := object_session(record)) is not None and record.id is not None:
            session.delete(
                record
            )  # explicit, so the audit trail sees it (orphans are not in session.deleted)


def _check_datacenter_names(payload: ProviderCreate) -> None:
    seen: set[str] = set()
    for index, datacenter in enumerate(payload.datacenters):
        if datacenter.name in seen:
            raise InvalidInput(
                _("同一供应商的机房名称不能重复"),
                field=f"datacenters[{index}].name",
            )
        seen.add(datacenter.name)


def _check_unique_uscc(session: Session, uscc: str | None, provider_id: int | None) -> None:
    if not uscc:
        return
    other = session.exec(select(Provider).where(Provider.uscc == uscc)).first()
    if other is not None and other.id != provider_id:
        raise Conflict(
            _(
                "统一社会信用代码 %(uscc)s 已登记在“%(name)s”(#%(id)s) 名下",
                uscc=uscc,
                name=other.legal_name,
                id=other.id,
            ),
            field="uscc",
        )


def _commit(session: Session, *, provider_id: int | None = None, expected: int | None = None) -> None:
    """Commit; a duplicate is a 409, and so is a version another writer committed first."""
    try:
        commit_versioned(session, PROVIDER_VERSIONS, provider_id, expected)
    except sa.exc.IntegrityError as exc:
        session.rollback()
        raise Conflict(_("与已有数据冲突：%(detail)s", detail=exc.orig), field="") from None


def _recheck_if_checked(session: Session, provider_id: int) -> None:
    """A provider checked before is checked again after an edit, so no page shows a verdict older than the
    data it is about (a provider never checked stays so until someone runs the check)."""
    checked = session.exec(select(Provider.latest_check_run_id).where(Provider.id == provider_id)).first()
    if checked is not None:
        publish(session, EvidenceChanged(provider_id=provider_id, since=clock.now(), cause="registry edit"))


def build_provider(*, data: Any) -> Provider:
    """Validate a provider with its nested records into new, unsaved objects (reads no database)."""
    payload: ProviderCreate = _validate(ProviderCreate, data)
    _check_datacenter_names(payload)
    provider = Provider.model_validate(payload.model_dump(include=set(PROVIDER_FIELDS)))
    for collection in CHILD_ORDER:
        _replace_children(provider, collection, getattr(payload, collection))
    return provider


def registered_usccs(session: Session, usccs: Iterable[str]) -> dict[str, str]:
    """Which of these credit codes are already registered, with the holder's name (a few statements)."""
    wanted = sorted({code for code in usccs if code})
    found: dict[str, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = session.exec(select(Provider.uscc, Provider.legal_name).where(col(Provider.uscc).in_(chunk)))
        found.update({uscc: name for uscc, name in rows.all()})
    return found


@atomic
def create_provider(session: Session, *, data: Any) -> Provider:
    """Validate and store a provider with its nested records."""
    provider = build_provider(data=data)
    _check_unique_uscc(session, provider.uscc, None)
    session.add(provider)
    _commit(session)
    return get_provider(session, provider_id=provider.id)


def provider_input(provider: Provider, *, portable: bool = False) -> dict[str, Any]:
    """The provider as a ProviderCreate-shaped dict; `portable` drops database ids (for export)."""
    data = {name: getattr(provider, name) for name in PROVIDER_FIELDS}
    for collection in CHILD_ORDER:
        kind = CHILD_KINDS[collection]
        items = []
        for record in getattr(provider, collection):
            item = {name: getattr(record, name) for name in kind.schema.model_fields if hasattr(record, name)}
            if collection == "offers":
                item["datacenter_name"] = record.datacenter.name if record.datacenter else None
            if portable:
                item.pop("id", None)
                item.pop("datacenter_id", None)
            items.append(item)
        data[collection] = items
    return data


def _merge_items(current: list[dict[str, Any]], items: list[Any]) -> list[Any]:
    """Items that name an existing id change only the fields they give; others are taken whole."""
    by_id = {item["id"]: item for item in current}
    merged = []
    for item in items:
        if isinstance(item, dict) and item.get("id") in by_id:
            base = dict(by_id[item["id"]])
            if "datacenter_id" in item:
                base.pop("datacenter_name", None)
            base.update(item)
            item = base
        merged.append(item)
    return merged


@atomic
def update_provider(session: Session, *, provider_id: int, patch: dict[str, Any]) -> Provider:
    """Apply a partial change; `patch["version"]` must match the stored version."""
    if not isinstance(patch, dict):
        raise InvalidInput(_("请求体须为 JSON 对象"), field="")
    provider = get_provider(session, provider_id=provider_id)
    expected = _check_version(session, provider, patch.get("version"))
    _validate(ProviderPatch, patch)
    merged = {name: getattr(provider, name) for name in PROVIDER_FIELDS}
    merged.update({key: value for key, value in patch.items() if key in PROVIDER_FIELDS})
    current = provider_input(provider)
    for collection in CHILD_ORDER:
        merged[collection] = _merge_items(current[collection], patch.get(collection) or [])
    payload: ProviderCreate = _validate(ProviderCreate, merged)
    _check_datacenter_names(payload)
    _check_unique_uscc(session, payload.uscc, provider.id)
    check_status_change(session, provider.id, provider.status, payload.status)
    for name in PROVIDER_FIELDS:
        setattr(provider, name, getattr(payload, name))
    for collection in CHILD_ORDER:
        if patch.get(collection) is not None:
            _replace_children(provider, collection, getattr(payload, collection))
    _touch(provider)
    _commit(session, provider_id=provider.id, expected=expected)
    _recheck_if_checked(session, provider.id)
    return get_provider(session, provider_id=provider.id)


@atomic
def delete_provider(session: Session, *, provider_id: int, expected_version: Any = None) -> None:
    """Delete a provider and its nested records (each deletion is audited)."""
    provider = get_provider(session, provider_id=provider_id)
    expected = provider.version
    if expected_version is not None:
        expected = _check_version(session, provider, expected_version)
    session.delete(provider)
    _commit(session, provider_id=provider_id, expected=expected)


@atomic
def save_child(
    session: Session,
    *,
    provider_id: int,
    collection: str,
    child_id: int | None,
    data: dict[str, Any],
    expected_version: Any,
) -> Any:
    """Create (child_id None) or change one nested record of a provider."""
    kind = child_kind(collection)
    provider = get_provider(session, provider_id=provider_id)
    expected = _check_version(session, provider, expected_version)
    payload = _validate(kind.schema, data)
    if child_id is None:
        record = kind.table()
        getattr(provider, collection).append(record)
    else:
        record = find_child(provider, collection=collection, child_id=child_id)
    if collection == "datacenters":
        clash = [dc for dc in provider.datacenters if dc.name == payload.name and dc is not record]
        if clash:
            raise InvalidInput(_("同一供应商的机房名称不能重复"), field="name")
    _apply_child(provider, kind, record, payload, "")
    _touch(provider)
    _commit(session, provider_id=provider_id, expected=expected)
    _recheck_if_checked(session, provider_id)
    return record


def find_child(provider: Provider, *, collection: str, child_id: int) -> Any:
    """One nested record of a loaded provider, or NotFound."""
    child_kind(collection)
    for record in getattr(provider, collection):
        if record.id == child_id:
            return record
    raise NotFound(_("记录 %(id)s 不存在", id=child_id), field="id")


@atomic
def delete_child(
    session: Session, *, provider_id: int, collection: str, child_id: int, expected_version: Any
) -> None:
    """Delete one nested record of a provider."""
    provider = get_provider(session, provider_id=provider_id)
    expected = _check_version(session, provider, expected_version)
    record = find_child(provider, collection=collection, child_id=child_id)
    getattr(provider, collection).remove(record)
    session.delete(
        record
    )  # explicit, so the audit trail sees it (orphan removal alone is not in session.deleted)
    _touch(provider)
    _commit(session, provider_id=provider_id, expected=expected)
    _recheck_if_checked(session, provider_id)
