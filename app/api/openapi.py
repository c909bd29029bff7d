"""OpenAPI 3.1 document generated from the route table and the pydantic/SQLModel models."""

from __future__ import annotations

import functools
from typing import Any

from flask import Response, jsonify, url_for
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from app.api import bp
from app.api.routing import OPERATIONS, Operation, api_route
from app.api.schemas import BLANK_IS_UNSET, ErrorResponse
from app.models.provider import _Clean

REF = "#/components/schemas/{model}"

ERROR_RESPONSES = {
    400: (
        "BadRequest",
        "请求无法解析：JSON 格式错误、不是 JSON 对象或 Content-Type 不对 (malformed request)",
    ),
    401: ("Unauthorized", "缺少或无效的 Bearer 令牌 (missing or invalid bearer token)"),
    403: ("Forbidden", "角色不足：viewer 只读，analyst 可修改，admin 可删除 (role too low)"),
    404: ("NotFound", "记录或路径不存在 (not found)"),
    409: ("Conflict", "版本冲突或统一社会信用代码重复 (stale version or duplicate uscc)"),
    413: ("PayloadTooLarge", "请求体过大 (body too large)"),
    415: (
        "UnsupportedMediaType",
        "请求体须为 multipart/form-data (the body must be multipart/form-data)",
    ),
    422: (
        "UnprocessableEntity",
        "输入有误或不符合业务规则（未知的查询参数、无法解析的输出、不可信的测量值等），field 指出字段，"
        '如 "offers[0].gpus_per_node" (validation failed, or a business rule refused the input: unknown '
        "query parameters, unreadable tool output, implausible measurements ...)",
    ),
}

REQUEST_HEADERS = {
    "If-Match": {
        "description": '期望的当前版本，如 "3"（GET 返回的 ETag）；请求体或 ?version= 已给出时可省略 '
        "(expected version, as sent in ETag)",
        "schema": {"type": "string", "examples": ['"3"']},
    },
}

RESPONSE_HEADERS = {
    "ETag": {"description": '供应商的当前版本，如 "3" (current version)', "schema": {"type": "string"}},
    "Location": {"description": "新记录的地址 (URL of the created provider)", "schema": {"type": "string"}},
}

TAGS = [
    {"name": "providers", "description": "GPU 算力供应商登记 (provider registry)"},
    {"name": "tokens", "description": "API 令牌：列出与吊销 (list and revoke API tokens)"},
    {"name": "meta", "description": "本文档 (this document)"},
]


def _model_modes() -> list[tuple[type[BaseModel], JsonSchemaMode]]:
    pairs: list[tuple[type[BaseModel], JsonSchemaMode]] = [(ErrorResponse, "serialization")]
    for op in OPERATIONS:
        for model, mode in (
            (op.request_model, "validation"),
            (op.form_model, "validation"),
            (op.query_model, "validation"),
            (op.response_model, "serialization"),
        ):
            if model is not None and (model, mode) not in pairs:
                pairs.append((model, mode))
    return pairs


def _refs_in(value: Any) -> list[str]:
    """Names of the component schemas `value` refers to directly."""
    if isinstance(value, dict):
        found = [value["$ref"].rsplit("/", 1)[-1]] if isinstance(value.get("$ref"), str) else []
        return found + [name for item in value.values() for name in _refs_in(item)]
    if isinstance(value, list):
        return [name for item in value for name in _refs_in(item)]
    return []


def _reachable(schemas: dict[str, Any], roots: list[str]) -> set[str]:
    """The component schemas reachable from `roots` (themselves included)."""
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name not in seen and name in schemas:
            seen.add(name)
            pending.extend(_refs_in(schemas[name]))
    return seen


def _clean_model_names() -> set[str]:
    """Names of the registry's input models that read blank text as null (subclasses of _Clean)."""
    found: set[str] = set()
    pending = list(_Clean.__subclasses__())
    while pending:
        model = pending.pop()
        found.add(model.__name__)
        pending.extend(model.__subclasses__())
    return found


# How the registry's input models read what a web form sends: blank text is null, numbers and yes/no may be
# text ("4", "４", "yes") and lists one text ("广东、北京"), as pydantic's lax mode and the models' cleaning
# allow.
BLANK_TEXT = {"type": "string", "maxLength": 0}
NUMBER_TEXT = {"type": "string", "pattern": "[0-9０-９]"}  # text holding digits; what pydantic reads of it
YES_NO = ["0", "1", "true", "false", "yes", "no", "on", "off", "t", "f", "y", "n", 0, 1]
LAX_KEYS = (
    "anyOf",
    "type",
    "enum",
    "const",
    "$ref",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
)


def _lax_options(options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The forms' extra ways of writing the values `options` describe."""
    kinds = {option.get("type") for option in options}
    extra = [BLANK_TEXT] if "null" in kinds else []
    if kinds & {"integer", "number"}:
        extra.append(NUMBER_TEXT)
    if "boolean" in kinds:
        extra.append({"enum": YES_NO})
    if "array" in kinds:
        extra.append({"type": "string"})  # items in one text, separated by 、 or commas
    return extra


def _document_lax_input(schemas: dict[str, Any], request_roots: list[str]) -> None:
    """Each property of the registry's request bodies also lists what the API reads leniently (blank text
    as null, numbers and yes/no as text), so that the document admits what the API accepts."""
    clean = _clean_model_names()
    for name in _reachable(schemas, request_roots):
        if name.removesuffix("-Input") not in clean:
            continue
        for prop in schemas[name].get("properties", {}).values():
            options = prop.get("anyOf", [prop])
            extra = _lax_options(options)
            if not extra:
                continue
            if "anyOf" in prop:
                prop["anyOf"] = options + extra
            else:  # a single type: it becomes the first option, keeping title, default and description
                core = {key: prop.pop(key) for key in LAX_KEYS if key in prop}
                prop["anyOf"] = [core, *extra]


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """Optional[X] becomes X for a query parameter, which is simply left out when unset."""
    options = schema.get("anyOf")
    if options and len(options) == 2 and {"type": "null"} in options:
        rest = {key: value for key, value in schema.items() if key != "anyOf"}
        return {**next(option for option in options if option != {"type": "null"}), **rest}
    return schema


def _query_params(schema: dict[str, Any]) -> list[dict[str, Any]]:
    params = []
    required = set(schema.get("required", []))
    blank_is_unset = bool(schema.get(BLANK_IS_UNSET))
    for name, prop in schema.get("properties", {}).items():
        prop = _without_null(dict(prop))
        prop.pop("title", None)
        if prop.get("default", 0) is None:
            prop.pop("default")
        description = prop.pop("description", "")
        param = {
            "name": name,
            "in": "query",
            "required": name in required,
            "description": description,
            "schema": prop,
        }
        if blank_is_unset:
            param["allowEmptyValue"] = True  # ?verdict= is the same as leaving it out
        params.append(param)
    return params


def _success(op: Operation, refs: dict[Any, dict[str, str]]) -> dict[str, Any]:
    response: dict[str, Any] = {"description": op.summary}
    if op.status != 204:
        schema = refs[(op.response_model, "serialization")] if op.response_model else {"type": "object"}
        if op.media_type != "application/json":
            schema = {"type": "string", "format": "binary"}
        response["content"] = {op.media_type: {"schema": schema}}
    if op.response_headers:
        response["headers"] = {name: RESPONSE_HEADERS[name] for name in op.response_headers}
    return response


def _operation(op: Operation, refs: dict[Any, dict[str, str]], schemas: dict[str, Any]) -> dict[str, Any]:
    role_note = (
        f"需要角色 {op.role.value} 或更高 (requires role {op.role.value} or higher)." if op.role else ""
    )
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": schema} for name, schema in op.path_params()
    ]
    if op.query_model is not None:
        name = refs[(op.query_model, "validation")]["$ref"].rsplit("/", 1)[-1]
        parameters += _query_params(schemas[name])
    parameters += [
        {"name": name, "in": "header", "required": False, **REQUEST_HEADERS[name]} for name in op.headers
    ]
    operation: dict[str, Any] = {
        "operationId": op.endpoint,
        "summary": op.summary,
        "description": " ".join(part for part in (op.description, role_note) if part),
        "tags": list(op.tags),
        "security": [{"bearer": []}] if op.role else [],
        "parameters": parameters,
        "responses": {str(op.status): _success(op, refs)},
    }
    if op.role is not None:
        operation["x-required-role"] = op.role.value
    content = {
        media_type: {"schema": refs[(model, "validation")]}
        for media_type, model in (
            ("application/json", op.request_model),
            ("multipart/form-data", op.form_model),
        )
        if model is not None
    }
    if content:
        operation["requestBody"] = {"required": True, "content": content}
    for status in op.error_statuses():
        operation["responses"][str(status)] = {"$ref": f"#/components/responses/{ERROR_RESPONSES[status][0]}"}
    return operation


@functools.lru_cache(maxsize=8)
def build_document(prefix: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document for the operations in the route table, served under `prefix`."""
    refs, top = models_json_schema(_model_modes(), ref_template=REF)
    schemas: dict[str, Any] = dict(top.get("$defs", {}))
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(op.openapi_path, {})[op.method.lower()] = _operation(op, refs, schemas)
    request_roots = [
        refs[(model, "validation")]["$ref"].rsplit("/", 1)[-1]
        for op in OPERATIONS
        for model in (op.request_model, op.form_model)
        if model is not None
    ]
    _document_lax_input(schemas, request_roots)
    for op in OPERATIONS:
        if op.query_model is not None:  # its fields became parameters; its enums stay as components
            schemas.pop(refs[(op.query_model, "validation")]["$ref"].rsplit("/", 1)[-1], None)
    error_ref = refs[(ErrorResponse, "serialization")]
    responses = {
        name: {"description": description, "content": {"application/json": {"schema": error_ref}}}
        for name, description in ERROR_RESPONSES.values()
    }
    responses["Unauthorized"]["headers"] = {
        "WWW-Authenticate": {"description": 'Bearer realm="gpuvet"', "schema": {"type": "string"}}
    }
    return {
        "openapi": "3.1.0",
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "info": {
            "title": "gpuvet API",
            "version": "1",
            "description": "GPU 算力供应商审查：供应商登记的 JSON 接口。错误统一为 "
            '{"errors": [{"field": ..., "message": ...}]}。令牌：flask --app wsgi users token NAME '
            "(JSON API of the gpuvet provider registry; one error shape; tokens from the CLI).\n\n"
            "错误信息的语言：会话中用切换按钮选过的语言优先；"
            "否则按请求头 Accept-Language 在 zh 与 en 中择优；都没有时为 zh。每条 message 只用一种语言 "
            "(message language: the language chosen in the session first; otherwise the best of zh and en "
            "from the Accept-Language header; zh by default. Each message is in one language only, e.g. "
            "send `Accept-Language: en` for English messages).",
        },
        "servers": [{"url": prefix}],
        "tags": TAGS,
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "responses": responses,
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "Authorization: Bearer <令牌>，"
                    "由 `flask --app wsgi users token NAME` 生成 (tokens come from the CLI)",
                }
            },
        },
    }


@api_route(bp, "/openapi.json", "GET", summary="OpenAPI 3.1 文档 (this document)", role=None, tags=("meta",))
def openapi() -> Response:
    """Generated from the route table and the models; needs no token."""
    prefix = url_for("api.openapi").removesuffix("/openapi.json")
    return jsonify(build_document(prefix))
