"""Probe, parser and upload registries: each module in this package registers what it brings.

A probe (prepare / run / cleanup) runs commands; a parser is a pure function text -> list[Sample]
that the suite runner calls on the raw output the probe recorded; an upload tool says how an output
captured by hand is read (its parser, the suite step it stands for, the command to capture it). The CLI
choices, the upload form and the API read these registries; docs/extending.md lists what a new probe
declares. Duplicate names raise.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchmarks.gc_pause import without_gc
from benchmarks.messages import message as _

if TYPE_CHECKING:
    from benchmarks.probes.base import Probe
    from benchmarks.sample import Sample

Parser = Callable[..., "list[Sample]"]

PROBES: dict[str, type[Probe]] = {}
PARSERS: dict[str, Parser] = {}


@dataclass(frozen=True)
class UploadTool:
    """How one tool's output captured by hand is read: its parser, the suite step it stands for, the paths
    it fits (the first is the default; () takes none), the command to capture it (shown on the form), and
    `order`, its place in the lists of upload tools.

    `step_of(samples)` names the step where it depends on the output (iperf3 -R is iperf3_reverse),
    `derive(samples)` adds the samples the suite step would have derived, and `purpose` is the metadata
    the suite gives the step's samples (the comparison reads it)."""

    name: str
    parser: str
    step: str
    paths: tuple[str, ...]
    command: str
    path_required: bool = False
    order: int = 1000
    step_of: Callable[[Sequence[Sample]], str] | None = None
    derive: Callable[[Sequence[Sample]], list[Sample]] | None = None
    purpose: str | None = None

    def step_for(self, samples: Sequence[Sample]) -> str:
        """The suite step these uploaded samples stand for."""
        return self.step_of(samples) if self.step_of else self.step

    def derived(self, samples: Sequence[Sample]) -> list[Sample]:
        """The samples derived from these uploaded ones (none for most tools)."""
        return self.derive(samples) if self.derive else []


UPLOADS: dict[str, UploadTool] = {}


def register_upload(tool: UploadTool) -> UploadTool:
    """Register an upload tool under `tool.name`; a duplicate name raises."""
    if tool.name in UPLOADS:
        raise ValueError(f"upload tool {tool.name!r} is registered twice")
    UPLOADS[tool.name] = tool
    return tool


def upload_tools() -> dict[str, UploadTool]:
    """Every registered upload tool by name, in their `order` (then by name)."""
    load_probes()
    return {tool.name: tool for tool in sorted(UPLOADS.values(), key=lambda tool: (tool.order, tool.name))}


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
