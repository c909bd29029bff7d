"""Import/export page: upload a file and preview what changes, then apply (analysts); download (everyone)."""

from __future__ import annotations

import json
import re
from typing import Any

from flask import Response, abort, current_app, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import has_role, role_required
from app.core import clock, jobs
from app.core.db import get_session
from app.core.errors import NotFound
from app.core.limits import parse_id
from app.core.request_files import clean_filename
from app.models.enums import Role
from app.registry.import_jobs import (
    IMPORT_KIND,
    drop_upload,
    get_upload,
    import_report,
    start_import,
    store_upload,
)
from app.registry.transfer.columns import DATACENTER_COLUMNS, HEADER_LANGUAGES, OFFER_COLUMNS, header_column
from app.registry.transfer.export import export_providers
from app.registry.transfer.formats import FORMATS, MEDIA_TYPES, format_for_filename
from app.registry.transfer.importing import import_providers
from app.registry.transfer.report import ImportProblem, ImportReport
from app.web import bp
from app.web.jobs import job_link, job_view
from app.web.labels import COLLECTION, field_label, value_label
from app.web.missing import or_404
from app.web.nav import nav_item

# Problems and changed providers shown on the page at most; the rest are counted.
SHOWN_PROBLEMS = 500
_NUMBERED = re.compile(r"^(licence|filing|certification)_(\d{1,4})_(.+)$")
_PREFIX_COLLECTION = {"licence": "licences", "filing": "filings", "certification": "certifications"}
_PATH = re.compile(r"^(licences|filings|certifications|datacenters|offers)\[(\d+)\](?:\.(.+))?$")
# Problems about the upload rather than a column.
_UPLOAD_FIELDS = {
    "file": _l("文件"),
    "upload": _l("文件"),
    "format": _l("格式"),
    "encoding": _l("编码"),
    "expected": _l("预览"),
    "providers": _l("供应商列表"),
}


def column_label(field: str) -> str:
    """A problem's column or field path as a person reads it, in the UI language ("套餐 2 · GPU 型号")."""
    if not field:
        return ""
    if field in _UPLOAD_FIELDS:
        return str(_UPLOAD_FIELDS[field])
    column = header_column(field)
    if column is not None:
        if match := _NUMBERED.match(column):
            collection = COLLECTION[_PREFIX_COLLECTION[match.group(1)]]
            return f"{collection} {match.group(2)} · {field_label(match.group(3))}"
        if column in DATACENTER_COLUMNS:
            return f"{COLLECTION['datacenters']} · {field_label(DATACENTER_COLUMNS[column])}"
        if column in OFFER_COLUMNS:
            return f"{COLLECTION['offers']} · {field_label(OFFER_COLUMNS[column])}"
        return str(field_label(column))
    if match := _PATH.match(field):
        where = f"{COLLECTION[match.group(1)]} {int(match.group(2)) + 1}"
        return f"{where} · {field_label(match.group(3))}" if match.group(3) else where
    return str(field_label(field))


def change_value(field: str, value: Any) -> str:
    """A changed value as shown in the preview ("—" for blank)."""
    if value in (None, "", []):
        return "—"
    return str(value_label(field, value))


def _page(report: ImportReport | None = None, status: int = 200, **context: Any) -> Any:
    return (
        render_template(
            "transfer/index.html",
            report=report,
            can_import=has_role(current_user, Role.analyst),
            formats=FORMATS,
            shown_problems=SHOWN_PROBLEMS,
            column_label=column_label,
            change_value=change_value,
            collection_label=lambda name: COLLECTION.get(name, name),
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
    job = or_404(jobs.get_job, job_id=number)
    if job.kind != IMPORT_KIND:
        abort(404)
    return job


@bp.get("/transfer", endpoint="transfer")
@role_required(Role.viewer)
def transfer_page() -> Any:
    """Export links for everyone, the upload form for analysts; ?job= shows a background preview or apply."""
    job_id = request.args.get("job")
    if job_id is None:
        return _page()
    job = _import_job(job_id)
    view = {**job_view(job), "link": None}  # the result is shown right here
    result = job.result if isinstance(job.result, dict) else {}
    return _page(
        import_report(job),
        dry_run=job.params.get("dry_run", False),
        filename=job.params.get("filename"),
        import_job=view,
        upload_id=result.get("upload_id"),
        preview_job=job.id if job.params.get("dry_run") else None,
    )


def _refused(field: str, message: str, status: int = 422) -> Any:
    report = ImportReport(format="", dry_run=True, problems=[ImportProblem(0, field, message)])
    return _page(report, status)


def _inline_limit() -> int:
    settings = current_app.config["GPUVET_SETTINGS"]
    return current_app.config.get("IMPORT_INLINE_MAX_BYTES", settings.import_inline_max_bytes)


@bp.post("/transfer/import", endpoint="transfer_import")
@role_required(Role.analyst)
def transfer_import() -> Any:
    """Preview an uploaded file: what each provider gains or loses, and every refused row. Writes nothing."""
    upload = request.files.get("file")
    if upload is None or not upload.filename:
        return _refused("file", _("请选择要导入的 JSON 或 CSV 文件"))
    chosen = request.form.get("format") or format_for_filename(upload.filename)
    if chosen not in FORMATS:
        return _refused("format", _("无法从文件名判断格式，请选择 JSON 或 CSV"))
    data, filename = upload.read(), clean_filename(upload.filename)
    session = get_session()
    if len(data) > _inline_limit():
        job = start_import(
            session, data=data, filename=filename, format=chosen, dry_run=True, user=current_user
        )
        return redirect(url_for("web.transfer", job=job.id), 303)
    report = import_providers(session, data=data, format=chosen, dry_run=True)
    kept = None
    if report.ok and report.changes:
        kept = store_upload(session, data=data, filename=filename, format=chosen, user=current_user)
    return _page(
        report,
        200 if report.ok else 422,
        dry_run=True,
        filename=filename,
        upload_id=kept.id if kept else None,
    )


def _expected(text: str | None) -> list[Any] | None:
    """The preview's plan tokens sent back by the apply form, or None when unreadable."""
    try:
        value = json.loads(text or "")
    except ValueError:
        return None
    return value if isinstance(value, list) else None


@bp.post("/transfer/apply", endpoint="transfer_apply")
@role_required(Role.analyst)
def transfer_apply() -> Any:
    """Write a previewed upload all or nothing; refused when a provider changed since the preview."""
    session = get_session()
    try:
        upload = get_upload(session, parse_id(request.form.get("upload") or ""))
    except NotFound as exc:
        return _refused("upload", exc.errors[0].message if exc.errors else str(exc), 404)
    preview_job = parse_id(request.form.get("preview_job") or "")
    if preview_job is not None:
        job = start_import(session, dry_run=False, upload=upload, preview_job=preview_job, user=current_user)
        return redirect(url_for("web.transfer", job=job.id), 303)
    expected = _expected(request.form.get("expected"))
    if expected is None:
        return _refused("expected", _("缺少预览结果，请重新上传并预览。"))
    upload_id, filename = upload.id, upload.filename
    report = import_providers(session, data=upload.data, format=upload.format, expected=expected)
    drop_upload(session, upload_id)
    status = 200 if report.ok else (409 if report.conflict else 422)
    return _page(report, status, dry_run=False, filename=filename)


@bp.get("/transfer/export.<fmt>", endpoint="transfer_export")
@role_required(Role.viewer)
def transfer_export(fmt: str) -> Response:
    """Download every provider as JSON or CSV (?headers=zh: Chinese column headers)."""
    if fmt not in FORMATS:
        abort(404)
    headers = request.args.get("headers", "en")
    if headers not in HEADER_LANGUAGES:
        abort(404)
    text = export_providers(get_session(), fmt, headers=headers)
    suffix = "-zh" if headers == "zh" else ""
    filename = f"gpuvet-providers-{clock.business_today():%Y%m%d}{suffix}.{fmt}"
    return Response(
        text.encode("utf-8"),
        mimetype=MEDIA_TYPES[fmt],
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )
