"""A job's error in the reader's language (issue 27 item 11).

A job runs in the language of whoever started it, so the message of the error it fails with is already
translated when it is caught. `recognise` reads such a text back to its message id and values by matching
it against the catalogue (the Chinese msgids, or their English translations): the job keeps them
({"msgid", "params"}, values that are messages themselves recognised too) beside its text, and `render`
words them in the reader's language. A text the catalogue does not know (a crash's "KeyError: 'x'", an
operating system's message) is kept as it is.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from babel.support import Translations
from flask_babel import gettext as _

from app.core.errors import ServiceError

TRANSLATIONS = Path(__file__).resolve().parent.parent / "translations"
_PLACEHOLDER = re.compile(r"%\((\w+)\)[-#0 +]*\d*(?:\.\d+)?([sdifr])|%%")
MIN_OWN_WORDS = 4  # a message with fewer characters of its own than this is too vague to recognise
MAX_DEPTH = 2  # values that are messages themselves, and their values


def _compiled(text: str) -> tuple[re.Pattern[str], dict[str, str], int]:
    """(the text's pattern, the conversion of each value, how many characters are its own words)."""
    parts, kinds, position = [], {}, 0
    own = 0
    for found in _PLACEHOLDER.finditer(text):
        literal = text[position : found.start()]
        parts.append(re.escape(literal))
        own += len(literal.strip())
        position = found.end()
        name = found.group(1)
        if name is None:  # "%%"
            parts.append("%")
        elif name in kinds:
            parts.append(f"(?P={name})")
        else:
            parts.append(f"(?P<{name}>.+?)")
            kinds[name] = found.group(2)
    parts.append(re.escape(text[position:]))
    own += len(text[position:].strip())
    return re.compile("".join(parts), re.S), kinds, own


@functools.cache
def _catalogue(
    language: str,
) -> tuple[dict[str, str], tuple[tuple[re.Pattern[str], dict[str, str], str], ...]]:
    """Texts without values -> msgid, and (pattern, conversions, msgid) of those with values, the most
    specific first; both as `language` writes the messages."""
    catalog = Translations.load(str(TRANSLATIONS), ["en"])._catalog  # type: ignore[attr-defined]
    plain: dict[str, str] = {}
    shaped = []
    for msgid, msgstr in catalog.items():
        if not isinstance(msgid, str) or not msgid or not msgstr:
            continue  # the header, plural forms
        text = msgid if language == "zh" else msgstr
        pattern, kinds, own = _compiled(text)
        if not kinds:
            plain.setdefault(text.replace("%%", "%"), msgid)
        elif own >= MIN_OWN_WORDS:
            shaped.append((own, pattern, kinds, msgid))
    shaped.sort(key=lambda item: -item[0])
    return plain, tuple((pattern, kinds, msgid) for _own, pattern, kinds, msgid in shaped)


def _typed(value: str, kind: str) -> Any:
    if kind in "di":
        return int(value)
    if kind == "f":
        return float(value)
    return value


def recognise(text: str, language: str, depth: int = 0) -> dict[str, Any] | None:
    """{"msgid", "params"} of a message as `language` ("zh"/"en") wrote it, or None when unknown."""
    plain, shaped = _catalogue(language)
    if text in plain:
        return {"msgid": plain[text], "params": {}}
    for pattern, kinds, msgid in shaped:
        found = pattern.fullmatch(text)
        if found is None:
            continue
        try:
            params = {name: _typed(value, kinds[name]) for name, value in found.groupdict().items()}
        except ValueError:
            continue
        if depth + 1 < MAX_DEPTH:
            for name, value in params.items():
                if isinstance(value, str):
                    params[name] = recognise(value, language, depth + 1) or value
        return {"msgid": msgid, "params": params}
    return None


def _is_message(value: Any) -> bool:
    """A benchmarks.messages.Message (a msgid and its values), duck-typed as app.core.i18n.localized reads
    one, so that this lowest layer imports nothing above it."""
    values = getattr(value, "values", None)
    return isinstance(getattr(value, "msgid", None), str) and isinstance(values, Mapping)


def _stored(message: Any) -> dict[str, Any]:
    """A Message as stored parts keep it: its id and values, values that are messages kept the same way."""
    values = message.values.items()
    params = {name: _stored(value) if _is_message(value) else value for name, value in values}
    return {"msgid": message.msgid, "params": params}


def error_parts(exc: BaseException, language: str) -> list[dict[str, Any]] | None:
    """A service error's messages as message ids and values (with their fields), or None when none of them
    is known: what the job stores to word its error in each reader's language. An error that carries its
    message as an id and values (`said`, e.g. a host this machine cannot reach) keeps exactly that."""
    said = getattr(exc, "said", None)
    if _is_message(said):
        return [{"field": "", **_stored(said)}]
    if not isinstance(exc, ServiceError):
        return None
    parts = [
        {"field": e.field, **(recognise(str(e.message), language) or {"text": str(e.message)})}
        for e in exc.errors
    ]
    return parts if any("msgid" in part for part in parts) else None


def text_parts(text: str, language: str) -> list[dict[str, Any]] | None:
    """One message (a job interrupted, requeued) as stored parts, or None when unknown."""
    found = recognise(text, language)
    return [{"field": "", **found}] if found else None


def _message(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("msgid"), str):
        params = {name: _message(item) for name, item in (value.get("params") or {}).items()}
        return _(value["msgid"], **params)
    return value


def render(parts: list[dict[str, Any]]) -> str:
    """Stored parts in the current language, as the job's error text joins them ("field: message; ...")."""
    words = []
    for part in parts:
        message = _message(part) if "msgid" in part else str(part.get("text") or "")
        words.append(f"{part['field']}: {message}" if part.get("field") else str(message))
    return "; ".join(words)
