"""Large imports run as a background job: the upload is stored, checked with progress, then written."""

from __future__ import annotations

import hashlib
from typing import Any

from sqlmodel import Session

from app import jobs
from app.models.jobs import Job
from app.models.uploads import ImportUpload
from app.services.errors import NotFound
from app.services.transfer import FORMATS, ImportReport, import_providers

IMPORT_KIND = "providers.import"
STORED_PROBLEMS = 500  # a job's result keeps this many problems (and names); the rest are counted


def start_import(
    session: Session, *, data: bytes, filename: str, format: str, dry_run: bool, user: Any = None
) -> Job:
    """Keep the uploaded file and queue the job that checks (and, unless a dry run, writes) it."""
    assert format in FORMATS
    upload = ImportUpload(
        filename=filename[:255],
        format=format,
        dry_run=dry_run,
        data=data,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        created_by_name=getattr(user, "username", None) or session.info.get("actor", (None, "system"))[1],
    )
    session.add(upload)
    session.commit()
    params = {"upload_id": upload.id, "filename": upload.filename, "dry_run": dry_run, "size": upload.size}
    return jobs.enqueue(session, kind=IMPORT_KIND, params=params, user=user)


@jobs.background(IMPORT_KIND, title_zh="导入供应商", title_en="Provider import")
def run_import(session: Session, job: Job, *, upload_id: int, dry_run: bool, **_shown: Any) -> dict[str, Any]:
    """Check every row with progress, then write all in one short transaction (or nothing)."""
    upload = session.get(ImportUpload, upload_id)
    if upload is None:
        raise NotFound(f"导入文件 {upload_id} 已不存在 (the uploaded file is gone)", field="upload_id")
    data, format = upload.data, upload.format
    session.delete(upload)  # read once; the registry (and its audit trail) keeps what was imported
    session.commit()

    def progress(done: int, total: int, current: str) -> None:
        jobs.report_progress(session, job, done=done, total=total, current=current)

    report = import_providers(session, data=data, format=format, dry_run=dry_run, progress=progress)
    result = report.as_dict(limit=STORED_PROBLEMS)
    if report.problems:
        n = report.problem_total
        result |= jobs.job_result_outcome(
            "problems",
            f"发现 {n} 个问题，未写入任何供应商",
            f"{n} problem(s) found; nothing was written",
        )
    return result


def import_report(job: Job) -> ImportReport | None:
    """The report of a finished import job (None while it runs, or when it failed)."""
    if job.kind != IMPORT_KIND or not isinstance(job.result, dict):
        return None
    return ImportReport.from_dict(job.result)
