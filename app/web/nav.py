"""Registries for the navigation bar and the provider page's tabs, filled by the route modules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.models.enums import Role

# Links ordered here or later (jobs, import/export, user administration) sit under the bar's "More" menu,
# so that the bar fits one line at 1280 px in both languages.
MORE_FROM_ORDER = 80


@dataclass(frozen=True)
class NavItem:
    """A link in the top navigation bar, shown to users with at least `role`."""

    endpoint: str
    label: Any
    role: Role = Role.viewer
    order: int = 50
    active: tuple[str, ...] = ()

    def is_active(self, endpoint: str | None) -> bool:
        """Whether the current request's endpoint belongs to this item."""
        return endpoint == self.endpoint or endpoint in self.active

    @property
    def in_more(self) -> bool:
        """Whether the link sits under the "More" menu rather than on the bar itself."""
        return self.order >= MORE_FROM_ORDER


@dataclass(frozen=True)
class ProviderTab:
    """A tab on the provider page; its endpoint takes `provider_id`."""

    endpoint: str
    label: Any
    order: int = 50


NAV_ITEMS: list[NavItem] = []
PROVIDER_TABS: list[ProviderTab] = []


def _add(registry: list, item: Any) -> None:
    if any(existing.endpoint == item.endpoint for existing in registry):
        raise ValueError(f"{item.endpoint} is registered twice")
    registry.append(item)
    registry.sort(key=lambda entry: (entry.order, entry.endpoint))


def nav_item(endpoint: str, label: Any, *, role: Role = Role.viewer, order: int = 50, active=()) -> None:
    """Add a link to the navigation bar."""
    _add(NAV_ITEMS, NavItem(endpoint, label, role, order, tuple(active)))


def provider_tab(endpoint: str, label: Any, *, order: int = 50) -> None:
    """Add a tab to the provider page."""
    _add(PROVIDER_TABS, ProviderTab(endpoint, label, order))
