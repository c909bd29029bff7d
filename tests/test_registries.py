"""Self-registration: every table, command group, nav link and provider tab is found once."""

from __future__ import annotations

import pytest
from sqlmodel import SQLModel

from app.web import nav


def test_all_tables_registered():
    assert {"provider", "licence", "filing", "offer", "user", "audit_entry"} <= set(SQLModel.metadata.tables)


def test_command_groups_registered(app):
    assert {"db", "users", "vet", "providers", "demo"} <= set(app.cli.commands)


def test_nav_links_are_registered_once_and_in_order():
    endpoints = [item.endpoint for item in nav.NAV_ITEMS]
    assert endpoints[:3] == ["web.dashboard", "web.providers", "web.provider_new"]
    assert len(endpoints) == len(set(endpoints))
    with pytest.raises(ValueError, match="registered twice"):
        nav.nav_item("web.providers", "again")
