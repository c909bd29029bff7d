"""Import every module of a package, so that modules register themselves (tables, routes, commands), and
register a name once."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import TypeVar


def import_submodules(package_name: str, *, skip: tuple[str, ...] = ()) -> list[ModuleType]:
    """Import each direct submodule of `package_name` (in name order) and return them."""
    package = importlib.import_module(package_name)
    modules = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda info: info.name):
        if info.name.startswith("_") or info.name in skip:
            continue
        modules.append(importlib.import_module(f"{package_name}.{info.name}"))
    return modules


Value = TypeVar("Value")

# The domain packages, whose modules register fact sources, job kinds and event handlers when imported.
DOMAIN_PACKAGES = (
    "app.accounts",
    "app.registry",
    "app.credentials",
    "app.trials",
    "app.cases",
    "app.disclosure",
    "app.notify",
)


def import_domains() -> list[ModuleType]:
    """Import every module of every domain package, so that each registers what it offers."""
    return [module for package in DOMAIN_PACKAGES for module in import_submodules(package)]


def register_once(registry: dict[str, Value], key: str, value: Value, what: str) -> None:
    """Put `value` in `registry` under `key`; a key that is there already raises ("<what> 'key' is registered
    twice"), so two modules can't claim one name."""
    if key in registry:
        raise ValueError(f"{what} {key!r} is registered twice")
    registry[key] = value
