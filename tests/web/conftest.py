"""Helpers for the page tests: providers made through the services, and HTML lookups."""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlmodel import Session

from app.models import Provider
from app.registry import providers as service


def provider_data(**overrides: Any) -> dict[str, Any]:
    """A plausible, clearly fictional provider."""
    data: dict[str, Any] = {
        "legal_name": "北京示例算力科技有限公司",
        "short_name": "示例算力",
        "registered_province": "北京",
        "status": "candidate",
    }
    data.update(overrides)
    return data


@pytest.fixture
def make_provider(session: Session):
    """Create a provider through the service; returns the stored Provider."""

    def _make(**overrides: Any) -> Provider:
        return service.create_provider(session, data=provider_data(**overrides))

    return _make


def field_error(html: str, name: str) -> str | None:
    """Text of the invalid-feedback block under input `name`, or None when it has none."""
    match = re.search(rf'id="f-{re.escape(name)}-error">(.*?)</div>\s*</div>', html, re.S)
    return re.sub(r"<[^>]+>", " ", match.group(1)).strip() if match else None


def input_value(html: str, name: str) -> str | None:
    """The value attribute of the text input `name`."""
    match = re.search(rf'<input[^>]*name="{re.escape(name)}"[^>]*value="([^"]*)"', html, re.S)
    return match.group(1) if match else None


def selected_value(html: str, name: str) -> str | None:
    """The selected option of the select `name`."""
    select = re.search(rf'<select[^>]*name="{re.escape(name)}".*?</select>', html, re.S)
    if not select:
        return None
    match = re.search(r'<option value="([^"]*)" selected', select.group(0))
    return match.group(1) if match else None
