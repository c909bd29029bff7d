"""The one way to ask for the current language and to translate a message id with its values."""

from __future__ import annotations

from typing import Any

from flask import has_request_context
from flask_babel import get_locale
from flask_babel import gettext as _

LANGUAGES = ("zh", "en")


def current_language() -> str:
    """'en' when the request (or a force_locale block) speaks English, else 'zh' (also outside a request)."""
    try:
        locale = get_locale()
    except RuntimeError:  # no application context
        return "zh"
    if locale is None and not has_request_context():
        return "zh"
    return "en" if str(locale or "zh").startswith("en") else "zh"


def translate(msgid: str, **values: Any) -> str:
    """A Chinese message id in the current language, its %(name)s placeholders filled from `values`."""
    return _(msgid, **values)


def localized(text: Any) -> str:
    """A message of benchmarks/ or scrapers/ (benchmarks.messages.Message) in the current language; other text
    as str. Duck-typed on `render(translate)` so that this lowest layer imports nothing above it."""
    render = getattr(text, "render", None)
    return render(translate) if callable(render) else str(text)
