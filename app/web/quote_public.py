"""The provider's quote page at /q/<token>: its own case's requirements, its requested offers, one quote.

Like the questionnaire's link (app.web.disclosure_public): no account, Chinese first, English on request; a
wrong, expired or revoked token gets the same plain 404 page, and wrong tokens are counted per address.
After the quote is sent the link shows thanks only.
"""

from __future__ import annotations

from typing import Any

from flask import Response, make_response, redirect, render_template, request, url_for
from sqlmodel import Session

from app.cases import quote_requests as service
from app.cases.quotes import QuoteInput
from app.core.db import get_session
from app.core.errors import FieldError, InvalidInput
from app.core.request_files import uploaded_file
from app.credentials.manual_lookups import MAX_SCREENSHOT_BYTES
from app.models.disclosure import Invitation, InvitationStatus
from app.web import bp
from app.web.disclosure_public import _address, _invitation, _private
from app.web.forms import FormSpec, bind, display_values, parse_form, split_errors
from app.web.quotes import QUOTE_FORM

# The hand-entry form's inputs, less the channel (a link's quote came through the link).
LINK_FORM = FormSpec(
    "quote_link", QuoteInput, tuple(spec for spec in QUOTE_FORM.fields if spec.name != "received_via")
)


def _thanks(invitation: Invitation) -> Response:
    return _private(make_response(render_template("quote_link/thanks.html", invitation=invitation)))


def _page(
    session: Session, token: str, invitation: Invitation, values: dict[str, Any], errors: list[FieldError]
) -> Response:
    offers = service.requested_offers(session, invitation)
    scan_errors = [error.message for error in errors if error.field == "scan"]
    by_field, general = split_errors(LINK_FORM, [error for error in errors if error.field != "scan"])
    html = render_template(
        "quote_link/form.html",
        token=token,
        invitation=invitation,
        requirements=service.requirements(session, invitation),
        offers=offers,
        fields=bind(LINK_FORM, values, by_field, [(str(offer_id), name) for offer_id, name in offers]),
        general_errors=general,
        scan_errors=scan_errors,
        max_mb=MAX_SCREENSHOT_BYTES // (1024 * 1024),
        lang_next=request.path,
    )
    return _private(make_response(html, 422 if errors else 200))


@bp.route("/q/<token>", methods=["GET", "POST"])
def quote_form_page(token: str) -> Any:
    """Show the request and its form, or take the quote (once)."""
    session = get_session()
    found = _invitation(session, token, service.PURPOSE)
    if isinstance(found, Response):
        return found
    invitation = found
    if invitation.status == InvitationStatus.submitted.value:
        return _thanks(invitation)
    if request.method == "GET":
        service.record_view(session, invitation, address=_address())
        offers = service.requested_offers(session, invitation)
        first = str(offers[0][0]) if len(offers) == 1 else ""
        values = display_values(LINK_FORM, {**LINK_FORM.defaults(), "offer_id": first})
        return _page(session, token, invitation, values, [])
    data = parse_form(LINK_FORM, request.form)
    scan, filename = uploaded_file("scan", MAX_SCREENSHOT_BYTES)
    try:
        service.submit_quote(
            session, invitation, values=data, scan=scan, filename=filename, address=_address()
        )
    except InvalidInput as exc:
        return _page(session, token, invitation, display_values(LINK_FORM, data), exc.errors)
    return _private(redirect(url_for("web.quote_form_page", token=token), 303))  # reloading asks nothing
