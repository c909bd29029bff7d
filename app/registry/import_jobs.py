"""Uploaded import files kept between preview and apply, and large imports run as background jobs.

An upload is previewed first (nothing written); the stored file is applied later against that preview's
plan, so a provider changed in between refuses the apply. Uploads not applied within a day are dropped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from flask import has_app_context
from flask_babel import force_locale
from flask_babel import gettext as _
from sqlmodel import Session

from app.core import clock, jobs
from app.core.errors import NotFound
from app.core.i18n import current_language
from app.models.jobs import Job
from app.models.uploads import ImportUpload
from app.registry.transfer.formats import FORMATS
from app.registry.transfer.importing import import_providers
from app.registry.transfer.report import ImportReport

IMPORT_KIND = "providers.import"
STORED_PROBLEMS = (
    500  # a job's result keeps this many problems, names and changed providers; the rest counted
)
UPLOAD_KEPT = timedelta(days=1)


def _drop_stale_uploads(session: Session) -> None:
    table = ImportUpload.__table__
    session.execute(sa.delete(table).where(table.c.created_at < clock.now() - UPLOAD_KEPT))


def store_upload(
    session: Session, *, data: bytes, filename: str, format: str, user: Any = None
) -> ImportUpload:
    """Keep an uploaded file until it is applied (or a day has passed)."""
    assert format in FORMATS
    _drop_stale_uploads(session)
    upload = ImportUpload(
        filename=filename[:255],
        format=format,
        dry_run=True,
        data=data,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        created_by_name=getattr(user, "username", None) or session.info.get("actor", (None, "system"))[1],
    )
    session.add(upload)
    session.commit()
    return upload


def get_upload(session: Session, upload_id: int | None) -> ImportUpload:
    """A kept upload, or NotFound when it was applied already or has expired."""
    upload = session.get(ImportUpload, upload_id) if upload_id is not None else None
    if upload is None:
        raise NotFound(_("这份导入文件已应用或已过期（保留一天），请重新上传并预览。"), field="upload")
    return upload


def drop_upload(session: Session, upload_id: int | None) -> None:
    """Forget a kept upload (after it was applied)."""
    upload = session.get(ImportUpload, upload_id) if upload_id is not None else None
    if upload is not None:
        session.delete(upload)
        session.commit()


def _locale() -> str:
    return current_language()


def start_import(
    session: Session,
    *,
    data: bytes | None = None,
    filename: str = "",
    format: str = "",
    dry_run: bool,
    user: Any = None,
    upload: ImportUpload | None = None,
    preview_job: int | None = None,
) -> Job:
    """Queue the job that previews (dry run) or applies an upload; `data` is stored first when given.

    An apply with `preview_job` is refused, writing nothing, when a provider changed since that preview."""
    if upload is None:
        assert data is not None
        upload = store_upload(session, data=data, filename=filename, format=format, user=user)
    params: dict[str, Any] = {
        "upload_id": upload.id,
        "filename": upload.filename,
        "dry_run": dry_run,
        "size": upload.size,
        "locale": _locale(),
    }
    if preview_job is not None:
        params["preview_job"] = preview_job
    return jobs.enqueue(session, kind=IMPORT_KIND, params=params, user=user)


@contextmanager
def _speaking(locale: str) -> Iterator[None]:
    """Messages in the language of the person who started the job."""
    if has_app_context():
        with force_locale(locale):
            yield
    else:
        yield


def _previewed(session: Session, preview_job: int | None) -> list[Any] | None:
    if preview_job is None:
        return None
    preview = session.get(Job, preview_job)
    result = preview.result if preview is not None and preview.kind == IMPORT_KIND else None
    return list(result.get("expected") or []) if isinstance(result, dict) else []


@jobs.background(IMPORT_KIND, title_zh="导入供应商", title_en="Provider import")
def run_import(
    session: Session,
    job: Job,
    *,
    upload_id: int,
    dry_run: bool,
    locale: str = "zh",
    preview_job: int | None = None,
    **_shown: Any,
) -> dict[str, Any]:
    """Preview every row with progress, or apply the previewed plan in one short transaction (or nothing)."""
    with _speaking(locale):
        upload = get_upload(session, upload_id)
        data, format = upload.data, upload.format
        expected = _previewed(session, preview_job)

        def progress(done: int, total: int, current: str) -> None:
            jobs.report_progress(session, job, done=done, total=total, current=current)

        report = import_providers(
            session, data=data, format=format, dry_run=dry_run, progress=progress, expected=expected
        )
        keep = dry_run and report.ok and report.changes > 0
        if not keep:
            drop_upload(session, upload_id)  # applied, refused or nothing to apply: the file is not needed
        result = report.as_dict(limit=STORED_PROBLEMS) | {"upload_id": upload_id if keep else None}
        if report.problems:
            n = report.problem_total
            with force_locale("zh"):
                message_zh = _("发现 %(count)s 个问题，未写入任何供应商", count=n)
            with force_locale("en"):
                message_en = _("发现 %(count)s 个问题，未写入任何供应商", count=n)
            result |= jobs.job_result_outcome("problems", message_zh, message_en)
    return result


def import_report(job: Job) -> ImportReport | None:
    """The report of a finished import job (None while it runs, or when it failed)."""
    if job.kind != IMPORT_KIND or not isinstance(job.result, dict):
        return None
    return ImportReport.from_dict(job.result)
