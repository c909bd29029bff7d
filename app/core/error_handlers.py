"""One error handler that answers JSON under /api and HTML elsewhere."""

from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa
from flask import Flask, g, jsonify, make_response, render_template, request
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException, MethodNotAllowed, NotFound

from app.core.errors import ServiceError
from app.core.guards import route_exists

logger = logging.getLogger(__name__)

MESSAGES = {
    400: _l("请求有误"),
    401: _l("需要登录或有效的 API 令牌"),
    403: _l("你的角色无权执行此操作"),
    404: _l("页面或记录不存在"),
    405: _l("不支持此请求方法"),
    409: _l("与已保存的数据冲突"),
    413: _l("上传内容过大"),
    414: _l("网址过长"),
    422: _l("输入有误"),
    429: _l("请求过于频繁，请稍后再试"),
    431: _l("请求头过大"),
    500: _l("服务器内部错误"),
    503: _l("服务暂不可用，请稍后再试"),
}


def http_message(exc: HTTPException) -> str:
    """Our wording for the status in the user's language (werkzeug's English descriptions are never shown)."""
    status = exc.code or 500
    wording = MESSAGES.get(status)
    return str(wording) if wording else _("请求未能完成（HTTP %(status)s）", status=status)


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
    response = make_response(error_response(status, [{"field": "", "message": http_message(exc)}]))
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
                "message": _("表单已过期或缺少 CSRF 令牌，请刷新页面后重试"),
            }
        ],
    )


def _unexpected(exc: Exception) -> Any:
    if isinstance(exc, HTTPException):
        return _http_error(exc)
    logger.exception("unhandled error on %s %s", request.method, request.path)
    return error_response(500, [{"field": "", "message": str(MESSAGES[500])}])


def _database_unavailable(exc: sa.exc.OperationalError) -> Any:
    """The database refused (disk full, read-only, connection lost): 503 saying so, never a 500."""
    logger.error("database unavailable on %s %s: %s", request.method, request.path, exc.orig)
    if g.get("db_session") is not None:
        g.db_session.rollback()  # the error page may read (the inbox badge) on a clean transaction
    message = _("数据库暂时无法读写（可能磁盘已满或连接中断），请稍后再试或告知管理员")
    response = make_response(error_response(503, [{"field": "", "message": message}]))
    response.headers["Retry-After"] = "60"
    return response


def init_app(app: Flask) -> None:
    """Register the handlers."""
    app.register_error_handler(Exception, _unexpected)
    app.register_error_handler(sa.exc.OperationalError, _database_unavailable)
    app.register_error_handler(ServiceError, _service_error)
    app.register_error_handler(CSRFError, _csrf_error)
    app.register_error_handler(HTTPException, _http_error)
