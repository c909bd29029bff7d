"""The case's requests for quotes (询价): pick offers (the leading eligible ones ticked), send one link per
provider, and see where each request stands."""

from __future__ import annotations

from typing import Any

from flask import make_response, render_template, request
from flask_login import current_user

from app.accounts.auth import role_required
from app.advice.engine import Advice
from app.cases import cases as case_service
from app.cases import quote_requests as service
from app.core.db import get_session
from app.core.errors import FieldError, InvalidInput
from app.models.enums import Role
from app.web import bp
from app.web.quotes import FORM_OFFERS


def _page(
    case_id: int,
    advice: Advice,
    *,
    chosen: list[str] | None = None,
    sent: list[service.Sent] | None = None,
    errors: list[FieldError] | None = None,
    status: int = 200,
) -> Any:
    session = get_session()
    offers = [
        {
            "id": a.offer.id,
            "provider": a.offer.provider.name,
            "name": a.offer.name or a.offer.gpu_model,
            "gpu": f"{a.offer.gpu_model} × {a.offer.gpus_per_node}",
            "eligible": not a.excluded,
        }
        for a in advice.ranked[:FORM_OFFERS]
    ]
    if chosen is None:
        chosen = [str(offer_id) for offer_id in service.leading_offer_ids(advice)]
    html = render_template(
        "cases/quote_requests.html",
        case=case_service.get_case(session, case_id=case_id),
        offers=offers,
        chosen=set(chosen),
        expires_in_days=request.form.get("expires_in_days", "") if errors else "",
        sent=sent,
        errors=errors or [],
        requests=service.list_requests(session, case_id=case_id),
    )
    response = make_response(html, status)
    response.headers["Cache-Control"] = "private, no-store"  # the page may hold working links
    return response


@bp.get("/cases/<int:case_id>/quote-requests")
@role_required(Role.analyst)
def case_quote_requests(case_id: int) -> Any:
    """The case's offers to ask prices for (the leading eligible ones ticked) and each request's status."""
    return _page(case_id, case_service.advise_case(get_session(), case_id=case_id))


@bp.post("/cases/<int:case_id>/quote-requests")
@role_required(Role.analyst)
def case_quote_requests_send(case_id: int) -> Any:
    """Send one link per provider of the ticked offers; the links are shown this once."""
    session = get_session()
    advice = case_service.advise_case(session, case_id=case_id)
    chosen = request.form.getlist("offer_ids")
    try:
        sent = service.request_quotes(
            session,
            case_id=case_id,
            offer_ids=chosen,
            actor=case_service.Actor(current_user.id, current_user.username),
            expires_in_days=request.form.get("expires_in_days", "").strip() or None,
            advice=advice,
        )
    except InvalidInput as exc:
        session.rollback()
        return _page(case_id, advice, chosen=chosen, errors=exc.errors, status=exc.status)
    return _page(case_id, advice, chosen=[], sent=sent)
