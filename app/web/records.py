"""Pages for a provider's nested records: licences, filings, certifications, datacenters, offers."""

from __future__ import annotations

from typing import Any

from flask import abort, flash, redirect, request, url_for
from flask_babel import gettext as _

from app.accounts.auth import role_required
from app.core.db import get_session
from app.core.errors import Conflict, FieldError, InvalidInput
from app.models import Provider
from app.models.enums import Role
from app.registry import providers as service
from app.web import bp, labels
from app.web.forms import (
    RECORD_FORMS,
    FormSpec,
    cleaned,
    display_values,
    parse_form,
    record_values,
    render_form,
)


def _form_spec(collection: str) -> FormSpec:
    spec = RECORD_FORMS.get(collection)
    if spec is None:
        abort(404)
    return spec


def _detail_url(provider_id: int, collection: str) -> str:
    return url_for("web.provider_detail", provider_id=provider_id, _anchor=collection)


def _render(
    spec: FormSpec,
    provider: Provider,
    child_id: int | None,
    values: dict[str, Any],
    errors: list[FieldError],
    version: Any,
) -> str:
    what = labels.label(spec.key, "collection")
    if child_id is None:
        title = _("添加%(what)s", what=what)
        action = url_for("web.record_new", provider_id=provider.id, collection=spec.key)
    else:
        title = _("编辑%(what)s", what=what)
        action = url_for("web.record_edit", provider_id=provider.id, collection=spec.key, child_id=child_id)
    return render_form(
        spec,
        provider=provider,
        values=values,
        errors=errors,
        title=title,
        action=action,
        cancel=_detail_url(provider.id, spec.key),
        version=version,
    )


def _save(spec: FormSpec, provider_id: int, child_id: int | None) -> Any:
    """Validate and store a posted record through the service, or show the form again with errors."""
    session = get_session()
    data = parse_form(spec, request.form)
    version = request.form.get("version", "")
    try:
        service.save_child(
            session,
            provider_id=provider_id,
            collection=spec.key,
            child_id=child_id,
            data=cleaned(data),
            expected_version=version,
        )
    except (InvalidInput, Conflict) as exc:
        provider = service.get_provider(session, provider_id=provider_id)
        if child_id is not None:
            service.find_child(provider, collection=spec.key, child_id=child_id)
        html = _render(spec, provider, child_id, display_values(spec, data), exc.errors, version)
        return html, exc.status
    flash(_("已保存%(what)s", what=labels.label(spec.key, "collection")), "success")
    return redirect(_detail_url(provider_id, spec.key))


@bp.route("/providers/<int:provider_id>/<collection>/new", methods=["GET", "POST"])
@role_required(Role.analyst)
def record_new(provider_id: int, collection: str) -> Any:
    """Add a licence, filing, certification, datacenter or offer to a provider."""
    spec = _form_spec(collection)
    if request.method == "POST":
        return _save(spec, provider_id, None)
    provider = service.get_provider(get_session(), provider_id=provider_id)
    return _render(spec, provider, None, display_values(spec, spec.defaults()), [], provider.version)


@bp.route("/providers/<int:provider_id>/<collection>/<int:child_id>/edit", methods=["GET", "POST"])
@role_required(Role.analyst)
def record_edit(provider_id: int, collection: str, child_id: int) -> Any:
    """Change one nested record; the provider's version guards against stale saves."""
    spec = _form_spec(collection)
    if request.method == "POST":
        return _save(spec, provider_id, child_id)
    provider = service.get_provider(get_session(), provider_id=provider_id)
    record = service.find_child(provider, collection=collection, child_id=child_id)
    return _render(spec, provider, child_id, record_values(spec, record), [], provider.version)


@bp.post("/providers/<int:provider_id>/<collection>/<int:child_id>/delete")
@role_required(Role.admin)
def record_delete(provider_id: int, collection: str, child_id: int) -> Any:
    """Delete one nested record (admins only, as every deletion; a stale version is refused with 409)."""
    spec = _form_spec(collection)
    service.delete_child(
        get_session(),
        provider_id=provider_id,
        collection=collection,
        child_id=child_id,
        expected_version=request.form.get("version", ""),
    )
    flash(_("已删除%(what)s", what=labels.label(spec.key, "collection")), "success")
    return redirect(_detail_url(provider_id, collection))
