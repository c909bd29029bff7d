"""The provider's "前后对比" tab: two check runs or report exports side by side, and what changed."""

from __future__ import annotations

from typing import Any

from flask import render_template, request
from flask_babel import lazy_gettext as _l

from app.accounts.auth import role_required
from app.core.db import get_session
from app.core.errors import FieldError, InvalidInput, NotFound
from app.core.i18n import current_language
from app.credentials import compare_runs as service
from app.models.enums import Role
from app.registry.providers import get_provider
from app.web import bp
from app.web.credentials import (
    SEVERITY_COLOURS,
    SEVERITY_LABELS,
    VERDICT_COLOURS,
    VERDICT_LABELS,
    rule_title,
)
from app.web.nav import provider_tab

provider_tab("web.compare_runs", _l("前后对比"), order=70)

STATUS_LABELS = {
    "added": _l("新增"),
    "cleared": _l("已消除"),
    "severity_changed": _l("严重程度变化"),
    "unchanged": _l("未变"),
}
STATUS_COLOURS = {
    "added": "danger",
    "cleared": "success",
    "severity_changed": "warning",
    "unchanged": "light",
}
SIDE_VERDICT_LABELS = {**VERDICT_LABELS, "unchecked": _l("未核查")}


def _sides(session: Any, provider_id: int) -> tuple[Any, Any, list[FieldError], int]:
    """The two sides the URL names (a, b); b defaults to the latest run, a to the one before b."""
    errors: list[FieldError] = []
    statuses = [200]

    def load(ref: str | None, name: str) -> Any:
        if not ref:
            return None
        try:
            return service.load_side(session, provider_id, ref, name)
        except (InvalidInput, NotFound) as exc:
            errors.extend(exc.errors)
            statuses.append(exc.status)
            return None

    after = load(request.args.get("b") or service.latest_run_ref(session, provider_id), "b")
    a = request.args.get("a") or (service.previous_ref(session, provider_id, after.ref) if after else None)
    before = load(a, "a")
    return before, after, errors, max(statuses)


@bp.get("/providers/<int:provider_id>/compare")
@role_required(Role.viewer)
def compare_runs(provider_id: int) -> Any:
    """Pick two check runs or report exports (?a=run:1&b=export:2) and see the findings side by side."""
    session = get_session()
    provider = get_provider(session, provider_id=provider_id)
    before, after, errors, status = _sides(session, provider_id)
    comparison = service.compare(before, after) if before and after else None
    html = render_template(
        "compare/runs.html",
        provider=provider,
        choices=service.choices(session, provider_id),
        before=before,
        after=after,
        comparison=comparison,
        errors=errors,
        locale=current_language(),
        rule_title=rule_title,
        status_labels=STATUS_LABELS,
        status_colours=STATUS_COLOURS,
        severity_labels=SEVERITY_LABELS,
        severity_colours=SEVERITY_COLOURS,
        verdict_labels=SIDE_VERDICT_LABELS,
        verdict_colours=VERDICT_COLOURS,
    )
    return html, status
