"""/api/v1/providers: list, create, read, change, delete providers and read their audit trail."""

from __future__ import annotations

from typing import Any

from flask import Response, g, jsonify, request, url_for
from flask_babel import gettext as _

from app.accounts.auth import has_role
from app.api import bp
from app.api.body import if_match_version as _if_match
from app.api.body import json_object
from app.api.errors import ApiError
from app.api.routing import MAX_ID, api_route, reply
from app.api.schemas import (
    AuditEntryList,
    AuditEntryPublic,
    DeleteParams,
    ProviderListParams,
    ProviderWithVerdict,
    ProviderWithVerdictPage,
    VerdictPublic,
)
from app.core.clock import aware
from app.core.db import get_session
from app.core.errors import FieldError
from app.credentials.verdicts import ProviderVerdict, verdict_of, verdicts_of
from app.models import Provider
from app.models.enums import Role
from app.models.io import ProviderCreate, ProviderPatch, ProviderPublic
from app.registry import provider_list
from app.registry import providers as svc

ONE = f"/providers/<int(max={MAX_ID}):provider_id>"


def provider_json(provider: Provider) -> dict[str, Any]:
    """A stored provider as ProviderPublic JSON."""
    public = ProviderPublic.model_validate(provider)
    public.created_at = aware(public.created_at)
    public.updated_at = aware(public.updated_at)
    return public.model_dump(mode="json")


def verdict_json(verdict: ProviderVerdict) -> dict[str, Any]:
    """A provider verdict as VerdictPublic JSON."""
    return VerdictPublic.model_validate(verdict.to_dict()).model_dump(mode="json")


def _provider_response(
    provider: Provider, status: int = 200, *, with_verdict: bool = False, location: str | None = None
) -> Response:
    body = provider_json(provider)
    if with_verdict:
        body["verdict"] = verdict_json(verdict_of(get_session(), provider.id))
    return reply(body, status, version=provider.version, location=location)


def _version_mismatch() -> ApiError:
    return ApiError(
        422,
        [FieldError("If-Match", _("If-Match 与 version 给出的版本号不一致"))],
    )


@api_route(
    bp,
    "/providers",
    "GET",
    summary="供应商列表：搜索、筛选、排序、分页 (list providers)",
    role=Role.viewer,
    response_model=ProviderWithVerdictPage,
    query_model=ProviderListParams,
)
def list_providers() -> Response:
    """Same filters as the provider list page; every provider comes with its nested records and verdict."""
    query = provider_list.parse_query(request.args.to_dict())
    session = get_session()
    page = provider_list.list_providers(session, query=query)
    verdicts = verdicts_of(session, [provider.id for provider in page.items])
    return jsonify(
        {
            "items": [
                {**provider_json(provider), "verdict": verdict_json(verdicts[provider.id])}
                for provider in page.items
            ],
            "total": page.total,
            "page": page.page,
            "per_page": page.per_page,
            "pages": page.pages,
        }
    )


@api_route(
    bp,
    "/providers",
    "POST",
    summary="登记供应商及其许可证、备案、认证、机房、报价 (create a provider)",
    role=Role.analyst,
    request_model=ProviderCreate,
    response_model=ProviderPublic,
    status=201,
    response_headers=("Location", "ETag"),
    errors=(409,),
)
def create_provider() -> Response:
    """Nested records are created with the provider; an offer may name a new datacenter by datacenter_name."""
    provider = svc.create_provider(get_session(), data=json_object())
    return _provider_response(provider, 201, location=url_for("api.get_provider", provider_id=provider.id))


@api_route(
    bp,
    ONE,
    "GET",
    summary="供应商详情 (read a provider)",
    role=Role.viewer,
    response_model=ProviderWithVerdict,
    response_headers=("ETag",),
    errors=(404,),
)
def get_provider(provider_id: int) -> Response:
    """The provider with its nested records and verdict; ETag carries the version to send when changing it."""
    provider = svc.get_provider(get_session(), provider_id=provider_id)
    return _provider_response(provider, with_verdict=True)


def _given_id(item: Any) -> int | None:
    value = item.get("id") if isinstance(item, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _require_admin_to_remove(provider_id: int, patch: dict[str, Any]) -> None:
    """Deleting nested records is for admins (README "Roles"): a list leaving one out needs that role."""
    if has_role(g.api_user, Role.admin):
        return
    provider = svc.get_provider(get_session(), provider_id=provider_id)
    errors = []
    for collection in svc.CHILD_ORDER:
        items = patch.get(collection)
        if not isinstance(items, list):
            continue
        kept = {_given_id(item) for item in items}
        dropped = sorted(record.id for record in getattr(provider, collection) if record.id not in kept)
        if dropped:
            errors.append(
                FieldError(
                    collection,
                    _(
                        "此列表会删除已有记录 %(ids)s，删除需要 admin 角色；请在列表中保留它们（带 id）",
                        ids=", ".join(str(record_id) for record_id in dropped),
                    ),
                )
            )
    if errors:
        raise ApiError(403, errors)


@api_route(
    bp,
    ONE,
    "PATCH",
    summary="修改供应商 (change a provider)",
    role=Role.analyst,
    request_model=ProviderPatch,
    response_model=ProviderPublic,
    headers=("If-Match",),
    response_headers=("ETag",),
    errors=(404, 409),
)
def update_provider(provider_id: int) -> Response:
    """Give only the fields to change plus "version" (or If-Match).

    A nested list replaces that collection, and an item with an existing "id" changes only the fields it
    gives; leaving out an existing record deletes it, which needs the admin role (403 otherwise). A stale
    version is refused with 409.
    """
    patch = json_object()
    _require_admin_to_remove(provider_id, patch)
    header = _if_match()
    if patch.get("version") is None:
        if header is None:
            raise ApiError(
                422,
                [
                    FieldError(
                        "version",
                        _('缺少版本号：请在请求体中给出 version，或发送 If-Match: "<版本号>"'),
                    )
                ],
            )
        patch["version"] = int(header)
    elif header is not None and str(patch["version"]).strip() != header:
        raise _version_mismatch()
    provider = svc.update_provider(get_session(), provider_id=provider_id, patch=patch)
    return _provider_response(provider)


@api_route(
    bp,
    ONE,
    "DELETE",
    summary="删除供应商及其全部记录 (delete a provider)",
    role=Role.admin,
    query_model=DeleteParams,
    headers=("If-Match",),
    status=204,
    errors=(404, 409),
)
def delete_provider(provider_id: int) -> Response:
    """When ?version= or If-Match is given it must equal the stored version; every deletion is audited."""
    header = _if_match()
    version = request.args.get("version")
    if version is not None and header is not None and version.strip() != header:
        raise _version_mismatch()
    expected = version if version is not None else header
    svc.delete_provider(get_session(), provider_id=provider_id, expected_version=expected)
    return Response(status=204)


@api_route(
    bp,
    ONE + "/history",
    "GET",
    summary="供应商的修改记录 (audit trail of a provider)",
    role=Role.viewer,
    response_model=AuditEntryList,
    errors=(404,),
)
def provider_history(provider_id: int) -> Response:
    """Who created, changed or deleted the provider or its nested records, newest first (at most 200);
    the trail of a deleted provider stays readable."""
    session = get_session()
    entries = svc.history(session, provider_id=provider_id)
    if not entries:
        svc.get_provider(session, provider_id=provider_id)
    items = []
    for entry in entries:
        public = AuditEntryPublic.model_validate(entry, from_attributes=True)
        public.at = aware(public.at)
        items.append(public.model_dump(mode="json"))
    return jsonify({"items": items})
