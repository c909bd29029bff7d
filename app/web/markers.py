"""Invisible direction and zero-width characters in pages: shown as [U+XXXX], as the reports do."""

from __future__ import annotations

from typing import Any

from flask import Flask
from markupsafe import Markup, escape

from app.reports.text import entity_controls, has_controls, reveal_controls


def reveal_in_page(value: Any) -> Any:
    """Jinja finalize: every printed value shows its invisible characters as markers.

    Markup (translations with user values, macro output) is handled too: a marker holds no character
    HTML treats specially, so replacing inside already-escaped text cannot open a tag.
    """
    if not isinstance(value, str) or not has_controls(value):
        return value
    if isinstance(value, Markup):
        return Markup(reveal_controls(str(value)))
    return reveal_controls(value)


def form_value(value: Any) -> Markup:
    """An input's value, escaped, with invisible characters as &#x...; so an edit saves them unchanged."""
    return Markup(entity_controls(str(escape("" if value is None else value))))


def init_app(app: Flask) -> None:
    """Install the finalize hook and the form_value filter on the app's Jinja environment."""
    app.jinja_env.finalize = reveal_in_page
    app.jinja_env.filters["form_value"] = form_value
