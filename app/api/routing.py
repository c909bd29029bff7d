"""The API's route table: one decorator registers a view and records it for the OpenAPI document."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Blueprint, Response, jsonify, request
from flask_babel import gettext as _
from pydantic import BaseModel

from app.api.auth import authenticate
from app.api.errors import ApiError
from app.core.errors import FieldError
from app.core.limits import MAX_ID as MAX_ID  # re-exported for the route modules
from app.models.enums import Role

_PARAM = re.compile(r"<(?:(?P<converter>\w+)(?:\((?P<args>[^)]*)\))?:)?(?P<name>\w+)>")


@dataclass(frozen=True)
class Operation:
    """One documented API operation: where it lives, who may call it, what goes in and out."""

    path: str
    method: str
    endpoint: str
    summary: str
    description: str = ""
    role: Role | None = None
    request_model: type[BaseModel] | None = None
    form_model: type[BaseModel] | None = None  # a multipart/form-data body (files as format: binary)
    response_model: type[BaseModel] | None = None
    media_type: str = "application/json"  # the success body's type; any other is a file (a signed PDF)
    status: int = 200
    query_model: type[BaseModel] | None = None
    headers: tuple[str, ...] = ()
    response_headers: tuple[str, ...] = ()
    errors: tuple[int, ...] = ()
    tags: tuple[str, ...] = ("providers",)

    @property
    def openapi_path(self) -> str:
        """The Flask rule written as an OpenAPI path template (/providers/{provider_id})."""
        return _PARAM.sub(lambda match: "{" + match["name"] + "}", self.path)

    def path_params(self) -> list[tuple[str, dict[str, Any]]]:
        """Name and JSON schema of each path parameter."""
        params = []
        for match in _PARAM.finditer(self.path):
            schema: dict[str, Any] = {"type": "string"}
            if match["converter"] == "int":
                schema = {"type": "integer", "minimum": 0}
                limit = re.search(r"max\s*=\s*(\d+)", match["args"] or "")
                if limit:
                    schema["maximum"] = int(limit.group(1))
            params.append((match["name"], schema))
        return params

    def error_statuses(self) -> list[int]:
        """Error statuses this operation can answer, for the document."""
        statuses = set(self.errors) | {422}  # every operation refuses unknown query parameters
        if self.role is not None:
            statuses |= {401, 403}
        if self.request_model is not None or self.form_model is not None:
            statuses |= {400, 413}
        return sorted(statuses)


OPERATIONS: list[Operation] = []


def _check_query(model: type[BaseModel] | None) -> None:
    """Unknown query parameters are refused, naming the ones this operation accepts."""
    accepted = set(model.model_fields) if model is not None else set()
    unknown = sorted(set(request.args) - accepted)
    if unknown:
        allowed = ", ".join(sorted(accepted)) or _("无")
        raise ApiError(
            422,
            [FieldError(name, _("不支持的查询参数；可用：%(allowed)s", allowed=allowed)) for name in unknown],
        )
    for name, value in request.args.items(multi=True):
        if "\x00" in value:
            raise ApiError(422, [FieldError(name, _("不能包含空字符 NUL"))])
    repeated = sorted(name for name, values in request.args.lists() if len(values) > 1)
    if repeated:
        raise ApiError(422, [FieldError(name, _("只能给出一次")) for name in repeated])


def api_route(
    bp: Blueprint,
    path: str,
    method: str,
    *,
    summary: str,
    role: Role | None,
    **details: Any,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a view on `bp` behind bearer auth for `role` and record it in OPERATIONS."""

    def decorator(view: Callable[..., Any]) -> Callable[..., Any]:
        operation = Operation(
            path=path,
            method=method.upper(),
            endpoint=view.__name__,
            summary=summary,
            description=(view.__doc__ or "").strip(),
            role=role,
            **details,
        )
        clash = [
            op
            for op in OPERATIONS
            if (op.path, op.method) == (operation.path, operation.method) or op.endpoint == operation.endpoint
        ]
        if clash:
            raise ValueError(f"API operation registered twice: {operation.method} {operation.path}")

        @functools.wraps(view)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            authenticate(role)
            _check_query(operation.query_model)
            return view(*args, **kwargs)

        bp.add_url_rule(path, endpoint=operation.endpoint, view_func=guarded, methods=[operation.method])
        OPERATIONS.append(operation)
        return guarded

    return decorator


def created(body: Any, location: str | None = None, status: int = 201) -> Response:
    """The JSON reply for something made (201) or started (202), with its address when it has one."""
    return reply(body, status, location=location)


def reply(
    body: Any, status: int = 200, *, version: int | None = None, location: str | None = None
) -> Response:
    """A JSON reply; a versioned record's version is its ETag, and a record just made gives its address."""
    response = jsonify(body)
    response.status_code = status
    if version is not None:
        response.set_etag(str(version))
    if location:
        response.headers["Location"] = location
    return response
