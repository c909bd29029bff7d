"""Fixtures for the enterprise credit tests: a provider with a USCC, an analyst, and a filled-in record."""

from __future__ import annotations

import io
from typing import Any

import pytest
from PIL import Image

from app.accounts import users
from app.models import Provider
from app.registry import providers as provider_service

LEGAL_NAME = "北京北辰算力科技有限公司"
USCC = "91110108EXAMPL995L"
LOOKED_AT = "2026-11-30T10:15"  # display zone (Asia/Shanghai): 02:15 UTC


def png_bytes() -> bytes:
    """A real PNG picture, as a screenshot would be."""
    buffer = io.BytesIO()
    Image.new("RGB", (48, 32), (30, 30, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


PDF = b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"


def gsxt_values(**changes: Any) -> dict[str, Any]:
    """What an analyst enters after looking the company up on gsxt: alive, clean, 5000 万元."""
    values = {
        "source": "gsxt",
        "uscc": USCC,
        "registration_status": "存续",
        "registered_capital_wan": "5000",
        "capital_currency": "CNY",
        "founded_on": "2015-03-18",
        "penalties_count": "0",
        "seen": "存续，无经营异常，无严重违法失信记录",
        "looked_at": LOOKED_AT,
    }
    return {**values, **changes}


@pytest.fixture
def provider(session) -> Provider:
    """A provider with a registered USCC."""
    data: dict[str, Any] = {"legal_name": LEGAL_NAME, "uscc": USCC, "registered_province": "北京"}
    return provider_service.create_provider(session, data=data)


@pytest.fixture
def analyst(session):
    """An analyst account (the one who records)."""
    return users.create_user(session, username="analyst1", password="correct horse battery", role="analyst")
