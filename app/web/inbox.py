"""收件箱 (/inbox): change events of watched providers, unread count in the navigation bar, mark read."""

from __future__ import annotations

import logging
import math
from typing import Any

import sqlalchemy as sa
from flask import abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_login import current_user

from app.accounts import users
from app.accounts.auth import role_required
from app.core.db import get_session
from app.core.limits import MAX_ID
from app.models.enums import Role
from app.notify import watches as notifications
from app.web import bp
from app.web.missing import or_404

logger = logging.getLogger(__name__)
PAGE_SIZE = 30


@bp.app_context_processor
def _inbox_globals() -> dict[str, Any]:
    """`inbox_unread()` for the navigation bar and `watching(provider_id)` for the provider page."""

    def inbox_unread() -> int:
        if not current_user.is_authenticated:
            return 0
        try:
            session = get_session()
            return notifications.unread_count(session, current_user.id) + users.unread_notice_count(
                session, current_user.id
            )
        except sa.exc.SQLAlchemyError:  # the badge never turns a page into an error page
            logger.warning("inbox unread count failed", exc_info=True)
            get_session().rollback()
            return 0

    def watching(provider_id: int) -> bool:
        return current_user.is_authenticated and notifications.is_watching(
            get_session(), current_user.id, provider_id
        )

    return {"inbox_unread": inbox_unread, "watching": watching}


def _page_number() -> int:
    raw = request.args.get("page", "1")
    if not raw.isdigit() or not 1 <= int(raw) <= 100_000:
        abort(400, _("page 须为 1 到 100000 之间的整数"))
    return int(raw)


@bp.get("/inbox")
@role_required(Role.viewer)
def inbox() -> Any:
    """The signed-in user's inbox, newest first; ?unread=1 shows unread items only."""
    unread_only = request.args.get("unread") == "1"
    page = _page_number()
    session = get_session()
    first_visit = notifications.settings_of(session, current_user.id).id is None
    settings = notifications.ensure_settings(session, current_user.id)  # the first visit: last 7 days
    entries, total = notifications.inbox(
        session, current_user.id, unread_only=unread_only, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE
    )
    watched = len(notifications.watched_providers(session, current_user.id))
    return render_template(
        "inbox/list.html",
        entries=entries,
        total=total,
        page=page,
        pages=max(1, math.ceil(total / PAGE_SIZE)),
        unread_only=unread_only,
        watch_all=settings.watch_all,
        watched=watched,
        account_notices=users.unread_notices(session, current_user.id),
        first_visit=first_visit,
        backfill_days=notifications.BACKFILL_DAYS,
    )


@bp.post("/inbox/read")
@role_required(Role.viewer)
def inbox_mark_read() -> Any:
    """Mark the checked items read, or every item with all=1."""
    raw_ids = request.form.getlist("item_id")
    if request.form.get("all") == "1":
        ids = None
    elif raw_ids and all(value.isdigit() and len(value) <= 10 and int(value) <= MAX_ID for value in raw_ids):
        ids = [int(value) for value in raw_ids]
    else:
        flash(_("请先勾选要标为已读的条目"), "warning")
        return redirect(url_for("web.inbox"))
    changed = notifications.mark_read(get_session(), current_user.id, ids)
    flash(_("已将 %(count)s 条标为已读", count=changed), "success")
    return redirect(url_for("web.inbox", unread=request.form.get("unread") or None))


@bp.get("/inbox/<int:item_id>")
@role_required(Role.viewer)
def inbox_open(item_id: int) -> Any:
    """Mark one item read and go to its provider's page."""
    session = get_session()
    item = or_404(notifications.open_item, user_id=current_user.id, item_id=item_id)
    event = notifications.event_of(session, item)
    return redirect(url_for("web.provider_detail", provider_id=event.provider_id))
