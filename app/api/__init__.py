"""JSON API under /api/v1 with bearer-token auth and one error shape."""

from flask import Blueprint

bp = Blueprint("api", __name__)

# Importing the view modules registers their routes (and records them for the OpenAPI document).
from app.api import openapi, providers  # noqa: E402, F401
from app.api.errors import init_blueprint  # noqa: E402

init_blueprint(bp)
