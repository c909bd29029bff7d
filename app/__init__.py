"""gpuvet, the Flask service that vets GPU-server rental providers; app.factory.create_app builds it.

Importing this package loads no Flask (a scraper or a benchmark parser may read app.core or app.vetting):
`from app import create_app` reaches app.factory on first use.
"""

from __future__ import annotations

from typing import Any

_FACTORY_NAMES = ("create_app",)


def __getattr__(name: str) -> Any:
    """create_app, imported from app.factory when first asked for."""
    if name in _FACTORY_NAMES:
        from app import factory

        return getattr(factory, name)
    raise AttributeError(f"module 'app' has no attribute {name!r}")
