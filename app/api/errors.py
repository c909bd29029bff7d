"""API-only errors: the one error shape with extra headers (WWW-Authenticate, ...)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, make_response

from app.core.error_handlers import error_response
from app.core.errors import FieldError


class ApiError(Exception):
    """An error the API answers directly, in the one error shape."""

    def __init__(self, status: int, errors: list[FieldError], headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.errors = errors
        self.headers = headers or {}
        super().__init__("; ".join(f"{e.field}: {e.message}" for e in errors))


def _api_error(exc: ApiError) -> Any:
    response = make_response(error_response(exc.status, [e.as_dict() for e in exc.errors]))
    response.headers.update(exc.headers)
    return response


def init_blueprint(bp: Blueprint) -> None:
    """Answer ApiError raised by any API view."""
    bp.register_error_handler(ApiError, _api_error)


def screenshot_upload() -> tuple[bytes, str | None]:
    """A manual record's screenshot from a multipart/form-data request (field `screenshot`); 415 otherwise."""
    from flask import request
    from flask_babel import gettext as _

    from app.core.request_files import uploaded_file
    from app.credentials.manual_lookups import MAX_SCREENSHOT_BYTES

    if request.mimetype != "multipart/form-data":
        raise ApiError(
            415,
            [FieldError("screenshot", _("请以 multipart/form-data 上传，截图放在文件字段 screenshot"))],
        )
    data, filename = uploaded_file("screenshot", MAX_SCREENSHOT_BYTES)
    return data or b"", filename
