"""Report pages: the provider's "报告" tab (exports, downloads), exporting, HTML view, PDF download."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from flask import Response, abort, current_app, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user
from markupsafe import Markup, escape
from sqlmodel import Session, col, select

from app.accounts.auth import has_role, role_required
from app.core.db import get_session
from app.core.errors import Conflict, InvalidInput
from app.core.i18n import current_language
from app.credentials import report_exports as service
from app.credentials.verdicts import LEVELS, ProviderVerdict, verdict_of
from app.models.enums import Role
from app.models.reports import ExportRecord, ReportKind
from app.registry.providers import get_provider
from app.reports.pdf import renderer_for_settings
from app.web import bp
from app.web.nav import provider_tab

provider_tab("web.provider_reports", _l("报告"), order=80)

LANGUAGE_NAMES = {"zh": _l("中文"), "en": _l("英文")}


def _author() -> service.Author:
    return service.Author(id=current_user.id, name=current_user.username)


# Where a provider report's snapshot keeps the shared verdict it printed (app.credentials.report_inputs).
SNAPSHOT_VERDICT = ("inputs", "sources", "verdict", "data")


def export_verdicts(session: Session, exports: list[ExportRecord]) -> dict[int, ProviderVerdict]:
    """The verdict each provider report states on its cover, read from the snapshots in one statement."""
    # Reports exported before the worded verdict fall back to their check's level, without a word on the
    # coverage they did not record; a report that had no check says 未核验.
    if not exports:
        return {}
    stored = col(ExportRecord.inputs_json)[SNAPSHOT_VERDICT]
    found = dict(
        session.exec(
            select(ExportRecord.id, stored).where(col(ExportRecord.id).in_([r.id for r in exports]))
        ).all()
    )
    out: dict[int, ProviderVerdict] = {}
    for record in exports:
        data = found.get(record.id)
        if isinstance(data, dict) and data.get("level") in LEVELS:
            out[record.id] = ProviderVerdict(
                provider_id=int(data.get("provider_id") or record.subject_id),
                level=data["level"],
                label_zh=str(data.get("label_zh") or LEVELS[data["level"]][0]),
                label_en=str(data.get("label_en") or LEVELS[data["level"]][1]),
                unverified=tuple(data.get("unverified") or ()),
                check_run_id=data.get("check_run_id"),
            )
            continue
        level = record.verdict if record.verdict in LEVELS else "unchecked"
        out[record.id] = ProviderVerdict(record.subject_id, level, *LEVELS[level])
    return out


def _provider_page(provider_id: int, *, errors: list[str] | None = None, status: int = 200) -> Any:
    session = get_session()
    provider = get_provider(session, provider_id=provider_id)
    exports = service.list_exports(session, kind=ReportKind.provider, subject_id=provider_id)
    return _exports_page(
        "reports/provider.html",
        exports,
        errors,
        status,
        provider=provider,
        verdict=verdict_of(session, provider_id),
        export_verdicts=export_verdicts(session, exports),
    )


def _exports_page(
    template: str, exports: list[ExportRecord], errors: list[str] | None, status: int, **subject: Any
) -> Any:
    """A subject's exported reports with their download buttons, and the export form for analysts."""
    html = render_template(
        template,
        exports=exports,
        languages=LANGUAGE_NAMES,
        default_language=current_language(),
        can_export=has_role(current_user, Role.analyst),
        errors=errors or [],
        **subject,
    )
    return html, status


@bp.get("/providers/<int:provider_id>/reports")
@role_required(Role.viewer)
def provider_reports(provider_id: int) -> Any:
    """The provider's exported reports with download buttons, and the export form for analysts."""
    return _provider_page(provider_id)


@bp.post("/providers/<int:provider_id>/reports")
@role_required(Role.analyst)
def provider_report_export(provider_id: int) -> Any:
    """Export the provider report as PDF (recorded), then return to the list."""
    return _export(
        partial(service.export_provider_report, provider_id=provider_id),
        partial(_provider_page, provider_id),
        url_for("web.provider_reports", provider_id=provider_id),
    )


def _export(export: Callable[..., ExportRecord], page: Callable[..., Any], back: str) -> Any:
    """Export a report in the language the form asks for, then go `back`; refused input shows `page` why."""
    settings = current_app.config["GPUVET_SETTINGS"]
    try:
        record = export(
            get_session(),
            language=request.form.get("lang", ""),
            author=_author(),
            renderer=renderer_for_settings(settings),
        )
    except (InvalidInput, Conflict) as exc:
        return page(errors=[error.message for error in exc.errors], status=exc.status)
    _flash_export(record)
    return redirect(back)


def _flash_export(record: ExportRecord) -> None:
    link = url_for("web.report_download", export_id=record.id)
    flash(
        Markup(_("已导出报告 %(number)s")) % {"number": record.number}
        + Markup(' <a class="alert-link" href="{}">{}</a>').format(link, _("下载 PDF")),
        "success",
    )


def _toolbar(back: str, back_text: str, pdf: str | None = None) -> Markup:
    """Links above the HTML view of a report (hidden when printed)."""
    parts = [Markup('<a href="{}">← {}</a>').format(back, back_text)]
    if pdf:
        parts.append(Markup('<a href="{}">{}</a>').format(pdf, _("下载 PDF")))
    return Markup(" · ").join(parts)


@bp.get("/providers/<int:provider_id>/report")
@role_required(Role.viewer)
def provider_report_view(provider_id: int) -> Any:
    """The provider report as HTML, rendered now (a preview: not numbered, not recorded)."""
    back = url_for("web.provider_reports", provider_id=provider_id)
    html = service.provider_report_html(
        get_session(),
        provider_id=provider_id,
        language=request.args.get("lang") or current_language(),
        author=_author(),
        toolbar=_toolbar(back, _("返回报告列表")),
    )
    return html


def _back_link(record: ExportRecord) -> tuple[str, str]:
    if record.kind == ReportKind.provider and record.provider_id is not None:
        return url_for("web.provider_reports", provider_id=record.provider_id), _("返回报告列表")
    if record.kind == ReportKind.case and service.cases_available():
        return url_for("web.case_reports", case_id=record.subject_id), _("返回报告列表")
    if record.kind == ReportKind.decision:
        return url_for("web.decision_detail", decision_id=record.subject_id), _("返回采购决定")
    return url_for("web.providers"), _("返回")


@bp.get("/reports/<int:export_id>")
@role_required(Role.viewer)
def report_view(export_id: int) -> Any:
    """An exported report as HTML, rebuilt from the inputs stored with it."""
    record = service.get_export(get_session(), export_id=export_id)
    back, text = _back_link(record)
    pdf = url_for("web.report_download", export_id=record.id)
    return service.export_html(record, toolbar=_toolbar(back, text, pdf))


@bp.get("/reports/<int:export_id>.pdf")
@role_required(Role.viewer)
def report_download(export_id: int) -> Any:
    """The exported PDF exactly as recorded; refused if it no longer matches its SHA-256."""
    record = service.get_export(get_session(), export_id=export_id)
    if not service.verify_export(record):
        current_app.logger.error("export %s: stored PDF does not match its SHA-256", record.number)
        raise Conflict(
            _("报告 %(number)s 的 PDF 与记录的 SHA-256 不一致", number=record.number),
            field="sha256",
        )
    disposition = "inline" if request.args.get("inline") else "attachment"
    return Response(
        record.pdf_bytes,
        mimetype="application/pdf",
        headers={
            "Content-Disposition": f'{disposition}; filename="{escape(record.number)}.pdf"',
            "X-Report-SHA256": record.sha256,
            "Cache-Control": "private, no-store",
        },
    )


# ---------------------------------------------------------------- case reports
def _case_page(case_id: int, *, errors: list[str] | None = None, status: int = 200) -> Any:
    from app.cases.cases import get_case

    session = get_session()
    case = get_case(session, case_id=case_id)
    exports = service.list_exports(session, kind=ReportKind.case, subject_id=case_id)
    return _exports_page("reports/case.html", exports, errors, status, case=case)


def _require_cases() -> None:
    if not service.cases_available():
        abort(404)


@bp.get("/cases/<int:case_id>/reports")
@role_required(Role.viewer)
def case_reports(case_id: int) -> Any:
    """A case's exported reports with download buttons, and the export form for analysts."""
    _require_cases()
    return _case_page(case_id)


@bp.post("/cases/<int:case_id>/reports")
@role_required(Role.analyst)
def case_report_export(case_id: int) -> Any:
    """Export the case report as PDF (recorded), then return to the list."""
    _require_cases()
    return _export(
        partial(service.export_case_report, case_id=case_id),
        partial(_case_page, case_id),
        url_for("web.case_reports", case_id=case_id),
    )


@bp.get("/cases/<int:case_id>/report")
@role_required(Role.viewer)
def case_report_view(case_id: int) -> Any:
    """The case report as HTML, rendered now (a preview: not numbered, not recorded)."""
    _require_cases()
    back = url_for("web.case_reports", case_id=case_id)
    return service.case_report_html(
        get_session(),
        case_id=case_id,
        language=request.args.get("lang") or current_language(),
        author=_author(),
        toolbar=_toolbar(back, _("返回报告列表")),
    )
