"""The provider disclosure questionnaire: sections and fields, named as in the registry, with their checks.

`Disclosure.dump()` is what `Invitation.answers` holds once a provider submits. Field names
match the registry's (app/models/provider.py) wherever the registry has the field, so a reviewer can compare
and merge field by field; fields the registry lacks (datacenter address, tier, power; topology, storage and
trial answers; upload ids) are declared values only. Rows inherit the registry's base models, so each value is
validated exactly as the registry validates it; identifiers (USCC, licence and filing numbers) are parsed
as well and stored normalised (full-width characters and province names folded to the canonical form).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal, Optional

from flask_babel import gettext as _
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.core import vocabulary
from app.core.i18n import LANGUAGES, current_language
from app.disclosure.identifier_fields import parse_identifier, parse_uscc_text
from app.models.enums import FilingKind, StorageType
from app.models.fields import (
    MultiLine,
    SingleLine,
    blank_values,
    checked_email,
    resolve_province_name,
    website_url,
)
from app.models.provider import CertificationBase, DatacenterBase, FilingBase, LicenceBase, OfferBase
from app.vetting.identifiers import identify

AnswerState = Literal["answered", "declined", "unanswered"]


ROW_LIMIT = 30  # most rows of one repeated section a provider may submit


_STRICT = ConfigDict(extra="forbid")


_RATIO = re.compile(r"^(?P<left>[0-9]+(?:\.[0-9]+)?)(?:\s*[:：/比]\s*(?P<right>[0-9]+(?:\.[0-9]+)?))?$")


class _Section(BaseModel):
    """Base of every section: unknown keys refused, blanks cleaned (control characters judged per field)."""

    model_config = _STRICT

    _blanks = model_validator(mode="before")(blank_values)


class Identity(_Section):
    """Legal identity and contact: registry provider fields."""

    legal_name: SingleLine = Field(min_length=2, max_length=200)
    legal_name_en: Optional[SingleLine] = Field(default=None, max_length=200)
    short_name: Optional[SingleLine] = Field(default=None, max_length=60)
    uscc: SingleLine = Field(max_length=32)
    registered_province: Optional[SingleLine] = Field(default=None, max_length=16)
    registered_address: Optional[SingleLine] = Field(default=None, max_length=300)
    website: Optional[SingleLine] = Field(default=None, max_length=300)
    contact_name: Optional[SingleLine] = Field(default=None, max_length=60)
    contact_phone: Optional[SingleLine] = Field(default=None, max_length=40)
    contact_email: Optional[SingleLine] = Field(default=None, max_length=200)

    @field_validator("uscc", mode="before")
    @classmethod
    def _uscc(cls, value: Any) -> Any:
        return parse_uscc_text(value) if isinstance(value, str) else value

    _province = field_validator("registered_province", mode="before")(resolve_province_name)
    _website = field_validator("website", mode="before")(website_url)
    _email = field_validator("contact_email")(checked_email)


class LicenceRow(LicenceBase):
    """One value-added telecom licence (registry `licences`), with its scan."""

    model_config = _STRICT

    scan_upload_id: Optional[int] = Field(default=None, ge=1)

    @field_validator("number_raw", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        return parse_identifier(value, ("licence",)) if isinstance(value, str) and value else value


class FilingRow(FilingBase):
    """An ICP filing, ICP licence or public-security filing; kind read from its number."""

    model_config = _STRICT

    @field_validator("number_raw", mode="before")
    @classmethod
    def _number(cls, value: Any) -> Any:
        kinds = tuple(kind.value for kind in FilingKind)
        return parse_identifier(value, kinds) if isinstance(value, str) and value else value

    @model_validator(mode="after")
    def _kind(self) -> FilingRow:
        found = identify(self.number_raw).kind
        if self.kind is None:
            self.kind = FilingKind(found)
        elif self.kind.value != found:
            raise ValueError(_("所选类型与编号不符：编号是 %(found)s", found=found))
        return self


class CertificationRow(CertificationBase):
    """One certification (registry `certifications`): ISO 27001, 等保 with its level, ..., with its scan."""

    model_config = _STRICT

    scan_upload_id: Optional[int] = Field(default=None, ge=1)


class DatacenterRow(DatacenterBase):
    """One datacenter (registry `datacenters`), plus declared address, tier and power."""

    model_config = _STRICT

    address: Optional[SingleLine] = Field(default=None, max_length=300)
    tier: Optional[Literal["tier1", "tier2", "tier3", "tier4", "gb_a", "gb_b", "gb_c"]] = None
    power_kw: Optional[float] = Field(default=None, ge=0, le=10_000_000)
    power_redundancy: Optional[Literal["n", "n+1", "2n", "2n+1"]] = None


class OfferRow(OfferBase):
    """One offer (registry `offers`); `datacenter_name` names one of the declared datacenters."""

    model_config = _STRICT

    datacenter_name: Optional[SingleLine] = Field(default=None, max_length=120)


class Topology(_Section):
    """Network topology: diagram and three questions, or an explicit refusal."""

    declined: bool = False
    diagram_upload_id: Optional[int] = Field(default=None, ge=1)
    oversubscription_ratio: Optional[SingleLine] = Field(default=None, max_length=20)
    uplink_gbps: Optional[float] = Field(default=None, ge=0, le=1_000_000)
    shared_with: Optional[MultiLine] = Field(default=None, max_length=1000)
    notes: Optional[MultiLine] = Field(default=None, max_length=2000)

    @field_validator("oversubscription_ratio", mode="before")
    @classmethod
    def _ratio(cls, value: Any) -> Any:
        if not isinstance(value, str) or not value:
            return value
        match = _RATIO.match(unicodedata.normalize("NFKC", value).strip())
        if match is None:
            raise ValueError(_("收敛比须形如 1:1 或 3:1"))
        return f"{match.group('left')}:{match.group('right') or '1'}"

    def state(self) -> AnswerState:
        """Answered when any question has an answer; declined when refused."""
        if self.declined:
            return "declined"
        answers = (self.diagram_upload_id, self.oversubscription_ratio, self.uplink_gbps, self.shared_with)
        return "answered" if any(value is not None for value in answers) else "unanswered"


class Storage(_Section):
    """Storage configuration: local NVMe or network storage, RAID and backup, or an explicit refusal."""

    declined: bool = False
    location: Optional[Literal["local_nvme", "network", "both"]] = None
    network_type: Optional[StorageType] = None
    raid: Optional[Literal["none", "raid0", "raid1", "raid5", "raid6", "raid10", "other"]] = None
    backup: Optional[MultiLine] = Field(default=None, max_length=1000)
    notes: Optional[MultiLine] = Field(default=None, max_length=2000)

    def state(self) -> AnswerState:
        """Answered when the storage location is given; declined when refused."""
        if self.declined:
            return "declined"
        return "answered" if self.location is not None else "unanswered"


class Trial(_Section):
    """Trial access: whether a trial server will be lent, and how (length, cost, conditions)."""

    will_lend: Optional[bool] = None
    how: Optional[MultiLine] = Field(default=None, max_length=1000)

    def state(self) -> AnswerState:
        """Answered yes; declined when the provider says no; unanswered otherwise."""
        if self.will_lend is None:
            return "unanswered"
        return "answered" if self.will_lend else "declined"


class Disclosure(BaseModel):
    """The whole questionnaire as submitted; `Invitation.answers` is `dump()` of this."""

    model_config = _STRICT

    identity: Identity
    licences: list[LicenceRow] = Field(default_factory=list, max_length=ROW_LIMIT)
    filings: list[FilingRow] = Field(default_factory=list, max_length=ROW_LIMIT)
    certifications: list[CertificationRow] = Field(default_factory=list, max_length=ROW_LIMIT)
    datacenters: list[DatacenterRow] = Field(default_factory=list, max_length=ROW_LIMIT)
    offers: list[OfferRow] = Field(default_factory=list, max_length=ROW_LIMIT)
    topology: Topology = Field(default_factory=Topology)
    storage: Storage = Field(default_factory=Storage)
    trial: Trial = Field(default_factory=Trial)

    @model_validator(mode="after")
    def _references(self) -> Disclosure:
        names = [datacenter.name for datacenter in self.datacenters]
        if len(set(names)) != len(names):
            raise ValueError(_("同一供应商的机房名称不能重复"))
        for offer in self.offers:
            if offer.datacenter_name and offer.datacenter_name not in names:
                raise ValueError(_("本供应商没有名为“%(name)s”的机房", name=offer.datacenter_name))
        return self

    def dump(self) -> dict[str, Any]:
        """The answers as stored in `Invitation.answers`: JSON values of the questionnaire's own fields only
        (registry defaults the provider was never asked about, such as a licence's status, are left out)."""
        data = self.model_dump(mode="json")
        for section in SECTIONS:
            asked = {spec.name for spec in section.fields}
            content = data[section.name]
            rows = content if section.repeated else [content]
            for row in rows:
                for name in set(row) - asked:
                    del row[name]
        return data

    def answer_states(self) -> dict[str, AnswerState]:
        """Red flag 13's questions: topology, storage and trial, each answered, declined or unanswered."""
        return {
            "topology": self.topology.state(),
            "storage": self.storage.state(),
            "trial": self.trial.state(),
        }

    def upload_ids(self) -> set[int]:
        """Ids of every DisclosureUpload the answers refer to."""
        ids = {row.scan_upload_id for row in [*self.licences, *self.certifications] if row.scan_upload_id}
        if self.topology.diagram_upload_id:
            ids.add(self.topology.diagram_upload_id)
        return ids


Widget = Literal["text", "textarea", "number", "date", "select", "yesno", "checkbox", "upload", "list"]


@dataclass(frozen=True)
class FieldSpec:
    """One field of the form: registry name, Chinese label (the msgid), English label, input kind, choices."""

    name: str
    zh: str
    en: str
    widget: Widget = "text"
    choices: tuple[tuple[str, str, str], ...] = ()  # (value, zh, en)
    hint: str = ""  # Chinese hint (a msgid), e.g. an example value
    required: bool = False

    def label(self) -> str:
        """The label in the current language."""
        return _(self.zh)

    def choice_labels(self) -> list[tuple[str, str]]:
        """(value, label in the current language) of each choice (app.core.vocabulary's wording)."""
        index = LANGUAGES.index(current_language())
        return [(value, (zh, en)[index]) for value, zh, en in self.choices]

    def choice_label(self, value: Any) -> Any:
        """The label of a chosen value in the current language; a value not among the choices as it is."""
        return dict(self.choice_labels()).get(getattr(value, "value", value), value)


@dataclass(frozen=True)
class SectionSpec:
    """One section of the form; `repeated` sections have rows (a list in the answers)."""

    name: str
    zh: str
    en: str
    fields: tuple[FieldSpec, ...]
    repeated: bool = False
    intro: str = ""  # Chinese explanation shown under the title (a msgid)

    def title(self) -> str:
        """The title in the current language."""
        return _(self.zh)

    def field(self, name: str) -> FieldSpec:
        """The field called `name`."""
        return next(spec for spec in self.fields if spec.name == name)


def _choices(kind: str, *values: str) -> tuple[tuple[str, str, str], ...]:
    """(value, zh, en) of a vocabulary kind's values (all, or these, in order); "unknown" reads "not sure"."""
    return tuple(
        (value, *vocabulary.LABELS["not_sure" if value == "unknown" else kind][value])
        for value in values or vocabulary.order(kind)
    )


_CERT_KINDS = _choices("certification_kind", "iso27001", "dengbao", "iso9001", "other")
_FILING_KINDS = _choices("filing_kind")
_TIERS = _choices("datacenter_tier")
_REDUNDANCY = _choices("power_redundancy")
_OFFER_KINDS = _choices("offer_kind")
_RDMA = _choices("rdma_type")
_BANDWIDTH = _choices("bandwidth_type")
_STORAGE_TYPES = _choices("storage_type")
# What "网络存储类型" offers: network storage only (local disks are answered by "数据盘位置").
NETWORK_STORAGE_TYPES = ("cloud_disk", "nfs", "parallel_fs", "unknown")
_NETWORKED = _choices("storage_type", *NETWORK_STORAGE_TYPES)
_LOCATIONS = _choices("storage_location")
_RAID = _choices("raid")


def _declinable(
    name: str, zh: str, en: str, fields: tuple[FieldSpec, ...], *, declined: tuple[str, str]
) -> SectionSpec:
    """A section the provider may decline (red flag 13): its fields, then notes and the decline box."""
    notes = FieldSpec("notes", "补充说明", "Notes", "textarea")
    box = FieldSpec("declined", *declined, "checkbox")
    return SectionSpec(
        name, zh, en, (*fields, notes, box), intro="拒绝或不回答将被记为红旗 13（不披露网络拓扑或存储配置）。"
    )


SECTIONS: tuple[SectionSpec, ...] = (
    SectionSpec(
        "identity",
        "企业身份",
        "Legal identity",
        (
            FieldSpec(
                "legal_name",
                "企业名称（与营业执照一致）",
                "Legal name (as on the business licence)",
                required=True,
            ),
            FieldSpec("legal_name_en", "英文名称", "English name"),
            FieldSpec("short_name", "简称", "Short name"),
            FieldSpec(
                "uscc",
                "统一社会信用代码",
                "Unified social credit code",
                hint="如 91110000802100433B",
                required=True,
            ),
            FieldSpec("registered_province", "注册地省份", "Registered province", hint="如 广东、粤 或 44"),
            FieldSpec("registered_address", "注册地址", "Registered address"),
            FieldSpec("website", "官网", "Website"),
            FieldSpec("contact_name", "联系人", "Contact person"),
            FieldSpec("contact_phone", "联系电话", "Contact phone"),
            FieldSpec("contact_email", "联系邮箱", "Contact e-mail"),
        ),
    ),
    SectionSpec(
        "licences",
        "增值电信业务经营许可证",
        "Value-added telecom licences",
        (
            FieldSpec("number_raw", "许可证编号", "Licence number", hint="如 京B2-20202418", required=True),
            FieldSpec(
                "business_items",
                "业务种类",
                "Business items",
                "list",
                hint="如 B11、B12",
            ),
            FieldSpec("coverage", "业务覆盖范围", "Coverage", "list", hint="如 全国、北京、上海"),
            FieldSpec("expires_on", "有效期至", "Valid until", "date"),
            FieldSpec("scan_upload_id", "许可证扫描件", "Licence scan", "upload"),
        ),
        repeated=True,
    ),
    SectionSpec(
        "filings",
        "ICP 备案与公网安备",
        "ICP and public-security filings",
        (
            FieldSpec("number_raw", "备案号", "Filing number", hint="如 京ICP备10046444号-9", required=True),
            FieldSpec(
                "kind",
                "类型（可不选，按编号识别）",
                "Kind (optional, read from the number)",
                "select",
                _FILING_KINDS,
            ),
            FieldSpec("domain", "网站域名", "Website domain"),
        ),
        repeated=True,
    ),
    SectionSpec(
        "certifications",
        "资质认证",
        "Certifications",
        (
            FieldSpec("kind", "认证类型", "Kind", "select", _CERT_KINDS, required=True),
            FieldSpec("name", "名称（“其他”时必填）", "Name (required for “Other”)"),
            FieldSpec("level", "等保级别（1-5）", "MLPS level (1-5)", "number"),
            FieldSpec("number", "证书编号", "Certificate number"),
            FieldSpec("expires_on", "有效期至", "Valid until", "date"),
            FieldSpec("scan_upload_id", "证书扫描件", "Certificate scan", "upload"),
        ),
        repeated=True,
    ),
    SectionSpec(
        "datacenters",
        "机房",
        "Datacenters",
        (
            FieldSpec("name", "机房名称", "Datacenter name", required=True),
            FieldSpec("province", "省份", "Province", hint="如 广东、粤 或 44", required=True),
            FieldSpec("city", "城市", "City"),
            FieldSpec("address", "地址", "Address"),
            FieldSpec("tier", "等级", "Tier", "select", _TIERS),
            FieldSpec("power_kw", "电力容量（kW）", "Power capacity (kW)", "number"),
            FieldSpec("power_redundancy", "供电冗余", "Power redundancy", "select", _REDUNDANCY),
        ),
        repeated=True,
    ),
    SectionSpec(
        "offers",
        "产品与价格",
        "Offers and prices",
        (
            FieldSpec("gpu_model", "GPU 型号", "GPU model", hint="如 H800、A800、RTX 4090", required=True),
            FieldSpec("gpus_per_node", "每台 GPU 数", "GPUs per server", "number", required=True),
            FieldSpec("offer_kind", "形式", "Kind", "select", _OFFER_KINDS),
            FieldSpec("datacenter_name", "所在机房（填上面的机房名称）", "Datacenter (a name from above)"),
            FieldSpec("intranet_gbps", "内网带宽（Gbps）", "Intranet bandwidth (Gbps)", "number"),
            FieldSpec("rdma_type", "RDMA", "RDMA", "select", _RDMA),
            FieldSpec("rdma_gbps", "RDMA 带宽（Gbps）", "RDMA bandwidth (Gbps)", "number"),
            FieldSpec("public_mbps", "公网带宽（Mbps）", "Public bandwidth (Mbps)", "number"),
            FieldSpec(
                "bandwidth_type",
                "公网带宽独享/共享",
                "Public bandwidth dedicated/shared",
                "select",
                _BANDWIDTH,
            ),
            FieldSpec("storage_type", "存储类型", "Storage type", "select", _STORAGE_TYPES),
            FieldSpec("storage_capacity_gb", "存储容量（GB）", "Storage capacity (GB)", "number"),
            FieldSpec("nominal_iops", "标称 IOPS", "Nominal IOPS", "number"),
            FieldSpec("price_gpu_hour_cny", "价格（元/卡/小时）", "Price (CNY per GPU-hour)", "number"),
            FieldSpec("price_month_cny", "价格（元/台/月）", "Price (CNY per server-month)", "number"),
        ),
        repeated=True,
    ),
    _declinable(
        "topology",
        "网络拓扑",
        "Network topology",
        (
            FieldSpec("diagram_upload_id", "网络拓扑图", "Topology diagram", "upload"),
            FieldSpec("oversubscription_ratio", "收敛比", "Oversubscription ratio", hint="如 1:1 或 3:1"),
            FieldSpec("uplink_gbps", "上联带宽（Gbps）", "Uplink capacity (Gbps)", "number"),
            FieldSpec("shared_with", "哪些客户/业务共享这些链路", "Who else shares these links", "textarea"),
        ),
        declined=("不愿披露网络拓扑", "I decline to disclose the network topology"),
    ),
    _declinable(
        "storage",
        "存储配置",
        "Storage configuration",
        (
            FieldSpec("location", "数据盘位置", "Where the data disks are", "select", _LOCATIONS),
            FieldSpec("network_type", "网络存储类型", "Network storage type", "select", _NETWORKED),
            FieldSpec("raid", "RAID", "RAID", "select", _RAID),
            FieldSpec("backup", "备份方式", "Backup", "textarea"),
        ),
        declined=("不愿披露存储配置", "I decline to disclose the storage configuration"),
    ),
    SectionSpec(
        "trial",
        "试用",
        "Trial access",
        (
            FieldSpec("will_lend", "是否提供试用服务器", "Will you lend a trial server", "yesno"),
            FieldSpec("how", "试用方式（时长、费用、条件）", "How (length, cost, conditions)", "textarea"),
        ),
    ),
)


SECTION_BY_NAME = {section.name: section for section in SECTIONS}


REPEATED = tuple(section.name for section in SECTIONS if section.repeated)


MODELS: dict[str, type[BaseModel]] = {
    "identity": Identity,
    "licences": LicenceRow,
    "filings": FilingRow,
    "certifications": CertificationRow,
    "datacenters": DatacenterRow,
    "offers": OfferRow,
    "topology": Topology,
    "storage": Storage,
    "trial": Trial,
}


def label(path: str) -> str:
    """The label of "section.field" (or "section[0].field") in the current language."""
    section_name, _dot, field_name = re.sub(r"\[\d+\]", "", path).partition(".")
    section = SECTION_BY_NAME[section_name]
    return section.field(field_name).label() if field_name else section.title()


def catalog_pairs() -> dict[str, str]:
    """Every Chinese label, hint and choice with its English text (fed to scripts/catalog_add.py)."""
    pairs: dict[str, str] = {}
    for section in SECTIONS:
        pairs[section.zh] = section.en
        for spec in section.fields:
            pairs[spec.zh] = spec.en
            pairs.update({zh: en for _value, zh, en in spec.choices})
    return pairs
