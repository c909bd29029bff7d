"""Evidence pages: the provider's "证据" tab, one piece of evidence shown safely, download, captcha images.

Fetched pages are never served as live HTML from this origin: the detail page shows the bytes decoded
and escaped inside <pre>; the download is application/octet-stream as an attachment with nosniff and
a sandboxing CSP; only bytes whose magic says PNG/JPEG/GIF/WebP are served inline, as that image type.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from flask import Response, abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user
from sqlmodel import Session

from app.accounts.auth import role_required
from app.core import clock as localtime
from app.core import jobs
from app.core.db import get_session
from app.core.errors import InvalidInput
from app.core.i18n import current_language
from app.core.limits import parse_id
from app.credentials import evidence as service
from app.credentials import footer_manual, manual_lookups
from app.models import Provider
from app.models.enums import Role
from app.models.evidence import Evidence
from app.models.jobs import Job, JobState
from app.registry import providers as provider_service
from app.web import bp, labels
from app.web.credentials import credentials_panel
from app.web.jobs import job_link, job_view
from app.web.manual_records import render_manual_page, store_by_hand
from app.web.missing import or_404
from app.web.nav import provider_tab
from scrapers.official import sniff_image

FOOTER_JOB = "scrape.footer"
PER_PAGE = 30
PREVIEW_CHARS = 200_000
SANDBOX_CSP = "sandbox; default-src 'none'; img-src 'self'"
TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xhtml+xml",
    "application/xml",
    "application/javascript",
)


def purpose_label(purpose: str) -> str:
    """The purpose in the UI language."""
    zh, en = service.PURPOSES.get(purpose, (purpose, purpose))
    return en if current_language() == "en" else zh


# Why a fetch failed (scrapers.http / scrapers.official error codes), as a short label.
FETCH_ERRORS = {
    "fetch_failed": _l("抓取失败"),
    "bad_url": _l("网址无效"),
    "blocked_address": _l("地址被安全策略拒绝"),
    "timeout": _l("超时"),
    "too_large": _l("内容超过上限"),
    "too_many_redirects": _l("重定向过多"),
    "connection": _l("连接失败"),
    "unreachable": _l("无法连接"),
    "unreachable_dns": _l("无法连接：域名无法解析"),
    "unreachable_refused": _l("无法连接：连接被拒绝"),
    "unreachable_network": _l("无法连接：网络不可达"),
    "failed": _l("查询失败"),
    "wrong_answer": _l("验证码错误"),
    "captcha_expired": _l("验证码已过期"),
    "token_expired": _l("会话已过期"),
    "malformed": _l("回复无法解析"),
    "refused": _l("官方系统拒绝"),
}


@bp.app_template_filter("fetch_error")
def fetch_error_label(code: str | None) -> Any:
    """A fetch's error code as a short label in the UI language (unknown codes as they are)."""
    return FETCH_ERRORS.get(code or "", code or "")


@bp.app_template_filter("purpose")
def _purpose_filter(purpose: str) -> str:
    return purpose_label(purpose)


SHORT_HASH = 12  # hex digits of a SHA-256 shown in references; the evidence page shows all 64


@dataclass(frozen=True)
class EvidenceRef:
    """One evidence reference of a finding as a reader sees it: a linked title and labelled facts."""

    title: Any
    url: str | None = None
    short_hash: str = ""
    full_hash: str = ""
    facts: list[tuple[Any, Any]] = field(default_factory=list)


def _iso_when(text: Any) -> str:
    try:
        return localtime.when(datetime.fromisoformat(str(text)))
    except ValueError:
        return str(text)


def _fetch_ref(item: dict[str, Any]) -> EvidenceRef:
    evidence_id = item.get("evidence_id")
    facts: list[tuple[Any, Any]] = []
    if item.get("url"):
        facts.append((_l("抓取网址"), item["url"]))
    if item.get("fetched_at"):
        facts.append((_l("抓取时间"), _iso_when(item["fetched_at"])))
    sha = str(item.get("sha256") or "")
    return EvidenceRef(
        title=_("证据 #%(id)s", id=evidence_id) if isinstance(evidence_id, int) else _("抓取记录"),
        url=url_for("web.evidence_detail", evidence_id=evidence_id) if isinstance(evidence_id, int) else None,
        short_hash=sha[:SHORT_HASH],
        full_hash=sha,
        facts=facts,
    )


def _registry_ref(item: dict[str, Any]) -> EvidenceRef:
    entity = labels.label(item.get("entity"), "entity")
    title = f"{entity} #{item['id']}" if item.get("id") is not None else str(entity)
    name = str(item.get("field") or "")
    return EvidenceRef(
        title=title, facts=[(labels.field_label(name), labels.value_label(name, item.get("value")))]
    )


def _figure(value: Any, unit: Any) -> str:
    if value is None:
        return "—"
    return f"{labels.number(value) if isinstance(value, (int, float)) else value} {unit or ''}".strip()


def _benchmark_ref(item: dict[str, Any]) -> EvidenceRef:
    run_id = item.get("run_id")
    check = str(item.get("check") or "")
    name, _space, detail = check.partition(" ")
    check_text = f"{labels.label(name, 'bench_check')} {detail}".strip()
    facts: list[tuple[Any, Any]] = [(_l("检查项"), check_text)]
    if item.get("measured") is not None:
        facts.append((_l("实测"), _figure(item["measured"], item.get("unit"))))
    if item.get("claimed") is not None:
        facts.append((_l("标称"), _figure(item["claimed"], item.get("unit"))))
    if isinstance(item.get("ratio"), (int, float)):
        facts.append((_l("实测 / 标称"), f"{item['ratio']:.0%}"))
    if item.get("verdict"):
        facts.append((_l("判定"), labels.label(item["verdict"], "bench_verdict")))
    if item.get("origin"):
        facts.append((_l("来源"), labels.label(item["origin"], "run_origin")))
    return EvidenceRef(
        title=_("测试 #%(id)s", id=run_id) if run_id is not None else _("测试"),
        url=url_for("web.bench_run", run_id=run_id) if isinstance(run_id, int) else None,
        facts=facts,
    )


def _other_ref(item: dict[str, Any]) -> EvidenceRef:
    facts = [
        (OTHER_KEYS.get(key) or labels.field_label(str(key)), labels.value_label(str(key), value))
        for key, value in item.items()
        if key != "kind" and value not in (None, "", [], {})
    ]
    return EvidenceRef(title=EVIDENCE_KINDS.get(item.get("kind"), _l("依据")), facts=facts)


EVIDENCE_KINDS = {"fact_source": _l("核查依据来源"), "manual": _l("人工记录")}
OTHER_KEYS = {"name": _l("来源"), "error": _l("错误"), "note": _l("说明")}


@bp.app_template_global("evidence_refs")
def evidence_refs(items: Any) -> list[EvidenceRef]:
    """A finding's evidence as links and labelled facts (never a raw key: value dump)."""
    shown = []
    for item in items or ():
        if not isinstance(item, dict):
            shown.append(EvidenceRef(title=str(item)))
        elif item.get("evidence_id") is not None or item.get("kind") == "evidence":
            shown.append(_fetch_ref(item))
        elif item.get("kind") == "registry":
            shown.append(_registry_ref(item))
        elif item.get("kind") == "benchmark":
            shown.append(_benchmark_ref(item))
        elif item.get("kind") == "peak_campaign":
            from app.web.campaigns import campaign_ref

            shown.append(campaign_ref(item))
        else:
            shown.append(_other_ref(item))
    return shown


def _footer_jobs(session: Session, provider_id: int) -> list[dict[str, Any]]:
    active = jobs.recent_jobs(
        session, provider_id=provider_id, kind=FOOTER_JOB, states=(JobState.queued, JobState.running), limit=3
    )
    return [job_view(job) for job in active]


def _footer_link(job: Job) -> str | None:
    return url_for("web.provider_evidence", provider_id=job.provider_id) if job.provider_id else None


provider_tab("web.provider_evidence", _l("证据"), order=60)
job_link(FOOTER_JOB, _footer_link)


def _footer_panel(session: Session, provider: Provider) -> dict[str, Any]:
    return {
        "footer": service.footer_facts(session, provider.id),
        "footer_jobs": _footer_jobs(session, provider.id),
    }


credentials_panel("footer", "evidence/_panel.html", context=_footer_panel, order=30)


def _render_tab(provider_id: int, *, url_error: str | None = None, url_value: str | None = None) -> Any:
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=provider_id)
    purpose = request.args.get("purpose", "")
    purposes = (purpose,) if purpose in service.PURPOSES else ()
    page_arg = request.args.get("page", "1")
    page = parse_id(page_arg, 100_000) or 1
    rows, total = service.list_evidence(
        session, provider_id=provider_id, purposes=purposes, page=page, per_page=PER_PAGE
    )
    html = render_template(
        "evidence/tab.html",
        provider=provider,
        rows=rows,
        total=total,
        page=page,
        pages=max(1, -(-total // PER_PAGE)),
        purpose=purposes[0] if purposes else "",
        purposes=service.PURPOSES,
        footer=service.footer_facts(session, provider_id),
        footer_jobs=_footer_jobs(session, provider_id),
        url_error=url_error,
        url_value=url_value if url_value is not None else (provider.website or ""),
    )
    return html, (422 if url_error else 200)


@bp.get("/providers/<int:provider_id>/evidence")
@role_required(Role.viewer)
def provider_evidence(provider_id: int) -> Any:
    """Everything fetched for a provider, newest first, plus the footer scrape and lookup buttons."""
    return _render_tab(provider_id)


@bp.post("/providers/<int:provider_id>/evidence/footer")
@role_required(Role.analyst)
def provider_footer_scrape(provider_id: int) -> Any:
    """Queue a scrape of the provider's website (home + linked about / licence pages)."""
    url = request.form.get("url", "").strip() or None
    try:
        job = service.start_footer_scrape(get_session(), provider_id=provider_id, user=current_user, url=url)
    except InvalidInput as exc:
        return _render_tab(provider_id, url_error=exc.errors[0].message, url_value=url or "")
    if job.state == JobState.failed:
        flash(_("抓取失败：%(error)s", error=job.error or ""), "danger")
    else:
        flash(_("已开始抓取官网页脚"), "success")
    return redirect(request.form.get("next") or url_for("web.provider_evidence", provider_id=provider_id))


def _render_footer_manual(
    provider: Provider, form: Any, errors: dict[str, str] | None = None, status: int = 200
):
    return render_manual_page(
        "evidence/footer_manual.html",
        provider,
        form,
        errors=errors,
        status=status,
        max_text=footer_manual.MAX_FOOTER_TEXT,
    )


@bp.get("/providers/<int:provider_id>/evidence/footer/manual")
@role_required(Role.analyst)
def footer_manual_form(provider_id: int) -> Any:
    """The form to record by hand what the provider's website footer shows, with a screenshot."""
    provider = provider_service.get_provider(get_session(), provider_id=provider_id)
    form = {"url": provider.website or "", "looked_at": manual_lookups.local_now_text()}
    return _render_footer_manual(provider, form)


@bp.post("/providers/<int:provider_id>/evidence/footer/manual")
@role_required(Role.analyst)
def footer_manual_record(provider_id: int) -> Any:
    """Store the footer text and screenshot as the latest footer evidence; the check re-runs on it."""
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=provider_id)
    return store_by_hand(
        lambda screenshot, filename: footer_manual.record_footer(
            session,
            provider_id=provider_id,
            values=request.form,
            screenshot=screenshot,
            filename=filename,
            user=current_user,
        ),
        partial(_render_footer_manual, provider),
        _("已记录页脚，截图已存为证据"),
        url_for("web.provider_credentials", provider_id=provider_id),
    )


def _preview(evidence: Evidence) -> dict[str, Any]:
    """How the detail page shows the bytes: as an image, pretty JSON, escaped text, or not at all."""
    if not evidence.body:
        return {"mode": "empty"}
    if sniff_image(evidence.body):
        return {"mode": "image"}
    content_type = evidence.content_type or ""
    text, encoding = service.body_text(evidence)
    if content_type == "application/json" or content_type.endswith("+json"):
        try:
            pretty = json.dumps(json.loads(evidence.body), ensure_ascii=False, indent=2)
        except ValueError:
            pretty = None
        if pretty is not None:
            return {
                "mode": "text",
                "text": pretty[:PREVIEW_CHARS],
                "cut": len(pretty) > PREVIEW_CHARS,
                "encoding": encoding,
            }
    if content_type.startswith(TEXT_TYPES) or not content_type:
        return {
            "mode": "text",
            "text": text[:PREVIEW_CHARS],
            "cut": len(text) > PREVIEW_CHARS,
            "encoding": encoding,
        }
    return {"mode": "binary"}


@bp.get("/evidence/<int:evidence_id>")
@role_required(Role.viewer)
def evidence_detail(evidence_id: int) -> Any:
    """One piece of evidence: metadata, hash, what was read from it, and its content as escaped text."""
    evidence = or_404(service.get_evidence, evidence_id=evidence_id)
    session = get_session()
    provider = session.get(Provider, evidence.provider_id) if evidence.provider_id else None
    children, _total = (
        service.list_evidence(session, provider_id=evidence.provider_id, per_page=1000)
        if evidence.provider_id
        else ([], 0)
    )
    return render_template(
        "evidence/detail.html",
        evidence=evidence,
        provider=provider,
        preview=_preview(evidence),
        children=[row for row in children if row.parent_id == evidence.id],
        extracted=json.dumps(evidence.extracted, ensure_ascii=False, indent=2)
        if evidence.extracted
        else None,
        headers=json.dumps(evidence.headers, ensure_ascii=False, indent=2) if evidence.headers else None,
    )


def _locked_down(response: Response) -> Response:
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Content-Security-Policy"] = SANDBOX_CSP
    response.headers["Cache-Control"] = "private, no-store"
    return response


@bp.get("/evidence/<int:evidence_id>/download")
@role_required(Role.viewer)
def evidence_download(evidence_id: int) -> Any:
    """The stored bytes as an attachment (never rendered by the browser)."""
    evidence = or_404(service.get_evidence, evidence_id=evidence_id)
    response = Response(evidence.body, mimetype="application/octet-stream")
    name = f"evidence-{evidence.id}-{evidence.sha256[:12]}.bin"
    response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
    return _locked_down(response)


@bp.get("/evidence/<int:evidence_id>/image")
@role_required(Role.viewer)
def evidence_image(evidence_id: int) -> Any:
    """Stored bytes that are a PNG/JPEG/GIF/WebP picture (e.g. a captcha), served as that image type."""
    evidence = or_404(service.get_evidence, evidence_id=evidence_id)
    content_type = sniff_image(evidence.body)
    if content_type is None:
        abort(404)
    return _locked_down(Response(evidence.body, mimetype=content_type))
