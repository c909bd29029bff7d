"""JSON API under /api/v1 with bearer-token auth and one error shape."""

from flask import Blueprint

bp = Blueprint("api", __name__)

# Importing the view modules registers their routes (and records them for the OpenAPI document).
from app.api.errors import init_blueprint  # noqa: E402
from app.core.plugins import import_submodules  # noqa: E402

import_submodules(__name__)

init_blueprint(bp)
