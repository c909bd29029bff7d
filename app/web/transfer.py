"""Import/export page: upload a JSON or CSV file (analysts), download the registry (everyone)."""

from __future__ import annotations

from datetime import date
from typing import Any

from flask import Response, abort, current_app, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app import jobs
from app.auth import has_role, role_required
from app.db import get_session
from app.limits import parse_id
from app.models.enums import Role
from app.services.errors import NotFound
from app.services.import_jobs import IMPORT_KIND, import_report, start_import
from app.services.transfer import (
    FORMATS,
    MEDIA_TYPES,
    ImportProblem,
    ImportReport,
    export_providers,
    format_for_filename,
    import_providers,
)
from app.web import bp
from app.web.jobs import job_link, job_view
from app.web.nav import nav_item

# Problems shown on the page at most; the rest are counted.
SHOWN_PROBLEMS = 500


def _page(report: ImportReport | None = None, status: int = 200, **context: Any) -> Any:
    return (
        render_template(
            "transfer/index.html",
            report=report,
            can_import=has_role(current_user, Role.analyst),
            formats=FORMATS,
            shown_problems=SHOWN_PROBLEMS,
            **context,
        ),
        status,
    )


nav_item("web.transfer", _l("导入/导出"), order=80)


job_link(IMPORT_KIND, lambda job: url_for("web.transfer", job=job.id))


def _import_job(job_id: str) -> Any:
    """The import job named by ?job=, or 404."""
    number = parse_id(job_id)
    if number is None:
        abort(404)
    try:
        job = jobs.get_job(get_session(), job_id=number)
    except NotFound:
        abort(404)
    if job.kind != IMPORT_KIND:
        abort(404)
    return job


@bp.get("/transfer", endpoint="transfer")
@role_required(Role.viewer)
def transfer_page() -> Any:
    """Export links for everyone, the upload form for analysts; ?job= shows a background import."""
    job_id = request.args.get("job")
    if job_id is None:
        return _page()
    job = _import_job(job_id)
    view = {**job_view(job), "link": None}  # the result is shown right here
    return _page(
        import_report(job),
        dry_run=job.params.get("dry_run", False),
        filename=job.params.get("filename"),
        import_job=view,
    )


def _refused(field: str, message: str, dry_run: bool) -> Any:
    report = ImportReport(format="", dry_run=dry_run, problems=[ImportProblem(0, field, message)])
    return _page(report, 422, dry_run=dry_run)


@bp.post("/transfer/import", endpoint="transfer_import")
@role_required(Role.analyst)
def transfer_import() -> Any:
    """Check an uploaded file; write it all (unless a dry run) or nothing."""
    dry_run = bool(request.form.get("dry_run"))
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        return _refused("file", _("请选择要导入的 JSON 或 CSV 文件"), dry_run)
    chosen = request.form.get("format") or format_for_filename(upload.filename)
    if chosen not in FORMATS:
        return _refused("format", _("无法从文件名判断格式，请选择 JSON 或 CSV"), dry_run)
    data = upload.read()
    settings = current_app.config["GPUVET_SETTINGS"]
    if len(data) > current_app.config.get("IMPORT_INLINE_MAX_BYTES", settings.import_inline_max_bytes):
        job = start_import(
            get_session(),
            data=data,
            filename=upload.filename,
            format=chosen,
            dry_run=dry_run,
            user=current_user,
        )
        return redirect(url_for("web.transfer", job=job.id), 303)
    report = import_providers(get_session(), data=data, format=chosen, dry_run=dry_run)
    return _page(report, 200 if report.ok else 422, dry_run=dry_run, filename=upload.filename)


@bp.get("/transfer/export.<fmt>", endpoint="transfer_export")
@role_required(Role.viewer)
def transfer_export(fmt: str) -> Response:
    """Download every provider as JSON or CSV."""
    if fmt not in FORMATS:
        abort(404)
    text = export_providers(get_session(), fmt)
    filename = f"gpuvet-providers-{date.today():%Y%m%d}.{fmt}"
    return Response(
        text.encode("utf-8"),
        mimetype=MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
