"""Demo data: clearly fictional providers that between them raise every red flag of DOMAIN.md §4."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import yaml
from sqlmodel import Session

from app.core import clock
from app.core.errors import Conflict, FieldError, InvalidInput
from app.registry.provider_list import ProviderQuery, list_providers, parse_query
from app.registry.transfer.importing import import_provider_dicts

DEMO_FILE = Path(__file__).resolve().parent.parent / "knowledge" / "demo_providers.yaml"
_RELATIVE_DAY = re.compile(r"^today([+-]\d+)d$")
_YEAR = re.compile(r"\{year([+-]\d+)?\}")


def _resolve(value: Any, today: date) -> Any:
    """Turn "today+45d" into a date and "{year+1}" into next year's number, recursively."""
    if isinstance(value, dict):
        return {key: _resolve(item, today) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolve(item, today) for item in value]
    if isinstance(value, str):
        match = _RELATIVE_DAY.match(value)
        if match:
            return (today + timedelta(days=int(match.group(1)))).isoformat()
        return _YEAR.sub(lambda m: str(today.year + int(m.group(1) or 0)), value)
    return value


def demo_providers(today: date | None = None) -> list[dict[str, Any]]:
    """The demo providers as ProviderCreate-shaped dicts, dates made relative to `today`."""
    document = yaml.safe_load(DEMO_FILE.read_text(encoding="utf-8"))
    return _resolve(document["providers"], today or clock.business_today())


def has_providers(session: Session) -> bool:
    """True when the registry holds at least one provider."""
    return list_providers(session, query=ProviderQuery(per_page=1)).total > 0


def existing_demo_names(session: Session, providers: list[dict[str, Any]]) -> list[str]:
    """Legal names of demo providers whose credit code is already registered."""
    names = []
    for provider in providers:
        query = parse_query({"q": provider["uscc"], "per_page": 5})
        for item in list_providers(session, query=query).items:
            if item.uscc == provider["uscc"]:
                names.append(item.legal_name)
    return names


def load_demo(session: Session, *, today: date | None = None) -> int:
    """Load every demo provider in one transaction; refuse if any of them is already registered."""
    providers = demo_providers(today)
    existing = existing_demo_names(session, providers)
    if existing:
        raise Conflict(
            f"示例数据已加载过（已有 {len(existing)} 家，如“{existing[0]}”），本次未做任何修改。"
            "如需重新加载，请先删除这些示例供应商。"
            f" (demo providers already loaded: {len(existing)} found; nothing changed)",
            field="uscc",
        )
    report = import_provider_dicts(session, providers=providers)
    if report.problems:
        raise InvalidInput([FieldError(f"row {p.row}, {p.field}", p.message) for p in report.problems])
    return report.created
