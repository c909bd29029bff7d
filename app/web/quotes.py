"""Quotes on the case page: the comparison table (比价表) and the page to enter a quote by hand."""

from __future__ import annotations

from typing import Any

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import role_required
from app.advice import useful_hours as useful
from app.advice.engine import Advice
from app.advice.facts import SOURCE_LABELS
from app.advice.ranking.assessment import Assessment
from app.advice.ranking.claims import effective_intranet
from app.advice.ranking.figures import storage_figures
from app.advice.ranking.run import context
from app.cases import cases as case_service
from app.cases import quotes as service
from app.core import clock
from app.core.db import get_session
from app.core.errors import FieldError, InvalidInput
from app.core.request_files import uploaded_file
from app.credentials.manual_lookups import MAX_SCREENSHOT_BYTES
from app.models.enums import BandwidthType, Role
from app.models.quotes import QuoteChannel
from app.web import bp, labels
from app.web.forms import FieldSpec, FormSpec, bind, display_values, parse_form, split_errors

# At least this many providers with a valid quote, else a single-source justification is needed (三家比价).
COMPARED_PROVIDERS = 3
# Offers offered in the form's list, best ranked first.
FORM_OFFERS = 500
# The quote's yes/no facts: what the price includes and whether a trial server is lent.
YES_NO = ("includes_public_bandwidth", "includes_storage", "includes_support", "trial_server_lent")
# The quote's own rows of the comparison, shown as stored (labels and units from the vocabulary).
QUOTE_ROWS = (
    "price_gpu_hour_cny",
    "price_month_cny",
    "min_term_months",
    "delivery_on",
    "sla_availability_pct",
    "sla_compensation",
    "bandwidth_type",
    *YES_NO,
    "received_via",
)


def _choices(field: str, values: Any) -> Any:
    return lambda _context: [(value.value, labels.value_label(field, value.value)) for value in values]


QUOTE_FORM = FormSpec(
    "quote",
    service.QuoteInput,
    (
        FieldSpec("offer_id", "select", lambda offers: offers, blank=_l("（请选择）"), width=8),
        FieldSpec("received_via", "select", _choices("received_via", QuoteChannel), width=4),
        FieldSpec("price_gpu_hour_cny", "decimal", width=4, help=_l("人民币元；单价与月价至少填一项")),
        FieldSpec("price_month_cny", "decimal", width=4, help=_l("人民币元，按本案全部 GPU 计")),
        FieldSpec("min_term_months", "number", width=4),
        FieldSpec("delivery_on", "date", width=4),
        FieldSpec("valid_until", "date", width=4),
        FieldSpec("bandwidth_type", "select", _choices("bandwidth_type", BandwidthType), width=4),
        FieldSpec("sla_availability_pct", "decimal", width=4, help=_l("如 99.9")),
        FieldSpec("sla_compensation", width=8),
        *(FieldSpec(name, "checkbox", width=3) for name in YES_NO),
        FieldSpec("notes", "textarea", width=12),
    ),
)


def _figure(value: Any, source: str) -> dict[str, Any]:
    """A figure with its source in both languages (what the source badge shows)."""
    zh, en = SOURCE_LABELS[source]
    return {"value": value, "source": source, "source_zh": zh, "source_en": en}


def _offer_figures(a: Assessment, ctx: Any) -> tuple[useful.Figure, useful.Figure, bool]:
    """The intranet and write figures the advice judges the offer on, and whether the intranet is RDMA."""
    value, source, _effective, transport = effective_intranet(a.offer, ctx)
    _iops, (write, write_source) = storage_figures(a.offer, ctx.typical_storage)
    return useful.Figure(value, source), useful.Figure(write, write_source), transport != "tcp"


def _useful_hours(quote: Any, a: Assessment | None, ctx: Any, workload: useful.Workload) -> dict[str, Any]:
    """The offer's figures and the quote's price per useful GPU-hour with its arithmetic in both languages."""
    if a is None:
        return {"missing": _("该套餐已不在登记中，无法计算")}
    intranet, write, rdma = _offer_figures(a, ctx)
    figures = {
        "intranet": _figure(intranet.value, intranet.source),
        "write": _figure(write.value, write.source),
    }
    price = useful.Price(quote.price_gpu_hour_cny, quote.price_month_cny)
    try:
        result = useful.useful_hours(workload, price, intranet, write, rdma=rdma)
    except ValueError:
        return {**figures, "missing": _("缺少内网带宽或写入速率，无法计算")}
    return {
        **figures,
        "value": result.price_per_useful_gpu_hour_cny,
        "share": result.useful_share,
        "explanation_zh": result.explanation("zh"),
        "explanation_en": result.explanation("en"),
    }


def _assessments(advice: Advice, quotes: list[Any]) -> dict[int, Assessment]:
    """The advice's assessment of each quoted offer that is still in the registry, by offer id."""
    found: dict[int, Assessment] = {}
    for provider_id in {quote.provider_id for quote in quotes}:
        for a in advice.ranked.of_provider(provider_id):
            found[a.offer.id] = a
    return {quote.offer_id: found[quote.offer_id] for quote in quotes if quote.offer_id in found}


def _offer_dicts(
    advice: Advice, assessed: dict[int, Assessment], shown: list[dict[str, Any]]
) -> dict[int, Any]:
    """The advice's dict (with its verdict) of each quoted offer: the page's own, else made for it."""
    offers = {offer["offer_id"]: offer for offer in shown if offer["offer_id"] in assessed}
    missing = [a for offer_id, a in assessed.items() if offer_id not in offers]
    offers.update((a.offer.id, offer) for a, offer in zip(missing, advice.offer_dicts(missing), strict=True))
    return offers


def comparison(
    session: Any, *, case_id: int, advice: Advice, shown: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """One column per quote (latest entered first) and whether a single source must be justified; `shown`:
    the offer dicts the page already has (their verdicts are not read again)."""
    quotes = service.list_quotes(session, case_id=case_id)
    names = service.provider_names(session, quotes)
    today = clock.business_today()
    assessed = _assessments(advice, quotes)
    offers = _offer_dicts(advice, assessed, shown or [])
    ctx = context(advice.needs, today)
    workload = useful.Workload.of_case(advice.answers, advice.needs)
    columns = [
        {
            "quote": service.quote_dict(quote, names.get(quote.provider_id, ""), today),
            "offer": offers.get(quote.offer_id),
            "useful": _useful_hours(quote, assessed.get(quote.offer_id), ctx, workload),
        }
        for quote in quotes
    ]
    valid = {column["quote"]["provider_id"] for column in columns if not column["quote"]["expired"]}
    return {
        "columns": columns,
        "rows": QUOTE_ROWS,
        "valid_providers": len(valid),
        "single_source": len(valid) < COMPARED_PROVIDERS,
    }


def _offer_choices(advice: Advice) -> list[tuple[str, str]]:
    """The offers to quote, as the case ranks them (eligible ones first)."""
    return [
        (str(a.offer.id), f"{a.offer.provider.name} · {a.offer.name or a.offer.gpu_model}")
        for a in advice.ranked[:FORM_OFFERS]
    ]


def _render_form(
    case: Any, advice: Advice, values: dict[str, Any], errors: list[FieldError], status: int
) -> Any:
    scan_errors = [error.message for error in errors if error.field == service.SCAN_FIELD]
    by_field, general = split_errors(QUOTE_FORM, [e for e in errors if e.field != service.SCAN_FIELD])
    html = render_template(
        "cases/quote_form.html",
        case=case,
        fields=bind(QUOTE_FORM, values, by_field, _offer_choices(advice)),
        general_errors=general,
        scan_errors=scan_errors,
        max_mb=MAX_SCREENSHOT_BYTES // (1024 * 1024),
    )
    return html, status


@bp.route("/cases/<int:case_id>/quotes/new", methods=["GET", "POST"])
@role_required(Role.analyst)
def case_quote_new(case_id: int) -> Any:
    """Enter a quote received by e-mail or phone, with the scan of the signed quote."""
    session = get_session()
    case = case_service.get_case(session, case_id=case_id)
    advice = case_service.advise_case(session, case_id=case_id)
    if request.method == "GET":
        values = display_values(
            QUOTE_FORM, {**QUOTE_FORM.defaults(), "offer_id": request.args.get("offer_id")}
        )
        return _render_form(case, advice, values, [], 200)
    data = parse_form(QUOTE_FORM, request.form)
    scan, filename = uploaded_file(service.SCAN_FIELD, MAX_SCREENSHOT_BYTES)
    try:
        service.create_quote(
            session, case_id=case_id, values=data, scan=scan, user=current_user, filename=filename
        )
    except InvalidInput as exc:
        session.rollback()
        return _render_form(case, advice, display_values(QUOTE_FORM, data), exc.errors, exc.status)
    flash(_("报价已录入"), "success")
    return redirect(url_for("web.case_detail", case_id=case_id, _anchor="quotes"))
