"""Input and output models of the provider aggregate (JSON API, forms, import/export)."""

from datetime import datetime
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, create_model
from sqlmodel import Field, SQLModel

from app.models.provider import (
    CertificationBase,
    DatacenterBase,
    FilingBase,
    LicenceBase,
    OfferBase,
    ProviderBase,
)


class LicenceIn(LicenceBase):
    id: Optional[int] = None


class FilingIn(FilingBase):
    id: Optional[int] = None


class CertificationIn(CertificationBase):
    id: Optional[int] = None


class DatacenterIn(DatacenterBase):
    id: Optional[int] = None


class OfferIn(OfferBase):
    id: Optional[int] = None
    datacenter_id: Optional[int] = None
    datacenter_name: Optional[str] = Field(default=None, max_length=120)


class ProviderCreate(ProviderBase):
    model_config = ConfigDict(extra="forbid")

    licences: list[LicenceIn] = Field(default_factory=list)
    filings: list[FilingIn] = Field(default_factory=list)
    certifications: list[CertificationIn] = Field(default_factory=list)
    datacenters: list[DatacenterIn] = Field(default_factory=list)
    offers: list[OfferIn] = Field(default_factory=list)


def _partial(model: type[SQLModel], name: str, **extra: Any) -> type[BaseModel]:
    """A copy of `model` with every field optional and no validators (documents partial updates)."""
    fields: dict[str, Any] = dict(extra)
    for field_name, info in model.model_fields.items():
        if field_name in fields:
            continue
        annotation = info.annotation
        origin_args = getattr(annotation, "__args__", ())
        if getattr(annotation, "__origin__", None) is list and origin_args and origin_args[0] in _PARTIALS:
            annotation = list[_PARTIALS[origin_args[0]]]
        fields[field_name] = (Optional[annotation], None)
    return create_model(name, __config__=ConfigDict(extra="forbid"), **fields)


_PARTIALS: dict[Any, type[BaseModel]] = {}
for _item in (LicenceIn, FilingIn, CertificationIn, DatacenterIn, OfferIn):
    _PARTIALS[_item] = _partial(_item, _item.__name__.replace("In", "Patch"))

# Documents PATCH bodies; values are validated by ProviderCreate after merging with the stored record.
ProviderPatch = _partial(ProviderCreate, "ProviderPatch", version=(int, ...))


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
