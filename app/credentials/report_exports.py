"""Report exports: render a report to PDF, number it, and keep a record an auditor can check."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import Any

from flask_babel import gettext as _
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import defer
from sqlmodel import Session, col, func, select

from app.core import clock as localtime
from app.core.errors import Conflict, InvalidInput, NotFound
from app.core.records import get_or_404
from app.credentials.compare_runs import previous_export
from app.credentials.report_inputs import provider_inputs
from app.models.reports import ExportRecord, ReportKind
from app.reports.assemble import snapshot_sha256
from app.reports.labels import LANGUAGES
from app.reports.pdf import PdfRenderer
from app.reports.render import REPORT_KINDS, render_html, render_pdf
from app.reports.signing import sign_report

logger = logging.getLogger(__name__)

NUMBER_PREFIX = "GV"
NUMBER_ATTEMPTS = 3  # two exports racing for the same number: the loser renders again with the next one
CASES_MODULE = "app.cases.cases"


@dataclass(frozen=True)
class Author:
    """Who exports: the user's id (None from the command line) and name."""

    id: int | None
    name: str


def parse_language(value: Any) -> str:
    """A report language code (zh or en); anything else is an InvalidInput naming the field."""
    text = (value or "zh").strip().lower() if isinstance(value, str) else value
    if text not in LANGUAGES:
        raise InvalidInput(_("报告语言须为 %(accepted)s", accepted=" / ".join(LANGUAGES)), field="lang")
    return text


def format_number(year: int, seq: int) -> str:
    """The printed report number, e.g. GV-2026-000123."""
    return f"{NUMBER_PREFIX}-{year}-{seq:06d}"


def _next_seq(session: Session, year: int) -> int:
    current = session.exec(select(func.max(ExportRecord.seq)).where(ExportRecord.year == year)).one()
    return (current or 0) + 1


def _meta(
    number: str | None, now: datetime, author: Author, language: str, inputs_sha: str
) -> dict[str, Any]:
    return {
        "number": number,
        "created_at": now.isoformat(),
        "author": author.name,
        "language": language,
        "inputs_sha256": inputs_sha,
    }


def _earlier_export(session: Session, provider_id: int, now: datetime) -> dict[str, str] | None:
    """The provider's latest report exported before `now` (same day too), for the change section's wording."""
    record = previous_export(session, provider_id, before=now)
    if record is None:
        return None
    return {"number": record.number, "created_at": localtime.aware(record.created_at).isoformat()}


def _verdict(inputs: dict[str, Any]) -> str | None:
    checks = inputs.get("sources", {}).get("checks") or {}
    return (checks.get("data") or {}).get("verdict") if checks.get("status") == "ok" else None


@dataclass(frozen=True)
class _Subject:
    """What a report is about: its kind, id and name, its provider (a provider report's) and its inputs."""

    kind: ReportKind
    id: int
    name: str
    provider_id: int | None
    inputs: dict[str, Any]
    signed: bool = False  # signed whatever GPUVET_SIGN_REPORTS says (decision documents)

    @cached_property
    def inputs_sha256(self) -> str:
        """The SHA-256 of the inputs' snapshot (computed once)."""
        return snapshot_sha256(self.inputs)


def _provider_subject(session: Session, provider_id: int, now: datetime) -> _Subject:
    inputs = provider_inputs(session, provider_id=provider_id, today=localtime.business_today(now))
    return _Subject(ReportKind.provider, provider_id, inputs["provider"]["legal_name"], provider_id, inputs)


def _report_meta(
    session: Session, subject: _Subject, number: str | None, now: datetime, author: Author, language: str
) -> dict[str, Any]:
    """The report's meta block; a provider report also names the provider's earlier export."""
    meta = _meta(number, now, author, language, subject.inputs_sha256)
    if subject.provider_id is not None and subject.kind is ReportKind.provider:
        meta["earlier_export"] = _earlier_export(session, subject.provider_id, now)
    return meta


def _export(
    session: Session,
    subject: _Subject,
    *,
    language: str,
    author: Author,
    renderer: PdfRenderer,
    now: datetime,
) -> ExportRecord:
    """Number, render and store one export; retried when another export took the number meanwhile."""
    kind, inputs, provider_id = subject.kind, subject.inputs, subject.provider_id
    inputs_sha = subject.inputs_sha256
    for _attempt in range(NUMBER_ATTEMPTS):
        seq = _next_seq(session, now.year)
        number = format_number(now.year, seq)
        meta = _report_meta(session, subject, number, now, author, language)
        pdf = render_pdf(renderer, kind.value, inputs, meta, language)
        pdf = sign_report(pdf, number, always=subject.signed)
        record = ExportRecord(
            number=number,
            year=now.year,
            seq=seq,
            kind=kind.value,
            subject_id=subject.id,
            subject_name=subject.name[:200],
            provider_id=provider_id,
            language=language,
            created_by_id=author.id,
            created_by=author.name[:60],
            created_at=now,
            verdict=_verdict(inputs),
            pages=pdf.pages,
            size_bytes=len(pdf.data),
            sha256=hashlib.sha256(pdf.data).hexdigest(),
            inputs_sha256=inputs_sha,
            inputs_json={"meta": meta, "inputs": inputs},
            pdf_bytes=pdf.data,
        )
        session.add(record)
        try:
            session.commit()
        except IntegrityError:
            session.rollback()
            logger.info("report number %s was taken meanwhile; trying the next", number)
            continue
        logger.info(
            "exported %s report %s (%d pages, %d bytes)", kind.value, number, pdf.pages, len(pdf.data)
        )
        return record
    raise Conflict(_("报告编号冲突，请重试"), field="number")


# A domain's own document (app.cases.decision_document) is numbered, rendered and stored the same way.
ReportSubject = _Subject
export_subject = _export


def export_provider_report(
    session: Session,
    *,
    provider_id: int,
    language: Any,
    author: Author,
    renderer: PdfRenderer,
    now: datetime | None = None,
) -> ExportRecord:
    """Render the provider's vetting report to PDF and store the export record (raises NotFound)."""
    language = parse_language(language)
    now = now or localtime.now()
    subject = _provider_subject(session, provider_id, now)
    return _export(session, subject, language=language, author=author, renderer=renderer, now=now)


def provider_report_html(
    session: Session, *, provider_id: int, language: Any, author: Author, toolbar: Any = None
) -> str:
    """The provider report as an HTML page, rendered now (a preview: no number, nothing stored)."""
    language = parse_language(language)
    now = localtime.now()
    return _preview(session, _provider_subject(session, provider_id, now), language, author, now, toolbar)


def _preview(
    session: Session, subject: _Subject, language: str, author: Author, now: datetime, toolbar: Any
) -> str:
    """The report rendered now as an HTML page (no number, nothing stored)."""
    meta = _report_meta(session, subject, None, now, author, language)
    return render_html(subject.kind.value, subject.inputs, meta, language, screen=True, toolbar=toolbar)


def export_html(record: ExportRecord, *, toolbar: Any = None) -> str:
    """An export shown as HTML, rendered from its stored snapshot: the same content as its PDF."""
    snapshot = record.inputs_json
    meta = snapshot["meta"]
    return render_html(record.kind, snapshot["inputs"], meta, meta["language"], screen=True, toolbar=toolbar)


def cases_available() -> bool:
    """Whether procurement cases exist in this installation (the case report needs them)."""
    try:
        return "case" in REPORT_KINDS and importlib.util.find_spec(CASES_MODULE) is not None
    except ModuleNotFoundError:
        return False


def list_exports(
    session: Session, *, kind: ReportKind | str, subject_id: int, limit: int = 200
) -> list[ExportRecord]:
    """Exports of one provider or case, newest first, without loading their PDFs."""
    return list(
        session.exec(
            select(ExportRecord)
            .where(ExportRecord.kind == str(kind), ExportRecord.subject_id == subject_id)
            .options(defer(ExportRecord.pdf_bytes), defer(ExportRecord.inputs_json))  # type: ignore[arg-type]
            .order_by(col(ExportRecord.id).desc())
            .limit(limit)
        ).all()
    )


def get_export(session: Session, *, export_id: int) -> ExportRecord:
    """One export with its PDF, or NotFound."""
    return get_or_404(
        session, ExportRecord, export_id, _("报告导出记录 %(id)s 不存在", id=export_id), field="id"
    )


def find_export(session: Session, *, number: str) -> ExportRecord:
    """An export by its printed number (e.g. GV-2026-000123), or NotFound."""
    record = session.exec(select(ExportRecord).where(ExportRecord.number == number.strip().upper())).first()
    if record is None:
        raise NotFound(_("报告编号 %(number)s 不存在", number=number), field="number")
    return record


def verify_export(record: ExportRecord) -> bool:
    """Whether the stored PDF still has the SHA-256 recorded when it was exported."""
    return hashlib.sha256(record.pdf_bytes).hexdigest() == record.sha256


def _case_subject(session: Session, case_id: int, now: datetime) -> _Subject:
    if not cases_available():
        raise NotFound(_("选型案例功能尚未启用"), field="case_id")
    from app.cases.report_inputs import case_inputs

    inputs = case_inputs(session, case_id=case_id, today=localtime.business_today(now))
    return _Subject(ReportKind.case, case_id, inputs["case"]["title"], None, inputs)


def export_case_report(
    session: Session,
    *,
    case_id: int,
    language: Any,
    author: Author,
    renderer: PdfRenderer,
    now: datetime | None = None,
) -> ExportRecord:
    """Render a complete procurement case's report to PDF and store the export record."""
    language = parse_language(language)
    now = now or localtime.now()
    subject = _case_subject(session, case_id, now)
    return _export(session, subject, language=language, author=author, renderer=renderer, now=now)


def case_report_html(
    session: Session, *, case_id: int, language: Any, author: Author, toolbar: Any = None
) -> str:
    """The case report as an HTML page, rendered now (a preview: no number, nothing stored)."""
    language = parse_language(language)
    now = localtime.now()
    return _preview(session, _case_subject(session, case_id, now), language, author, now, toolbar)
