"""Input and output models of the provider aggregate (JSON API, forms, import/export)."""

from datetime import datetime
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, ValidationInfo, create_model, field_validator
from sqlmodel import Field, SQLModel

from app.core.limits import COLLECTION_LIMITS, LIST_FIELD_LIMIT, too_many
from app.models.fields import RecordId, SingleLine, number_fields, reject_bool
from app.models.provider import (
    CertificationBase,
    DatacenterBase,
    FilingBase,
    LicenceBase,
    OfferBase,
    ProviderBase,
)

# Input records refuse fields they do not know, at every level (a typo must not be dropped silently).
_STRICT = ConfigDict(extra="forbid")


def _no_bool_numbers(model: type[BaseModel]) -> Any:
    """A before-validator refusing true/false in every int/float field of `model`."""
    return field_validator(*number_fields(model), mode="before")(reject_bool)


def _cap(limit: int) -> Any:
    """A validator refusing a list longer than `limit` (used before item validation for collections)."""

    def check(value: Any) -> Any:
        message = too_many(value, limit)
        if message:
            raise ValueError(message)
        return value

    return check


class LicenceIn(LicenceBase):
    model_config = _STRICT

    id: Optional[RecordId] = None
    _lists = field_validator("business_items", "coverage")(_cap(LIST_FIELD_LIMIT))


class FilingIn(FilingBase):
    model_config = _STRICT

    id: Optional[RecordId] = None


class CertificationIn(CertificationBase):
    model_config = _STRICT

    id: Optional[RecordId] = None
    _numbers = _no_bool_numbers(CertificationBase)


class DatacenterIn(DatacenterBase):
    model_config = _STRICT

    id: Optional[RecordId] = None


class OfferIn(OfferBase):
    model_config = _STRICT

    id: Optional[RecordId] = None
    datacenter_id: Optional[RecordId] = None
    datacenter_name: Optional[SingleLine] = Field(default=None, max_length=120)
    _numbers = _no_bool_numbers(OfferBase)


def _cap_collection(value: Any, info: ValidationInfo) -> Any:
    """Refuse a nested collection longer than its COLLECTION_LIMITS entry, before validating its items."""
    return _cap(COLLECTION_LIMITS[info.field_name or ""])(value)


def _collection_caps() -> Any:
    return field_validator(*COLLECTION_LIMITS, mode="before")(_cap_collection)


class ProviderCreate(ProviderBase):
    model_config = _STRICT

    licences: list[LicenceIn] = Field(default_factory=list)
    filings: list[FilingIn] = Field(default_factory=list)
    certifications: list[CertificationIn] = Field(default_factory=list)
    datacenters: list[DatacenterIn] = Field(default_factory=list)
    offers: list[OfferIn] = Field(default_factory=list)
    _numbers = _no_bool_numbers(ProviderBase)
    _caps = _collection_caps()


def _partial(
    model: type[SQLModel], name: str, validators: dict[str, Any] | None = None, **extra: Any
) -> type[BaseModel]:
    """A copy of `model` with every field optional and only `validators` (documents partial updates)."""
    fields: dict[str, Any] = dict(extra)
    for field_name, info in model.model_fields.items():
        if field_name in fields:
            continue
        annotation = info.annotation
        origin_args = getattr(annotation, "__args__", ())
        if getattr(annotation, "__origin__", None) is list and origin_args and origin_args[0] in _PARTIALS:
            annotation = list[_PARTIALS[origin_args[0]]]
        fields[field_name] = (Optional[annotation], None)
    return create_model(name, __config__=_STRICT, __validators__=validators or {}, **fields)


_PARTIALS: dict[Any, type[BaseModel]] = {}
for _item in (LicenceIn, FilingIn, CertificationIn, DatacenterIn, OfferIn):
    _PARTIALS[_item] = _partial(_item, _item.__name__.replace("In", "Patch"))

# Documents PATCH bodies; values are validated by ProviderCreate after merging with the stored record.
ProviderPatch = _partial(
    ProviderCreate, "ProviderPatch", {"_caps": _collection_caps()}, version=(RecordId, ...)
)


class LicencePublic(LicenceBase):
    id: int
    number: Optional[str]
    number_kind: str
    categories: list[str]


class FilingPublic(FilingBase):
    id: int
    number: Optional[str]


class CertificationPublic(CertificationBase):
    id: int


class DatacenterPublic(DatacenterBase):
    id: int


class OfferPublic(OfferBase):
    id: int
    datacenter_id: Optional[int]


class ProviderSummary(ProviderBase):
    id: int
    version: int
    created_at: datetime
    updated_at: datetime


class ProviderPublic(ProviderSummary):
    licences: list[LicencePublic] = Field(default_factory=list)
    filings: list[FilingPublic] = Field(default_factory=list)
    certifications: list[CertificationPublic] = Field(default_factory=list)
    datacenters: list[DatacenterPublic] = Field(default_factory=list)
    offers: list[OfferPublic] = Field(default_factory=list)


class ProviderPage(SQLModel):
    items: list[ProviderPublic]
    total: int
    page: int
    per_page: int
    pages: int
