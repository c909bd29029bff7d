"""The provider report's disclosure section: what the provider declared, when, and what was verified since."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from app.reports.sources import source


@source("disclosure", module="app.disclosure.merge")
def _disclosure(session: Session, provider: Any) -> dict[str, Any] | None:
    """What the provider declared in its latest merged questionnaire, when, and what was verified since."""
    from app.disclosure.merge import report_declaration

    return report_declaration(session, provider_id=provider.id)
