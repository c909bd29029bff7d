"""A reason shown to the buyer: a stable code plus the same sentence in Chinese and English.

The sentences may be given as a function that writes both (called with `args`, so that thousands of offers
need no closure each): ranking thousands of offers then only formats the sentences somebody reads
(formatting numbers is most of the cost of an explanation).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.advice.facts import SOURCE_LABELS

Texts = Callable[..., tuple[str, str]]


class Reason:
    """Why an offer was excluded, marked or scored the way it was."""

    __slots__ = ("_args", "_build", "_en", "_zh", "code", "link", "source")

    def __init__(
        self,
        code: str,
        zh: str | Texts,
        en: str | None = None,
        source: str | None = None,
        link: str | None = None,
        args: tuple[Any, ...] = (),
    ) -> None:
        self.code = code
        self.source = source  # where the figure the reason rests on came from (facts.SOURCE_LABELS)
        self.link = link  # the run (or check) that measured it, when there is a page
        self._args = args  # what a `zh` function writes the sentences from
        if callable(zh):
            self._build: Texts | None = zh
            self._zh = self._en = None
        else:
            self._build = None
            self._zh, self._en = zh, en if en is not None else zh

    def _texts(self) -> tuple[str, str]:
        if self._zh is None and self._build is not None:
            self._zh, self._en = self._build(*self._args)
            self._build, self._args = None, ()
        return self._zh or "", self._en or ""

    @property
    def zh(self) -> str:
        """The sentence in Chinese."""
        return self._texts()[0]

    @property
    def en(self) -> str:
        """The sentence in English."""
        return self._texts()[1]

    def text(self, lang: str) -> str:
        """The sentence in `lang` ("zh" or "en")."""
        return self.zh if lang == "zh" else self.en

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        data: dict[str, Any] = {"code": self.code, "message_zh": self.zh, "message_en": self.en}
        data["source"], data["link"] = self.source, self.link
        if self.source is not None:
            data["source_zh"], data["source_en"] = SOURCE_LABELS[self.source]
        return data

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reason) and (self.code, self.zh, self.en) == (other.code, other.zh, other.en)

    def __hash__(self) -> int:
        return hash((self.code, self.zh, self.en))

    def __repr__(self) -> str:
        return f"Reason({self.code!r}, {self.zh!r}, {self.en!r})"
