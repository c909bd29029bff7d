"""Flask CLI command groups: db, users, vet, providers, demo."""

from __future__ import annotations

from flask import Flask


def init_app(app: Flask) -> None:
    """Register every command group on the app."""
    from app.cli.db import db_group
    from app.cli.demo import demo_group
    from app.cli.providers import providers_group
    from app.cli.users import users_group
    from app.cli.vet import vet_group

    for group in (db_group, users_group, vet_group, providers_group, demo_group):
        app.cli.add_command(group)
