"""API-only models: the error shape, audit entries and query parameters (used for the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from app.credentials.verdicts import LEVELS, SOURCES
from app.models.enums import BandwidthType, ProviderStatus, StorageType
from app.models.io import ProviderPublic
from app.registry.list_query import MAX_PAGE
from app.registry.provider_list import SORTS, ProviderQuery

_DEFAULTS = {name: info.default for name, info in ProviderQuery.model_fields.items()}


class ErrorItem(BaseModel):
    """One problem: the field it concerns ("" for the request as a whole) and what is accepted."""

    field: str = Field(description='出错的字段，如 "offers[0].gpus_per_node"；"" 表示整个请求')
    message: str = Field(description="说明，只用一种语言：会话所选，否则按 Accept-Language (one language)")
    accepted: list[str] | None = Field(
        default=None,
        description="取值不在可选范围内时可接受的取值，按请求的写法 (a choice's accepted values, as sent)",
    )


class ErrorResponse(BaseModel):
    """The one error shape of every 4xx answer under /api/v1."""

    errors: list[ErrorItem] = Field(min_length=1)


class AuditEntryPublic(BaseModel):
    """One audit record: who changed which record how (changes: field -> [before, after])."""

    id: int
    at: datetime
    actor_id: Optional[int]
    actor_name: str
    action: str = Field(description="create | update | delete")
    entity: str
    entity_id: Optional[int]
    provider_id: Optional[int]
    changes: dict[str, Any]


class AuditEntryList(BaseModel):
    """Audit entries of one provider and its nested records, newest first."""

    items: list[AuditEntryPublic]


class ItemVerificationPublic(BaseModel):
    """One item's verification (app.credentials.verification): a licence, filing, certification, the footer,
    the credit record or an offer's claimed figure."""

    subject: str = Field(
        description="licence:3, filing:5, certification:2, footer, credit, offer:7:intranet_gbps"
    )
    kind: str = Field(
        description="licence, icp_filing, icp_licence, psb_filing, certification, footer, credit, offer"
    )
    name: str
    status: Literal["unverified", "verified", "verified_by_hand", "contradicted", "expired"]
    status_zh: str
    status_en: str
    reason_zh: str
    reason_en: str
    at: datetime | None = Field(default=None, description="when the evidence was taken (RFC 3339)")
    by: str
    lookup_id: int | None = None
    evidence_id: int | None = None
    run_id: int | None = None
    finding_rule: str | None = None


class VerdictPublic(BaseModel):
    """The provider verdict shown on every page and report cover, worded with what was not verified."""

    level: Literal[tuple(LEVELS)] = Field(  # type: ignore[valid-type]
        description="pass | needs_review | fail | unchecked（从未核查 never checked）"
    )
    label_zh: str = Field(
        description="中文结论，逐项列出未核实的项目，"
        "如 通过（未核实：许可证 京B2-20202418 未经官方查询；网站页脚 未核查）"
    )
    label_en: str = Field(
        description="in English, e.g. passes; not verified: licence 京B2-20202418 not looked up; "
        "website footer not checked"
    )
    unverified: list[Literal[tuple(SOURCES)]] = Field(  # type: ignore[valid-type]
        description="有未核实项目的证据来源：lookup 官方查询（许可证、备案、认证、企业信用）、"
        "footer 网站页脚、trial 试用测试或上传输出 (sources with an item not verified yet)"
    )
    unverified_items: list[ItemVerificationPublic] = Field(
        default_factory=list,
        description="每个尚未核实（或核实已过期）的项目 (each item not verified, or verified too long ago)",
    )


class ProviderWithVerdict(ProviderPublic):
    """A provider with every nested record and its verdict (GET /providers, GET /providers/{provider_id})."""

    verdict: VerdictPublic


class ProviderWithVerdictPage(BaseModel):
    """One page of providers, each with its verdict."""

    items: list[ProviderWithVerdict]
    total: int
    page: int
    per_page: int
    pages: int


# Marks a query model whose parameters, sent empty (?verdict=), mean the same as left out: the document
# marks each of its parameters allowEmptyValue.
BLANK_IS_UNSET = "x-blank-is-unset"


class ProviderListParams(BaseModel):
    """Query parameters of GET /providers (validated by services.providers.parse_query; blank = not given)."""

    model_config = ConfigDict(json_schema_extra={BLANK_IS_UNSET: True})

    q: Optional[str] = Field(
        default=None,
        description="名称、简称、英文名、统一社会信用代码、许可证号或备案号中的文字 (search text)",
    )
    province: Optional[str] = Field(
        default=None,
        description="注册地或机房所在省份：名称、简称或两位代码，如 广东 / 粤 / 44 "
        "(province name, abbreviation or code)",
    )
    gpu_model: Optional[str] = Field(
        default=None, description="任一报价的 GPU 型号包含此文字，如 H800 (GPU model)"
    )
    bandwidth_type: Optional[BandwidthType] = None
    storage_type: Optional[StorageType] = None
    status: Optional[ProviderStatus] = None
    verdict: Optional[Literal["pass", "needs_review", "fail", "unchecked"]] = Field(
        default=None, description="最近一次核查的结论；unchecked 为从未核查 (latest check run's verdict)"
    )
    checked: Optional[Literal["never", "stale"]] = Field(
        default=None,
        description="never：从未核查；stale：最近一次核查早于 stale_days 天 (never / checked long ago)",
    )
    stale_days: Optional[int] = Field(
        default=None, ge=1, le=3650, description="checked=stale 的天数，默认 30 (days; default 30)"
    )
    sort: Literal[tuple(SORTS)] = Field(  # type: ignore[valid-type]
        default=_DEFAULTS["sort"], description="排序；前缀 - 表示倒序 (sort key; - means descending)"
    )
    page: int = Field(
        default=_DEFAULTS["page"], ge=1, le=MAX_PAGE, description="页码，从 1 开始 (page number)"
    )
    per_page: int = Field(default=_DEFAULTS["per_page"], ge=1, le=100, description="每页条数 (page size)")


class DeleteParams(BaseModel):
    """Query parameters of DELETE /providers/{provider_id}."""

    version: Optional[int] = Field(
        default=None,
        ge=1,
        description="给出时须等于当前版本，否则 409；也可用 If-Match 头 "
        "(checked against the stored version when given)",
    )
