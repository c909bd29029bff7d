"""The website footer recorded by hand: what the footer shows, copied as text, with a screenshot as evidence.

Where this machine cannot reach the provider's site (or the site hides its footer from scrapers), the
analyst opens it in a browser, copies the footer text and takes a screenshot. The text is read by the same
footer parser as a scraped page (scrapers/footer.py), and the record is stored as the provider's latest
footer evidence (purpose "footer", method "MANUAL", the screenshot as its body), so the footer rules and the
verification status read it exactly as they read a scrape; pages and findings say it was recorded by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from flask_babel import gettext as _
from sqlmodel import Session

from app.core.errors import FieldError, InvalidInput
from app.core.events import EvidenceChanged, publish
from app.credentials.manual_lookups import (
    MAX_NOTE,
    FormReader,
    creation_audit,
    read_by_hand,
    screenshot_evidence,
)
from app.models import AuditEntry, Provider
from app.models.evidence import Evidence
from app.registry.providers import provider_row
from scrapers import footer as footer_parser
from scrapers.http import BadUrl, check_url

FOOTER_HOME = "footer"  # app.credentials.evidence.FOOTER_HOME (not imported: it pulls in the HTTP client)
MAX_FOOTER_TEXT = 4000


def _url(read: FormReader, provider: Provider) -> str:
    value = read.text("url", limit=500) or (provider.website or "")
    if not value:
        read.errors.append(FieldError("url", _("请填写所查看网站的网址（供应商资料中也未登记官网）")))
        return ""
    try:
        return check_url(value)
    except BadUrl as exc:
        read.errors.append(FieldError("url", exc.message))
        return value


def read_footer_entry(values: Mapping[str, Any], provider: Provider, now: datetime) -> dict[str, Any]:
    """The entered footer (url, text, looked_at, note) or InvalidInput naming each bad field."""
    read = FormReader(values)
    url = _url(read, provider)
    text = read.text("footer_text", required=True, limit=MAX_FOOTER_TEXT)
    looked_at = read.looked_at(now)
    note = read.text("note", limit=MAX_NOTE)
    if read.errors:
        raise InvalidInput(read.errors)
    return {"url": url, "text": text, "looked_at": looked_at, "note": note}


def record_footer(
    session: Session,
    *,
    provider_id: int,
    values: Mapping[str, Any],
    screenshot: Any,
    user: Any,
    filename: str | None = None,
) -> Evidence:
    """Store the footer an analyst saw, with its screenshot, as the latest footer evidence; re-check."""
    provider = provider_row(session, provider_id)
    now, entry, body, content_type, (actor_id, actor_name) = read_by_hand(
        lambda now: read_footer_entry(values, provider, now), screenshot, user
    )
    found = footer_parser.parse(entry["text"], entry["url"]).to_dict(full=True)
    manual = {
        "by": actor_name,
        "looked_at": entry["looked_at"].isoformat(),
        "recorded_at": now.isoformat(),
        "text": entry["text"],
        "note": entry["note"],
        "filename": (filename or "")[:200],
    }
    evidence = screenshot_evidence(
        provider_id=provider_id,
        purpose=FOOTER_HOME,
        url=entry["url"],
        body=body,
        content_type=content_type,
        at=now,
        actor=(actor_id, actor_name),
        extracted={**found, "manual": manual},
    )
    session.add(evidence)
    session.flush()
    session.add(_audit_entry(evidence, manual, found, actor_id, actor_name))
    session.commit()
    session.refresh(evidence)
    publish(
        session, EvidenceChanged(provider_id=provider_id, since=now, cause=f"manual footer {evidence.id}")
    )
    return evidence


def _audit_entry(
    evidence: Evidence, manual: dict[str, Any], found: dict[str, Any], actor_id: int | None, actor_name: str
) -> AuditEntry:
    changes = {
        "url": evidence.url,
        "numbers": [item["normalized"] for item in found.get("identifiers", [])],
        "company_name": found.get("company_name"),
        "looked_at": manual["looked_at"],
        "note": manual["note"],
        "evidence_id": evidence.id,
        "sha256": evidence.sha256,
    }
    return creation_audit("footer_record", evidence.id, evidence.provider_id, (actor_id, actor_name), changes)
