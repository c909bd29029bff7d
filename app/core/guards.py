"""Request guards: ids in URLs that fit the database, and URL and header sizes the app answers itself."""

from __future__ import annotations

from typing import Any

from flask import Flask, request
from flask.globals import request_ctx
from werkzeug.exceptions import HTTPException, RequestHeaderFieldsTooLarge, RequestURITooLarge
from werkzeug.routing import IntegerConverter, ValidationError

from app.core.limits import MAX_ID

# Below gunicorn's limits (gunicorn.conf.py), so oversized requests get the app's own error shape.
MAX_URL_BYTES = 8 * 1024
MAX_HEADER_BYTES = 8 * 1024
MAX_HEADERS_BYTES = 32 * 1024
MAX_HEADER_FIELDS = 100


class IdConverter(IntegerConverter):
    """`<int:...>` bounded to the INTEGER range: larger ids match no route (404), never reach the DB."""

    def __init__(
        self,
        map: Any,
        fixed_digits: int = 0,
        min: int | None = None,
        max: int | None = None,
        signed: bool = False,
    ) -> None:
        bound = MAX_ID if max is None else (max if max < MAX_ID else MAX_ID)
        super().__init__(map, fixed_digits=fixed_digits, min=min, max=bound, signed=signed)

    def to_python(self, value: str) -> int:
        """Refuse digit strings too long to be an id before int() sees them."""
        if len(value) > len(str(MAX_ID)):
            raise ValidationError()
        return super().to_python(value)


def _raw_target() -> str:
    environ = request.environ
    target = environ.get("RAW_URI") or environ.get("REQUEST_URI")
    if target:
        return str(target)
    query = environ.get("QUERY_STRING", "")
    return environ.get("PATH_INFO", "") + (f"?{query}" if query else "")


def check_request_size() -> None:
    """Answer 414 for an over-long URL and 431 for oversized headers, in the app's error shape."""
    if len(_raw_target().encode("latin-1", "replace")) > MAX_URL_BYTES:
        raise RequestURITooLarge()
    headers = list(request.headers.items())
    sizes = [len(name) + len(value) for name, value in headers]
    if (
        len(headers) > MAX_HEADER_FIELDS
        or max(sizes, default=0) > MAX_HEADER_BYTES
        or sum(sizes) > MAX_HEADERS_BYTES
    ):
        raise RequestHeaderFieldsTooLarge()


def route_exists() -> bool:
    """Whether the requested path matches some route for any method (a 405 for a path that fits no route
    because its id is out of range is really a 404)."""
    adapter = request_ctx.url_adapter
    if adapter is None:
        return False
    for method in ("GET", "POST", "PUT", "PATCH", "DELETE"):
        try:
            adapter.match(method=method)
        except HTTPException as exc:
            if exc.code not in (404, 405):
                return True
            continue
        return True
    return False


def init_app(app: Flask) -> None:
    """Bound `<int:...>` app-wide (call before registering blueprints) and check request sizes first."""
    app.url_map.converters["int"] = IdConverter
    app.before_request_funcs.setdefault(None, []).insert(0, check_request_size)
