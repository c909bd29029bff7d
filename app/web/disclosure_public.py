"""The provider's questionnaire at /d/<token>: no account, no JavaScript, Chinese first, English on request.

Only the invitation's own token opens it; a wrong, expired or revoked token gets the same plain page, and
wrong tokens are counted per client address (too many: 429 for a while).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Response, abort, current_app, make_response, render_template, request
from sqlmodel import Session

from app.core.audit import set_actor
from app.core.db import get_session
from app.core.request_files import uploaded_file
from app.disclosure import form as disclosure_form
from app.disclosure import invitations
from app.disclosure import uploads as disclosure_uploads
from app.disclosure.schema import REPEATED, ROW_LIMIT, SECTIONS
from app.models.disclosure import Invitation, InvitationPurpose, InvitationStatus
from app.web import bp

TOKEN = "/d/<token>"
ACCEPT = ".pdf,.png,.jpg,.jpeg,application/pdf,image/png,image/jpeg"


def _private(response: Response) -> Response:
    response.headers["Cache-Control"] = "private, no-store"
    response.headers["Referrer-Policy"] = "no-referrer"  # the token is in the address
    response.headers["X-Robots-Tag"] = "noindex, nofollow"
    return response


def _gone() -> Response:
    """The same plain page for a wrong, expired or revoked token."""
    return _private(make_response(render_template("disclosure/gone.html"), 404))


def _address() -> str:
    return (request.remote_addr or "-")[:64]


def _invitation(
    session: Session, token: str, purpose: str = InvitationPurpose.disclosure.value
) -> Invitation | Response:
    """The token's invitation of this purpose, or the page to answer with (too many guesses, or gone)."""
    address = _address()
    try:
        invitations.check_guesses(session, address)
    except invitations.TooManyGuesses as exc:
        response = make_response(
            render_template("disclosure/too_many.html", minutes=exc.retry_after // 60 + 1), 429
        )
        response.headers["Retry-After"] = str(exc.retry_after)
        return _private(response)
    invitation = invitations.find(session, token, purpose)
    if invitation is not None and invitations.state(invitation) in (
        "expired",
        InvitationStatus.revoked.value,
    ):
        invitations.log(session, invitation, "refused", address=address, state=invitations.state(invitation))
        session.commit()
        invitation = None
    if invitation is None:
        invitations.wrong_guess(session, address)
        return _gone()
    set_actor(session, user_id=None, name=f"invitation:{invitation.id}")
    return invitation


def _page(token: str, invitation: Invitation, state: disclosure_form.FormState, **extra: Any) -> Response:
    settings = current_app.config["GPUVET_SETTINGS"]
    html = render_template(
        "disclosure/form.html",
        token=token,
        invitation=invitation,
        state=state,
        sections=SECTIONS,
        row_limit=ROW_LIMIT,
        accept=ACCEPT,
        max_mb=settings.disclosure_upload_max_mb,
        quota_files=settings.disclosure_upload_max_files,
        quota_mb=settings.disclosure_upload_quota_mb,
        file_suffix=disclosure_form.FILE_SUFFIX,
        lang_next=request.path,
        **extra,
    )
    return _private(make_response(html))


def _files(max_bytes: int) -> dict[str, tuple[bytes, str]]:
    files = {}
    for key in request.files:
        if not key.endswith(disclosure_form.FILE_SUFFIX):
            continue
        field = key.removesuffix(disclosure_form.FILE_SUFFIX)
        data, name = uploaded_file(key, max_bytes)
        if data is not None and _upload_field(field):
            files[field] = (data, name or "")
    return files


def _upload_field(field: str) -> bool:
    parts = field.split(".")
    if parts == ["topology", "diagram_upload_id"]:
        return True
    return (
        len(parts) == 3
        and parts[0] in ("licences", "certifications")
        and parts[1].isdigit()
        and int(parts[1]) < ROW_LIMIT
        and parts[2] == "scan_upload_id"
    )


@bp.route(TOKEN, methods=["GET", "POST"])
def disclosure_form_page(token: str) -> Any:
    """Show, save (draft) or submit the questionnaire."""
    session = get_session()
    found = _invitation(session, token)
    if isinstance(found, Response):
        return found
    invitation = found
    address = _address()
    if invitation.status in (InvitationStatus.submitted.value, InvitationStatus.reviewed.value):
        return _private(make_response(render_template("disclosure/thanks.html", invitation=invitation)))
    if request.method == "GET":
        disclosure_form.viewed(session, invitation, address=address)
        return _page(token, invitation, disclosure_form.load(session, invitation))
    asked = {section: request.form.get(f"rows.{section}", "0") for section in REPEATED}
    values = disclosure_form.read_values(request.form)
    state = disclosure_form.FormState(values, disclosure_form.rows_for(values, asked))
    state.uploads = disclosure_uploads.uploads(session, invitation.id)
    settings = current_app.config["GPUVET_SETTINGS"]
    max_bytes = settings.disclosure_upload_max_mb * disclosure_uploads.MB
    quota = disclosure_uploads.Quota.from_settings(settings)
    disclosure_form.store_files(
        session, invitation, state, _files(max_bytes), max_bytes, quota=quota, address=address
    )
    action = request.form.get("action", "save")
    if action.startswith("add:") and action[4:] in REPEATED:
        state.rows[action[4:]] = min(ROW_LIMIT, state.rows[action[4:]] + 1)
    confirmed = request.form.get(disclosure_form.CONFIRM_FIELD) == "yes"  # submitting cannot be undone
    submitted = disclosure_form.save(
        session, invitation, state, submit=action == "submit", address=address, confirmed=confirmed
    )
    if submitted:
        return _private(make_response(render_template("disclosure/thanks.html", invitation=invitation)))
    outcome = "submit_refused" if action == "submit" else "saved"
    return _page(
        token, invitation, state, outcome=outcome, anchor=action[4:] if action.startswith("add:") else ""
    )


def _serve_upload(token: str, upload_id: int, serve: Callable[[Any, bytes], Response | None]) -> Any:
    """serve(upload, bytes) for this invitation's upload; 404 with no such upload or when serve gives none."""
    session = get_session()
    found = _invitation(session, token)
    if isinstance(found, Response):
        return found
    upload = disclosure_uploads.uploads(session, found.id).get(upload_id)
    response = serve(upload, disclosure_uploads.body(session, upload)) if upload is not None else None
    if response is None:
        abort(404)
    return response


@bp.get(TOKEN + "/files/<int:upload_id>")
def disclosure_file(token: str, upload_id: int) -> Any:
    """One of this invitation's uploads, as a download (never shown in the browser)."""
    return _serve_upload(token, upload_id, disclosure_uploads.attachment)


@bp.get(TOKEN + "/files/<int:upload_id>/thumb")
def disclosure_thumbnail(token: str, upload_id: int) -> Any:
    """A re-encoded PNG thumbnail of an uploaded picture."""
    return _serve_upload(token, upload_id, lambda _upload, body: disclosure_uploads.thumbnail(body))
