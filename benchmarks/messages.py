"""Texts a person reads, kept as a Chinese message id and its values so that the app translates them.

benchmarks/ and scrapers/ import no Flask. They write a user-visible text as `_("中文 %(name)s", name=value)`
with `from benchmarks.messages import message as _` and get a Message back; `pybabel extract` finds the
msgids as before (`_` is one of its default keywords, babel.cfg names these folders). str(message) is the
Chinese text, as gettext gave it outside a request (CLI, jobs, logs, stored run errors); where a person
reads it in the request's language, the app calls app.core.i18n.localized(message).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Translate = Callable[..., str]


def chinese(msgid: str, **values: Any) -> str:
    """The msgid itself with its %(name)s placeholders filled (gettext's behaviour: no values, no %)."""
    return msgid % values if values else msgid


@dataclass(frozen=True)
class Message:
    """A Chinese msgid and the values of its placeholders; a value may itself be a Message."""

    msgid: str
    values: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def render(self, translate: Translate = chinese) -> str:
        """The text through `translate(msgid, **values)`, nested messages rendered the same way first."""
        return translate(
            self.msgid, **{name: render(value, translate) for name, value in self.values.items()}
        )

    def __str__(self) -> str:
        return self.render()


def message(msgid: str, **values: Any) -> Message:
    """A Message: mark a Chinese text for the catalog and fill it later, in the reader's language."""
    return Message(msgid, values)


def render(text: Any, translate: Translate = chinese) -> Any:
    """A Message rendered through `translate`; any other value unchanged."""
    return text.render(translate) if isinstance(text, Message) else text
