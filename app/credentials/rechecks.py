"""Re-run the credential check when new evidence lands (footer scrape, official lookup, benchmark run or
upload), so the stored verdict always includes it: producers publish app.core.events.EvidenceChanged and
this module, subscribed to it, re-checks; no producer imports it.

Idempotent: evidence that finished at `since` triggers no new run when a check run already started at or
after that moment. Never raises: a failed re-check is logged and rolled back, and the job or request that
brought the evidence keeps its own outcome.
"""

from __future__ import annotations

import logging
from datetime import datetime

from sqlmodel import Session

from app.core.clock import aware
from app.core.events import EvidenceChanged, subscribe
from app.models.checks import CheckRun

logger = logging.getLogger(__name__)


def recheck(
    session: Session, *, provider_id: int | None, since: datetime | None, cause: str
) -> CheckRun | None:
    """A new check run of the provider, unless one was made after `since` (None: skipped or failed)."""
    if provider_id is None:
        return None
    from app.credentials import checks

    try:
        latest = checks.latest_check(session, provider_id=provider_id)
        landed = aware(since)
        if latest is not None and landed is not None and aware(latest.created_at) >= landed:
            return None
        return checks.run_check(session, provider_id=provider_id)
    except Exception:  # the evidence is stored; the verdict catches up at the next check
        logger.exception("re-check of provider %s after %s failed", provider_id, cause)
        session.rollback()
        return None


@subscribe(EvidenceChanged)
def recheck_on_evidence(session: Session, event: EvidenceChanged) -> CheckRun | None:
    """The re-check an EvidenceChanged event asks for."""
    return recheck(session, provider_id=event.provider_id, since=event.since, cause=event.cause)
