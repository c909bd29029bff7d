"""Quotes on the case page: the comparison table (比价表) and the page to enter a quote by hand."""

from __future__ import annotations

from typing import Any

from flask import flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import role_required
from app.advice.engine import Advice
from app.cases import cases as case_service
from app.cases import quotes as service
from app.core.db import get_session
from app.core.errors import FieldError, InvalidInput
from app.core.request_files import uploaded_file
from app.credentials.manual_lookups import MAX_SCREENSHOT_BYTES
from app.models.enums import Role
from app.models.quotes import QuoteChannel
from app.web import bp, labels
from app.web.forms import FieldSpec, FormSpec, bind, display_values, enum_choices, parse_form, split_errors

# Offers offered in the form's list, best ranked first.
FORM_OFFERS = 500
# How a quote entered by hand arrived (a link's quote is sent by the provider itself).
HAND_CHANNELS = {key: text for key, text in labels.QUOTE_CHANNEL.items() if key != QuoteChannel.link}


QUOTE_FORM = FormSpec(
    "quote",
    service.QuoteInput,
    (
        FieldSpec("offer_id", "select", lambda offers: offers, blank=_l("（请选择）"), width=8),
        FieldSpec("received_via", "select", enum_choices(HAND_CHANNELS), width=4),
        FieldSpec("price_gpu_hour_cny", "decimal", width=4, help=_l("人民币元；单价与月价至少填一项")),
        FieldSpec("price_month_cny", "decimal", width=4, help=_l("人民币元，按本案全部 GPU 计")),
        FieldSpec("min_term_months", "number", width=4),
        FieldSpec("delivery_on", "date", width=4),
        FieldSpec("valid_until", "date", width=4),
        FieldSpec("bandwidth_type", "select", enum_choices(labels.BANDWIDTH_TYPE), width=4),
        FieldSpec("sla_availability_pct", "decimal", width=4, help=_l("如 99.9")),
        FieldSpec("sla_compensation", width=8),
        *(FieldSpec(name, "checkbox", width=3) for name in service.YES_NO),
        FieldSpec("notes", "textarea", width=12),
    ),
)


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
