"""API-only models: the error shape, audit entries and query parameters (used for the OpenAPI document)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from app.models.enums import BandwidthType, ProviderStatus, StorageType
from app.services.providers import MAX_PAGE, SORTS, ProviderQuery

_DEFAULTS = {name: info.default for name, info in ProviderQuery.model_fields.items()}


class ErrorItem(BaseModel):
    """One problem: the field it concerns ("" for the request as a whole) and what is accepted."""

    field: str = Field(description='出错的字段，如 "offers[0].gpus_per_node"；"" 表示整个请求')
    message: str = Field(description="中文说明（English in brackets）")


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


class ProviderListParams(BaseModel):
    """Query parameters of GET /providers (validated by services.providers.parse_query)."""

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
