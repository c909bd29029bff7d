"""Probe and parser registries: each module in this package registers its probe and its parsers.

A probe (prepare / run / cleanup) runs commands; a parser is a pure function text -> list[Sample]
that the suite runner calls on the raw output the probe recorded. Duplicate names raise.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from benchmarks.gc_pause import without_gc
from benchmarks.messages import message as _

if TYPE_CHECKING:
    from benchmarks.probes.base import Probe
    from benchmarks.sample import Sample

Parser = Callable[..., "list[Sample]"]

PROBES: dict[str, type[Probe]] = {}
PARSERS: dict[str, Parser] = {}


def register_probe(cls: type[Probe]) -> type[Probe]:
    """Class decorator: register a probe under `cls.name`; a duplicate name raises."""
    if cls.name in PROBES:
        raise ValueError(f"probe {cls.name!r} is registered twice")
    PROBES[cls.name] = cls
    return cls


def register_parser(name: str, *, accepts: str = "") -> Callable[[Parser], Parser]:
    """Function decorator: register a pure parser under `name`; a duplicate name raises.

    `accepts` names the output variants the parser reads; a ParseError from the registered parser ends
    with it, so whoever pasted an unreadable output learns what would be read.
    """

    def decorator(function: Parser) -> Parser:
        if name in PARSERS:
            raise ValueError(f"parser {name!r} is registered twice")
        PARSERS[name] = _naming_accepted(function, accepts) if accepts else function
        return function

    return decorator


def _naming_accepted(function: Parser, accepts: str) -> Parser:
    from benchmarks.sample import ParseError, ToolError

    @functools.wraps(function)
    def parser(text: str, **kwargs: Any) -> list[Sample]:
        try:
            return function(text, **kwargs)
        except ToolError:
            raise
        except ParseError as exc:
            raise ParseError(
                exc.tool, _("%(reason)s（可读取：%(accepted)s）", reason=exc.reason, accepted=accepts)
            ) from exc

    return parser


def load_probes() -> dict[str, type[Probe]]:
    """Import every probe module once and return the probe registry."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if not info.name.startswith("_") and info.name != "base":
            importlib.import_module(f"{__name__}.{info.name}")
    return PROBES


def get_parser(name: str) -> Parser:
    """The parser registered as `name`; KeyError lists the known names."""
    load_probes()
    try:
        return PARSERS[name]
    except KeyError:
        raise KeyError(f"unknown parser {name!r}; known: {', '.join(sorted(PARSERS))}") from None


def parse(name: str, text: str, **kwargs: Any) -> list[Sample]:
    """Run parser `name` on `text` (without cyclic collections: half the time of a 10 MB paste)."""
    parser = get_parser(name)
    with without_gc():
        return parser(text, **kwargs)
