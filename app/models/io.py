"""Input and output models of the provider aggregate (JSON API, forms, import/export)."""


from datetime import datetime
from typing import Any, Optional

from pydantic import ConfigDict, create_model
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


def _partial_fields() -> dict[str, Any]:
    fields: dict[str, Any] = {"version": (int, ...)}
    for name, info in ProviderCreate.model_fields.items():
        fields[name] = (Optional[info.annotation], None)
    return fields


# Documents PATCH bodies; values are validated by ProviderCreate after merging with the stored record.
ProviderPatch = create_model(
    "ProviderPatch", __config__=ConfigDict(extra="forbid"), **_partial_fields()
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
