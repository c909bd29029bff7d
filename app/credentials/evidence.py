"""Evidence: every fetch kept as received (immutable), the footer scrape, and the "footer" fact.

Evidence rows are committed as soon as they are made, so a later failure (or a job that ends in an
error, which rolls back its session) loses nothing that was fetched.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from flask_babel import gettext as _
from sqlalchemy.orm import defer
from sqlmodel import Session, col, select

from app.core.errors import InvalidInput
from app.core.events import EvidenceChanged, publish
from app.core.i18n import localized
from app.core.jobs import background, enqueue, job_result_outcome
from app.core.records import get_or_404
from app.credentials.facts import fact_source
from app.models import Provider
from app.models.evidence import MANUAL_METHOD, Evidence
from app.models.jobs import Job
from scrapers import charset
from scrapers import footer as footer_scraper
from scrapers.http import BadUrl, FetchError, FetchResult, HttpClient, HttpPolicy, check_url

logger = logging.getLogger(__name__)

Actor = tuple[int | None, str]

FOOTER_HOME = "footer"
FOOTER_PAGE = "footer_page"
CAPTCHA_IMAGE = "captcha_image"
#: Purpose -> (Chinese, English) label, for pages and filters.
PURPOSES: dict[str, tuple[str, str]] = {
    FOOTER_HOME: ("官网首页", "website home page"),
    FOOTER_PAGE: ("官网链接页", "linked website page"),
    "icp_auth": ("备案系统：令牌", "ICP system: token"),
    "icp_captcha": ("备案系统：验证码", "ICP system: captcha"),
    "icp_check": ("备案系统：验证答案", "ICP system: captcha check"),
    "icp_query": ("备案系统：查询结果", "ICP system: query result"),
    "licence_captcha": ("许可证系统：验证码", "licence system: captcha"),
    "licence_query": ("许可证系统：查询结果", "licence system: query result"),
    CAPTCHA_IMAGE: ("验证码图片", "captcha image"),
    "lookup_manual": ("人工查询截图", "lookup recorded by hand: screenshot"),
    "quote_scan": ("报价单扫描件", "quote: signed scan"),
    "disclosure": ("供应商上传（尽调问卷）", "uploaded by the provider (questionnaire)"),
}


# ------------------------------------------------------------------------------------------------ HTTP client
def policy_from_settings(settings: Any) -> HttpPolicy:
    """The HTTP limits and allow-lists configured in Settings (allow lists as edited on the settings page)."""
    from app.core.runtime_settings import effective

    settings = effective(settings)
    values: dict[str, Any] = {
        "connect_timeout": settings.fetch_connect_timeout_s,
        "read_timeout": settings.fetch_read_timeout_s,
        "total_timeout": settings.fetch_total_timeout_s,
        "max_bytes": settings.fetch_max_bytes,
        "retries": settings.fetch_retries,
        "min_interval": settings.fetch_min_interval_s,
        "allow_cidrs": tuple(settings.fetch_allow_cidrs),
        "allow_hosts": tuple(settings.fetch_allow_hosts),
    }
    if settings.fetch_user_agent:
        values["user_agent"] = settings.fetch_user_agent
    return HttpPolicy(**values)


def http_client(settings: Any) -> HttpClient:
    """A new HttpClient for the configured policy (close it when done)."""
    return HttpClient(policy_from_settings(settings))


# ------------------------------------------------------------------------------------------------ recording
def _store(session: Session, evidence: Evidence) -> Evidence:
    session.add(evidence)
    session.commit()
    return evidence


def _origin(
    purpose: str,
    provider_id: int | None,
    actor: Actor,
    *,
    job_id: int | None,
    lookup_id: int | None,
    parent_id: int | None,
) -> dict[str, Any]:
    """The columns saying what a stored exchange was for, what it belongs to and who started it."""
    return {
        "provider_id": provider_id,
        "purpose": purpose,
        "parent_id": parent_id,
        "lookup_id": lookup_id,
        "job_id": job_id,
        "triggered_by_id": actor[0],
        "triggered_by_name": actor[1],
    }


def record_result(
    session: Session,
    *,
    result: FetchResult,
    purpose: str,
    provider_id: int | None,
    actor: Actor,
    job_id: int | None = None,
    lookup_id: int | None = None,
    parent_id: int | None = None,
    extracted: Any = None,
    error: Exception | None = None,
) -> Evidence:
    """Store one exchange as evidence (with the error it ended in, if any) and commit."""
    return _store(
        session,
        Evidence(
            method=result.method,
            url=result.url,
            final_url=result.final_url,
            status=result.status,
            content_type=result.content_type[:120],
            headers=result.headers,
            redirects=list(result.redirects),
            peer=result.peer[:64],
            sha256=result.sha256,
            size=len(result.body),
            truncated=result.truncated,
            body=result.body,
            fetched_at=result.fetched_at,
            elapsed_ms=int(result.elapsed * 1000),
            error_code=getattr(error, "code", None) if error else None,
            error=str(error) if error else None,
            extracted=extracted,
            **_origin(purpose, provider_id, actor, job_id=job_id, lookup_id=lookup_id, parent_id=parent_id),
        ),
    )


def record_failure(
    session: Session,
    *,
    url: str,
    method: str,
    error: FetchError,
    purpose: str,
    provider_id: int | None,
    actor: Actor,
    job_id: int | None = None,
    lookup_id: int | None = None,
    parent_id: int | None = None,
) -> Evidence:
    """Store a fetch that failed: with what did arrive (e.g. the capped bytes), or just the error."""
    common = {
        "purpose": purpose,
        "provider_id": provider_id,
        "actor": actor,
        "job_id": job_id,
        "lookup_id": lookup_id,
        "parent_id": parent_id,
    }
    if error.result is not None:
        return record_result(session, result=error.result, error=error, **common)
    return _store(
        session,
        Evidence(
            method=method,
            url=url,
            final_url=url,
            sha256=hashlib.sha256(b"").hexdigest(),
            error_code=error.code,
            error=localized(error.message),
            **_origin(purpose, provider_id, actor, job_id=job_id, lookup_id=lookup_id, parent_id=parent_id),
        ),
    )


def record_blob(
    session: Session, *, parent: Evidence, name: str, data: bytes, content_type: str, purpose: str
) -> Evidence:
    """Store bytes taken out of a stored reply (e.g. a captcha picture) as evidence derived from it."""
    return _store(
        session,
        Evidence(
            provider_id=parent.provider_id,
            purpose=purpose,
            method=parent.method,
            url=f"{parent.url}#{name}",
            final_url=f"{parent.final_url}#{name}",
            status=parent.status,
            content_type=content_type,
            sha256=hashlib.sha256(data).hexdigest(),
            size=len(data),
            body=data,
            fetched_at=parent.fetched_at,
            parent_id=parent.id,
            lookup_id=parent.lookup_id,
            job_id=parent.job_id,
            triggered_by_id=parent.triggered_by_id,
            triggered_by_name=parent.triggered_by_name,
        ),
    )


@dataclass
class Recorder:
    """A fetch function for the official-lookup clients that stores every exchange as evidence."""

    session: Session
    client: HttpClient
    provider_id: int | None
    actor: Actor
    job_id: int | None = None
    lookup_id: int | None = None

    def __post_init__(self) -> None:
        self.rows: list[Evidence] = []

    def __call__(
        self,
        url: str,
        *,
        method: str = "GET",
        data: dict[str, Any] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
        purpose: str,
    ) -> FetchResult:
        """Fetch through the client and store the exchange (or the failure); re-raise failures."""
        common = {
            "purpose": purpose,
            "provider_id": self.provider_id,
            "actor": self.actor,
            "job_id": self.job_id,
            "lookup_id": self.lookup_id,
        }
        try:
            result = self.client.fetch(url, method=method, data=data, json=json, headers=headers)
        except FetchError as exc:
            self.rows.append(record_failure(self.session, url=url, method=method, error=exc, **common))
            raise
        self.rows.append(record_result(self.session, result=result, **common))
        return result

    def last(self, purpose: str) -> Evidence | None:
        """The latest row stored for a purpose."""
        return next((row for row in reversed(self.rows) if row.purpose == purpose), None)


# ------------------------------------------------------------------------------------------------ reading
def get_evidence(session: Session, *, evidence_id: int, with_body: bool = True) -> Evidence:
    """One piece of evidence (its bytes loaded unless with_body is False), or NotFound."""
    options = [] if with_body else [defer(Evidence.body)]  # type: ignore[arg-type]
    return get_or_404(
        session,
        Evidence,
        evidence_id,
        _("证据 %(id)s 不存在", id=evidence_id),
        field="evidence_id",
        options=options,
    )


def list_evidence(
    session: Session,
    *,
    provider_id: int,
    purposes: Iterable[str] = (),
    page: int = 1,
    per_page: int = 50,
) -> tuple[list[Evidence], int]:
    """A provider's evidence newest first (bytes not loaded) and the total count."""
    if page < 1:
        raise InvalidInput(_("页码须为正整数"), field="page")
    where = [Evidence.provider_id == provider_id]
    purposes = tuple(purposes)
    if purposes:
        where.append(col(Evidence.purpose).in_(purposes))
    total = session.exec(select(sa.func.count()).select_from(Evidence).where(*where)).one()
    rows = session.exec(
        select(Evidence)
        .where(*where)
        .options(defer(Evidence.body))  # type: ignore[arg-type]
        .order_by(col(Evidence.fetched_at).desc(), col(Evidence.id).desc())
        .offset((page - 1) * per_page)
        .limit(per_page)
    ).all()
    return list(rows), int(total)


def evidence_ref(evidence: Evidence) -> dict[str, Any]:
    """The reference findings carry: which fetch, of what, when, with which hash."""
    fetched = evidence.fetched_at
    return {
        "kind": "evidence",
        "evidence_id": evidence.id,
        "url": evidence.final_url or evidence.url,
        "sha256": evidence.sha256,
        "fetched_at": fetched.isoformat() if fetched else None,
    }


def body_text(evidence: Evidence) -> tuple[str, str]:
    """The stored bytes decoded for showing as text: (text, encoding)."""
    return charset.decode(evidence.body, evidence.headers.get("content-type") or evidence.content_type)


# ------------------------------------------------------------------------------------------------ footer
def _provider(session: Session, provider_id: int) -> Provider:
    return get_or_404(
        session, Provider, provider_id, _("供应商 %(id)s 不存在", id=provider_id), field="provider_id"
    )


def footer_url(provider: Provider, url: str | None = None) -> str:
    """The URL to scrape: the one given, else the provider's registered website; InvalidInput if none."""
    url = (url or provider.website or "").strip()
    if not url:
        raise InvalidInput(
            _("该供应商未登记官网网址，请先在供应商资料中填写网址"),
            field="url",
        )
    try:
        return check_url(url)
    except BadUrl as exc:
        raise InvalidInput(exc.message, field="url") from None


def scrape_footer(
    session: Session,
    *,
    provider_id: int,
    client: HttpClient,
    actor: Actor,
    url: str | None = None,
    job_id: int | None = None,
) -> dict[str, Any]:
    """Fetch the provider's site (home + linked about/licence pages), store each page, return the merge."""
    provider = _provider(session, provider_id)
    url = footer_url(provider, url)
    stored: list[Evidence] = []

    def on_page(outcome: footer_scraper.PageOutcome) -> None:
        purpose = FOOTER_HOME if not stored else FOOTER_PAGE
        common = {
            "purpose": purpose,
            "provider_id": provider_id,
            "actor": actor,
            "job_id": job_id,
            "parent_id": stored[0].id if stored else None,
        }
        extracted = outcome.footer.to_dict(full=True) if outcome.footer else None
        if outcome.result is not None:
            row = record_result(
                session, result=outcome.result, extracted=extracted, error=outcome.error, **common
            )
        else:
            error = outcome.error if isinstance(outcome.error, FetchError) else FetchError(str(outcome.error))
            row = record_failure(session, url=outcome.url, method="GET", error=error, **common)
        stored.append(row)

    site = footer_scraper.scrape_site(url, client.fetch, on_page=on_page)
    home = site.pages[0]
    if stored:
        publish(
            session,
            EvidenceChanged(provider_id=provider_id, since=stored[-1].fetched_at, cause="footer scrape"),
        )
    return {
        "ok": home.error is None,
        "error": str(home.error) if home.error else None,
        "evidence_ids": [row.id for row in stored],
        **site.merged.to_dict(),
    }


def _latest_home(session: Session, provider_id: int) -> Evidence | None:
    return session.exec(
        select(Evidence)
        .where(Evidence.provider_id == provider_id, Evidence.purpose == FOOTER_HOME)
        .options(defer(Evidence.body))  # type: ignore[arg-type]
        .order_by(col(Evidence.fetched_at).desc(), col(Evidence.id).desc())
        .limit(1)
    ).first()


def _footer_pages(session: Session, home: Evidence) -> list[Evidence]:
    children = session.exec(
        select(Evidence)
        .where(Evidence.parent_id == home.id, Evidence.purpose == FOOTER_PAGE)
        .options(defer(Evidence.body))  # type: ignore[arg-type]
        .order_by(col(Evidence.id))
    ).all()
    return [home, *children]


def footer_facts(session: Session, provider_id: int) -> dict[str, Any] | None:
    """The latest footer scrape of a provider: numbers and company name, each with its evidence."""
    home = _latest_home(session, provider_id)
    if home is None:
        return None
    return footer_fact_of(_footer_pages(session, home))


def footer_fact_of(pages: list[Evidence]) -> dict[str, Any]:
    """The "footer" fact built from a scrape's stored pages (home first, then the pages it followed)."""
    home = pages[0]
    refs = [evidence_ref(page) for page in pages]
    if home.error or not home.extracted:
        return {
            "ok": False,
            "url": home.url,
            "error": home.error or "",
            "error_code": home.error_code or "",
            "evidence": refs,
            "identifiers": [],
            "company_name": None,
        }
    found: dict[tuple[str, str], dict[str, Any]] = {}
    company: tuple[str, dict[str, Any]] | None = None
    for page, ref in zip(pages, refs, strict=True):
        extracted = page.extracted or {}
        for item in extracted.get("identifiers", []):
            key = (item["kind"], item["normalized"])
            found.setdefault(key, {**item, "url": ref["url"], "evidence": ref})
        if company is None and extracted.get("company_name"):
            company = (extracted["company_name"], ref)
    return {
        "ok": True,
        "url": home.url,
        "manual": _manual_note(home),
        "fetched_at": refs[0]["fetched_at"],
        "evidence": refs,
        "identifiers": list(found.values()),
        "company_name": company[0] if company else None,
        "company_name_evidence": company[1] if company else None,
    }


def _manual_note(home: Evidence) -> dict[str, Any] | None:
    """Who recorded a footer by hand and when they looked (app.credentials.footer_manual), else None."""
    manual = (home.extracted or {}).get("manual") if home.method == MANUAL_METHOD else None
    return (
        {"by": manual.get("by"), "looked_at": manual.get("looked_at")} if isinstance(manual, dict) else None
    )


@fact_source("footer")
def _footer_fact(session: Session, provider: Any) -> dict[str, Any] | None:
    return footer_facts(session, provider.id)


def start_footer_scrape(session: Session, *, provider_id: int, user: Any, url: str | None = None) -> Job:
    """Check the URL now, then queue the scrape as a background job."""
    url = footer_url(_provider(session, provider_id), url)
    return enqueue(
        session,
        kind="scrape.footer",
        params={"provider_id": provider_id, "url": url},
        user=user,
        provider_id=provider_id,
    )


@background("scrape.footer", title_zh="抓取官网页脚", title_en="Scrape website footer", idempotent=True)
def _scrape_footer_job(
    session: Session, job: Job, *, provider_id: int, url: str | None = None
) -> dict[str, Any]:
    from flask import current_app

    with http_client(current_app.config["GPUVET_SETTINGS"]) as client:
        result = scrape_footer(
            session,
            provider_id=provider_id,
            client=client,
            actor=(job.created_by_id, job.created_by_name),
            url=url,
            job_id=job.id,
        )
    if not result.get("ok"):
        reason = result.get("error") or ""
        result |= job_result_outcome(
            "failed", f"未能抓取官网首页：{reason}", f"The website's home page could not be fetched: {reason}"
        )
    return result
