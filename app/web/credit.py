"""Enterprise credit (企业信用) pages: the form to record what gsxt, 信用中国 or the court site showed,
and the summary beside the legal identity on the credentials tab (template global `credit_summary`)."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from flask import request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import role_required
from app.core.db import get_session
from app.core.i18n import current_language
from app.credentials import credit as service
from app.credentials import manual_lookups, verification
from app.models import Provider
from app.models.enums import Role
from app.registry import providers as provider_service
from app.web import bp
from app.web.manual_records import render_manual_page, store_by_hand

SOURCE_LABELS = {
    "gsxt": _l("国家企业信用信息公示系统"),
    "creditchina": _l("信用中国"),
    "zxgk": _l("中国执行信息公开网（法院）"),
}
CURRENCY_LABELS = {
    "CNY": _l("人民币"),
    "USD": _l("美元"),
    "HKD": _l("港元"),
    "EUR": _l("欧元"),
    "JPY": _l("日元"),
    "GBP": _l("英镑"),
}
VERIFICATION_COLOURS = {
    verification.UNVERIFIED: "secondary",
    verification.VERIFIED: "success",
    verification.BY_HAND: "success",
    verification.CONTRADICTED: "danger",
    verification.EXPIRED: "warning",
}
BLANK_ENFORCEMENT_ROWS = 3


@bp.app_template_global("credit_summary")
def credit_summary(provider: Provider) -> dict[str, Any]:
    """What the credentials tab shows beside the legal identity: capital, founding date, status, flags."""
    session = get_session()
    records = service.list_records(session, provider_id=provider.id, limit=5)
    return {
        "identity": service.identity_facts(session, provider),
        "verification": _timed(service.credit_verification(session, provider.id), "at"),
        "records": [_timed(service.record_dict(record), "looked_at") for record in records],
        "source_labels": SOURCE_LABELS,
        "currency_labels": CURRENCY_LABELS,
        "verification_label": _verification_label,
        "verification_colours": VERIFICATION_COLOURS,
        "alive": service.ALIVE_STATUSES,
    }


def _verification_label(status: str) -> str:
    """A verification status in the UI language (the per-item vocabulary's labels)."""
    zh, en = verification.STATUSES[status]
    return en if current_language() == "en" else zh


def _timed(data: dict[str, Any], key: str) -> dict[str, Any]:
    """`data` with its ISO time under `key` read back as a datetime, for the `when` filter."""
    value = data.get(key)
    return {**data, key: datetime.fromisoformat(value) if value else None}


def _enforcement_rows(form: Any) -> list[dict[str, str]]:
    """The entered enforcement rows, then blank ones to fill in."""
    rows = service.enforcements_from_form(form) if hasattr(form, "getlist") else []
    return rows + [{"amount_cny": "", "filed_on": "", "court": ""}] * BLANK_ENFORCEMENT_ROWS


def _render_form(
    provider: Provider, form: Any, *, errors: dict[str, str] | None = None, status: int = 200
) -> Any:
    return render_manual_page(
        "credit/manual.html",
        provider,
        form,
        errors=errors,
        status=status,
        enforcement_rows=_enforcement_rows(form),
        sources=SOURCE_LABELS,
        statuses=service.REGISTRATION_STATUSES,
        currencies=CURRENCY_LABELS,
        sites=service.OFFICIAL_SITES,
    )


@bp.get("/providers/<int:provider_id>/credit/manual")
@role_required(Role.analyst)
def credit_manual_form(provider_id: int) -> Any:
    """The form to record what a credit system showed (?source=gsxt|creditchina|zxgk)."""
    provider = provider_service.get_provider(get_session(), provider_id=provider_id)
    source = request.args.get("source", "")
    form = {
        "source": source if source in SOURCE_LABELS else "gsxt",
        "uscc": provider.uscc or "",
        "capital_currency": "CNY",
        "looked_at": manual_lookups.local_now_text(),
    }
    return _render_form(provider, form)


@bp.post("/providers/<int:provider_id>/credit/manual")
@role_required(Role.analyst)
def credit_manual_record(provider_id: int) -> Any:
    """Store the record and its screenshot as evidence; back to the credentials tab, which shows it."""
    session = get_session()
    provider = provider_service.get_provider(session, provider_id=provider_id)
    return store_by_hand(
        lambda screenshot, filename: service.record_manual(
            session,
            provider_id=provider_id,
            values=request.form,
            enforcements=service.enforcements_from_form(request.form),
            screenshot=screenshot,
            filename=filename,
            user=current_user,
        ),
        partial(_render_form, provider),
        _("已记录企业信用查询结果，截图已存为证据"),
        url_for("web.provider_credentials", provider_id=provider_id) + "#credit",
    )
