"""API-only errors: the one error shape with extra headers (WWW-Authenticate, ...)."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, make_response

from app.errors import error_response
from app.services.errors import FieldError


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
