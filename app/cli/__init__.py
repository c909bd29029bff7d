"""Flask CLI command groups; every AppGroup defined in a module of this package is registered.

Every `flask` command imports all of these modules, so they import models, services and heavy libraries
inside their commands (tests/test_startup.py checks that `flask vet identify` and `--help` stay light).
"""

from __future__ import annotations

from flask import Flask
from flask.cli import AppGroup

from app.core.plugins import import_submodules


def init_app(app: Flask) -> None:
    """Register every command group found in the package's modules (a duplicate name raises)."""
    groups: dict[str, AppGroup] = {}
    for module in import_submodules(__name__):
        for value in vars(module).values():
            if isinstance(value, AppGroup) and value.name not in groups:
                groups[value.name] = value
            elif isinstance(value, AppGroup) and groups[value.name] is not value:
                raise RuntimeError(f"two command groups are named {value.name!r}")
    for group in groups.values():
        app.cli.add_command(group)
    for module in import_submodules(__name__):  # single commands a module lists in COMMANDS (flask invite)
        for command in getattr(module, "COMMANDS", ()):
            app.cli.add_command(command)
