"""Provider aggregate: the provider and its licences, filings, certifications, datacenters, offers."""

import re
import unicodedata
from datetime import date, datetime
from typing import Any, Optional

import sqlalchemy as sa
from flask_babel import gettext as _
from pydantic import ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError
from sqlmodel import JSON, Column, Field, Relationship, SQLModel

from app.core import clock
from app.models.enums import (
    BUSINESS_ITEMS,
    BandwidthType,
    CertificationKind,
    FilingKind,
    LicenceStatus,
    OfferKind,
    ProviderStatus,
    RdmaType,
    StorageType,
)
from app.models.fields import (
    MultiLine,
    SingleLine,
    blank_values,
    checked_email,
    resolve_province_name,
    single_line,
    split_list,
    website_url,
)
from app.models.versioning import Versioned

_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def strict_date(value: Any) -> Any:
    """A date is a date or YYYY-MM-DD text; a number or other text (pydantic reads 0 and "0" as 1970-01-01,
    and a midnight datetime as its day) is refused, as the document's format: date says."""
    if isinstance(value, (int, float)) or (isinstance(value, str) and not _DATE_TEXT.fullmatch(value)):
        raise PydanticCustomError("date_type", "a date is YYYY-MM-DD")
    return value


def _str_enum(length: int = 20) -> dict[str, Any]:
    return {"sa_type": sa.String(length)}


class _Clean(SQLModel):
    """Base for input models: empty strings become None before validation (control characters are left for
    each text field's type to judge: SingleLine refuses them, MultiLine keeps only tabs and line breaks)."""

    _blanks = model_validator(mode="before")(blank_values)


# ---------------------------------------------------------------- provider
class ProviderBase(_Clean):
    legal_name: SingleLine = Field(min_length=2, max_length=200, index=True)
    legal_name_en: Optional[SingleLine] = Field(default=None, max_length=200)
    short_name: Optional[SingleLine] = Field(default=None, max_length=60)
    uscc: Optional[SingleLine] = Field(default=None, max_length=32, unique=True)
    registered_province: Optional[SingleLine] = Field(default=None, max_length=16, index=True)
    registered_address: Optional[SingleLine] = Field(default=None, max_length=300)
    website: Optional[SingleLine] = Field(default=None, max_length=300)
    registered_capital_cny: Optional[int] = Field(default=None, ge=0, le=10**15, sa_type=sa.BigInteger)
    contact_name: Optional[SingleLine] = Field(default=None, max_length=60)
    contact_phone: Optional[SingleLine] = Field(default=None, max_length=40)
    contact_email: Optional[SingleLine] = Field(default=None, max_length=200)
    notes: Optional[MultiLine] = Field(default=None, max_length=5000, sa_type=sa.Text)
    status: ProviderStatus = Field(default=ProviderStatus.candidate, index=True, **_str_enum())
    discloses_network_topology: Optional[bool] = None
    discloses_storage_config: Optional[bool] = None

    @field_validator("uscc", mode="before")
    @classmethod
    def _uscc(cls, value: Any) -> Any:
        if isinstance(value, str):
            return "".join(unicodedata.normalize("NFKC", single_line(value)).split()).upper() or None
        return value

    _province = field_validator("registered_province", mode="before")(resolve_province_name)
    _website = field_validator("website", mode="before")(website_url)
    _email = field_validator("contact_email")(checked_email)


def _owned(model: str) -> Any:
    """A provider's collection of `model` rows, in id order, deleted with the provider."""
    return Relationship(
        back_populates="provider",
        sa_relationship_kwargs={"cascade": "all, delete-orphan", "order_by": f"{model}.id"},
    )


class Provider(Versioned, ProviderBase, table=True):
    __audited__ = True
    __audit_skip__ = ("latest_check_run_id",)  # bookkeeping kept by the check runs, not an edit

    id: Optional[int] = Field(default=None, primary_key=True)
    version: int = Field(default=1)
    # The newest check run, advanced in the transaction that stores a run (app.models.latest_runs), so
    # the dashboard and list filters join one row instead of seeking every provider's runs.
    latest_check_run_id: Optional[int] = Field(
        default=None,
        sa_column=Column(
            sa.Integer,
            sa.ForeignKey(
                "check_run.id", ondelete="SET NULL", use_alter=True, name="fk_provider_latest_check_run_id"
            ),
            nullable=True,
            index=True,
        ),
    )
    created_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))
    updated_at: datetime = Field(default_factory=clock.now, sa_type=sa.DateTime(timezone=True))

    licences: list["Licence"] = _owned("Licence")
    filings: list["Filing"] = _owned("Filing")
    certifications: list["Certification"] = _owned("Certification")
    datacenters: list["Datacenter"] = _owned("Datacenter")
    offers: list["Offer"] = _owned("Offer")


# ---------------------------------------------------------------- licence
class LicenceBase(_Clean):
    number_raw: SingleLine = Field(min_length=1, max_length=80)
    company_name: Optional[SingleLine] = Field(default=None, max_length=200)
    business_items: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    b11_includes_resource_collab: Optional[bool] = None
    coverage: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    issuer: Optional[SingleLine] = Field(default=None, max_length=120)
    issued_on: Optional[date] = None
    expires_on: Optional[date] = None
    status: LicenceStatus = Field(default=LicenceStatus.normal, **_str_enum(8))

    @field_validator("business_items", mode="before")
    @classmethod
    def _items(cls, value: Any) -> Any:
        items = [str(item).strip().upper() for item in split_list(value)]
        unknown = [item for item in items if item not in BUSINESS_ITEMS]
        if unknown:
            raise ValueError(
                _(
                    "未知业务代码 %(unknown)s；可填 %(known)s",
                    unknown=", ".join(unknown),
                    known=", ".join(BUSINESS_ITEMS),
                )
            )
        return sorted(set(items))

    @field_validator("coverage", mode="before")
    @classmethod
    def _coverage(cls, value: Any) -> Any:
        return split_list(value)

    @field_validator("issued_on", "expires_on", mode="before")
    @classmethod
    def _date_text(cls, value: Any) -> Any:
        return strict_date(value)

    @field_validator("expires_on")
    @classmethod
    def _dates(cls, value: Optional[date], info: ValidationInfo) -> Optional[date]:
        issued = info.data.get("issued_on")
        if value and issued and value < issued:
            raise ValueError(_("有效期截止日早于发证日期"))
        return value


class Licence(LicenceBase, table=True):
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    number: Optional[str] = Field(default=None, max_length=80, index=True)
    number_kind: str = Field(default="unknown", max_length=16)
    categories: list[str] = Field(default_factory=list, sa_column=Column(JSON, nullable=False))
    provider: Optional[Provider] = Relationship(back_populates="licences")


# ---------------------------------------------------------------- filing
class FilingBase(_Clean):
    kind: Optional[FilingKind] = Field(default=None, **_str_enum(16))
    number_raw: SingleLine = Field(min_length=1, max_length=80)
    entity_name: Optional[SingleLine] = Field(default=None, max_length=200)
    entity_nature: Optional[SingleLine] = Field(default=None, max_length=20)
    domain: Optional[SingleLine] = Field(default=None, max_length=200)


class Filing(FilingBase, table=True):
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    number: Optional[str] = Field(default=None, max_length=80, index=True)
    provider: Optional[Provider] = Relationship(back_populates="filings")


# ---------------------------------------------------------------- certification
class CertificationBase(_Clean):
    kind: CertificationKind = Field(**_str_enum(16))
    name: Optional[SingleLine] = Field(default=None, max_length=120, schema_extra={"validate_default": True})
    level: Optional[int] = Field(default=None, ge=1, le=5, schema_extra={"validate_default": True})
    number: Optional[SingleLine] = Field(default=None, max_length=80)
    issuer: Optional[SingleLine] = Field(default=None, max_length=120)
    expires_on: Optional[date] = None

    @field_validator("expires_on", mode="before")
    @classmethod
    def _date_text(cls, value: Any) -> Any:
        return strict_date(value)

    @field_validator("name")
    @classmethod
    def _name(cls, value: Optional[str], info: ValidationInfo) -> Optional[str]:
        if info.data.get("kind") == CertificationKind.other and not value:
            raise ValueError(_("“其他”类认证须填写名称"))
        return value

    @field_validator("level")
    @classmethod
    def _level(cls, value: Optional[int], info: ValidationInfo) -> Optional[int]:
        if info.data.get("kind") == CertificationKind.dengbao and value is None:
            raise ValueError(_("等保认证须填写级别 1-5"))
        return value


class Certification(CertificationBase, table=True):
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    provider: Optional[Provider] = Relationship(back_populates="certifications")


# ---------------------------------------------------------------- datacenter
class DatacenterBase(_Clean):
    name: SingleLine = Field(min_length=1, max_length=120)
    province: SingleLine = Field(max_length=16, index=True)
    city: Optional[SingleLine] = Field(default=None, max_length=40)

    @field_validator("province", mode="before")
    @classmethod
    def _province(cls, value: Any) -> Any:
        return resolve_province_name(value)


class Datacenter(DatacenterBase, table=True):
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    provider: Optional[Provider] = Relationship(back_populates="datacenters")
    # No save-update cascade here: offers are saved through Provider.offers, so they keep their input order.
    offers: list["Offer"] = Relationship(
        back_populates="datacenter", sa_relationship_kwargs={"cascade": "merge"}
    )


# ---------------------------------------------------------------- offer
class OfferBase(_Clean):
    name: Optional[SingleLine] = Field(default=None, max_length=120)
    offer_kind: OfferKind = Field(default=OfferKind.bare_metal, **_str_enum())
    gpu_model: SingleLine = Field(min_length=1, max_length=60, index=True)
    gpus_per_node: int = Field(ge=1, le=64)
    gpu_memory_gb: Optional[int] = Field(default=None, ge=1, le=2048)
    vcpu: Optional[int] = Field(default=None, ge=1, le=4096)
    ram_gb: Optional[int] = Field(default=None, ge=1, le=65536)
    intranet_gbps: Optional[float] = Field(default=None, ge=0, le=100000)
    rdma_type: RdmaType = Field(default=RdmaType.none, **_str_enum(16))
    rdma_gbps: Optional[float] = Field(default=None, ge=0, le=100000)
    public_mbps: Optional[float] = Field(default=None, ge=0, le=1000000)
    bandwidth_type: BandwidthType = Field(default=BandwidthType.unknown, index=True, **_str_enum(16))
    storage_type: StorageType = Field(default=StorageType.unknown, index=True, **_str_enum(16))
    storage_capacity_gb: Optional[int] = Field(default=None, ge=0, le=10_000_000)
    nominal_iops: Optional[int] = Field(default=None, ge=0, le=100_000_000)
    price_gpu_hour_cny: Optional[float] = Field(default=None, ge=0, le=100000)
    price_month_cny: Optional[float] = Field(default=None, ge=0, le=100_000_000)
    notes: Optional[MultiLine] = Field(default=None, max_length=2000, sa_type=sa.Text)

    @field_validator("gpu_model", mode="before")
    @classmethod
    def _gpu(cls, value: Any) -> Any:
        if isinstance(value, str):
            return " ".join(unicodedata.normalize("NFKC", single_line(value)).split())
        return value

    @field_validator("rdma_gbps")
    @classmethod
    def _rdma(cls, value: Optional[float], info: ValidationInfo) -> Optional[float]:
        if info.data.get("rdma_type") == RdmaType.none and value:
            raise ValueError(_("未选择 RDMA 类型却填写了 RDMA 带宽：请选择 RoCE 或 InfiniBand"))
        return value


class Offer(OfferBase, table=True):
    __audited__ = True

    id: Optional[int] = Field(default=None, primary_key=True)
    provider_id: int = Field(foreign_key="provider.id", index=True, ondelete="CASCADE")
    datacenter_id: Optional[int] = Field(
        default=None, foreign_key="datacenter.id", index=True, ondelete="SET NULL"
    )
    provider: Optional[Provider] = Relationship(back_populates="offers")
    datacenter: Optional[Datacenter] = Relationship(back_populates="offers")
