"""One error handler that answers JSON under /api and HTML elsewhere."""

from __future__ import annotations

import logging
from typing import Any

from flask import Flask, jsonify, make_response, render_template, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound

from app.guards import route_exists
from app.services.errors import ServiceError

logger = logging.getLogger(__name__)

MESSAGES = {
    400: "请求有误 (bad request)",
    401: "需要登录或有效的 API 令牌 (authentication required)",
    403: "你的角色无权执行此操作 (your role does not allow this)",
    404: "页面或记录不存在 (not found)",
    405: "不支持此请求方法 (method not allowed)",
    409: "与已保存的数据冲突 (conflict)",
    413: "上传内容过大 (payload too large)",
    414: "网址过长 (URI too long)",
    422: "输入有误 (invalid input)",
    431: "请求头过大 (request header fields too large)",
    500: "服务器内部错误 (internal error)",
}


def wants_json() -> bool:
    """API paths and clients that ask for JSON get JSON errors."""
    return request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"


def error_response(status: int, errors: list[dict[str, str]]) -> Any:
    """Render the one error shape: JSON {"errors": [...]} or the error page."""
    if wants_json():
        return jsonify({"errors": errors}), status
    return render_template("error.html", status=status, errors=errors), status


def _service_error(exc: ServiceError) -> Any:
    return error_response(exc.status, [e.as_dict() for e in exc.errors])


def _http_error(exc: HTTPException) -> Any:
    if isinstance(exc, MethodNotAllowed) and not route_exists():
        exc = NotFound()
    status = exc.code or 500
    message = MESSAGES.get(status, exc.description or exc.name)
    response = make_response(error_response(status, [{"field": "", "message": message}]))
    # Keep the exception's own headers (Allow on 405, WWW-Authenticate on 401), not its Content-Type.
    for name, value in exc.get_headers():
        if name.lower() != "content-type":
            response.headers[name] = value
    return response


def _csrf_error(exc: CSRFError) -> Any:
    return error_response(
        400,
        [
            {
                "field": "csrf_token",
                "message": "表单已过期或缺少 CSRF 令牌，请刷新页面后重试 (CSRF token missing or expired)",
            }
        ],
    )


def _unexpected(exc: Exception) -> Any:
    if isinstance(exc, HTTPException):
        return _http_error(exc)
    logger.exception("unhandled error on %s %s", request.method, request.path)
    return error_response(500, [{"field": "", "message": MESSAGES[500]}])


def init_app(app: Flask) -> None:
    """Register the handlers."""
    app.register_error_handler(Exception, _unexpected)
    app.register_error_handler(ServiceError, _service_error)
    app.register_error_handler(CSRFError, _csrf_error)
    app.register_error_handler(HTTPException, _http_error)
