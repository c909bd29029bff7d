"""Where a provider report's sections get their data: a registry of sources beyond the registry itself.

The domains register their sources next to the data they read (app.credentials.report_inputs, and the
report_inputs modules of app.cases, app.trials and app.disclosure); this module imports none of them.
Each source names the module it depends on. A source whose module is not installed yet is "unavailable",
one that returns nothing is "empty", and the report marks both sections as not verified. New producers
plug in with @source; the report and its snapshot need no other change.
Every loader returns JSON-plain data (str, int, float, bool, None, lists, dicts).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlmodel import Session

from app.core.plugins import import_domains, register_once

logger = logging.getLogger(__name__)

Loader = Callable[[Session, Any], Any]


@dataclass(frozen=True)
class Source:
    """A data source of the provider report; `module` must be importable for it to be available."""

    key: str
    module: str
    load: Loader


SOURCES: dict[str, Source] = {}


def source(key: str, *, module: str) -> Callable[[Loader], Loader]:
    """Register the decorated loader as report source `key`; a duplicate key raises."""

    def decorator(load: Loader) -> Loader:
        register_once(SOURCES, key, Source(key, module, load), "report source")
        return load

    return decorator


def _module_exists(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def plain(value: Any) -> Any:
    """JSON-plain copy of `value` (dates as ISO text, enums as their values)."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(item) for item in value]
    if hasattr(value, "value") and not isinstance(value, (str, int, float, bool)):
        return value.value
    return value


def load_sources() -> dict[str, Source]:
    """Import every domain module (so their sources register) and return the registry."""
    import_domains()
    return SOURCES


def gather(session: Session, provider: Any) -> dict[str, dict[str, Any]]:
    """Run every source for `provider`: {key: {"status": ok|empty|unavailable|error, "data": ...}}."""
    results: dict[str, dict[str, Any]] = {}
    for key, entry in load_sources().items():
        if not _module_exists(entry.module):
            results[key] = {"status": "unavailable", "data": None}
            continue
        try:
            data = plain(entry.load(session, provider))
        except Exception as exc:
            logger.exception("report source %s failed for provider %s", key, getattr(provider, "id", "?"))
            results[key] = {"status": "error", "data": None, "error": f"{type(exc).__name__}: {exc}"[:300]}
            continue
        results[key] = {"status": "ok" if data else "empty", "data": data or None}
    return results
