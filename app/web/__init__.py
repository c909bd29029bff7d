"""Server-rendered pages (Chinese first, English second)."""

from datetime import datetime
from typing import Any

from flask import Blueprint
from jinja2 import pass_context

from app.core import clock as localtime
from app.core.i18n import current_language
from app.core.plugins import import_submodules
from app.web import labels, markers, nav, prose

bp = Blueprint("web", __name__)


@bp.app_context_processor
def _template_globals() -> dict[str, Any]:
    """Names every page template may use."""
    return {
        "nav_items": nav.NAV_ITEMS,
        "provider_tabs": nav.PROVIDER_TABS,
        "current_locale": current_language(),
    }


@bp.record_once
def _jinja_globals(state: Any) -> None:
    # Globals (unlike context processors) are also visible inside imported macros.
    state.app.jinja_env.globals["labels"] = labels
    markers.init_app(state.app)


# Label filters take the context so that Jinja never folds them at compile time: {{ 'uscc'|field_label }}
# would otherwise be frozen in the language of the request that first compiled the template.
@bp.app_template_filter("label")
@pass_context
def _label(_context: Any, value: Any, group: str) -> Any:
    return labels.label(value, group)


@bp.app_template_filter("field_label")
@pass_context
def _field_label(_context: Any, name: str) -> Any:
    return labels.field_label(name)


@bp.app_template_filter("value_label")
@pass_context
def _value_label(_context: Any, value: Any, field: str) -> Any:
    return labels.value_label(field, value)


@bp.app_template_filter("prose")
def _prose(value: Any) -> Any:
    return prose.prose(value, current_language())


@bp.app_template_filter("num")
def _num(value: Any) -> Any:
    return labels.number(value)


@bp.app_template_filter("when")
def _when(value: datetime | None, seconds: bool = False) -> str:
    """Timestamps in the configured zone, labelled: '2026-12-01 23:41 UTC+8'."""
    return localtime.when(value, seconds=seconds)


# Route modules register themselves on `bp` (and their links in app.web.nav) when imported.
import_submodules(__name__)
