"""Import providers: check everything first, then write all in one transaction, or nothing."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from flask_babel import gettext as _
from sqlmodel import Session

from app.core.errors import ServiceError
from app.registry import import_plan
from app.registry.bulk_insert import insert_providers
from app.registry.import_plan import CREATE, UNCHANGED, UPDATE, ProviderPlan
from app.registry.transfer.candidates import Candidate
from app.registry.transfer.checking import Checked, Progress, check_all, duplicates, number_warnings
from app.registry.transfer.columns import ID_COLUMN
from app.registry.transfer.csv_read import read_csv
from app.registry.transfer.formats import FileError, check_format, decode
from app.registry.transfer.json_read import json_locator, portable, read_json
from app.registry.transfer.report import ImportProblem, ImportReport


def _no_progress(_done: int, _total: int, _current: str) -> None:
    return None


def _stale(session: Session, plans: list[ProviderPlan], expected: list[Any]) -> list[ImportProblem]:
    """Providers that changed between the preview (`expected`, its plan tokens) and now."""
    if not isinstance(expected, list) or len(expected) != len(plans):
        return [ImportProblem(0, "", _("文件与预览时不一致，没有写入任何数据。请重新上传并预览。"))]
    problems = []
    for plan, token in zip(plans, expected, strict=True):
        if list(token or []) == plan.token:
            continue
        was_id = token[0] if isinstance(token, list) and token else None
        current = plan.version if plan.provider_id == was_id else None
        message = import_plan.changed_meanwhile(session, plan.name, was_id, current)
        problems.append(ImportProblem(plan.row, "", message))
    return problems


def _write_problem(message: str) -> list[ImportProblem]:
    return [ImportProblem(0, "", message)]


def _write_all(session: Session, checked: Checked) -> list[ImportProblem]:
    """Apply the plan in one transaction (all or nothing): changed providers re-read at their previewed
    versions and updated through the ORM, new ones by bulk statements, every change audited."""
    actor = session.info.get("actor", (None, "system"))
    session.rollback()  # end the checking's reads; the write re-reads what it changes
    plans = {index: checked.plans[index] for index in checked.updates}
    try:
        stored = import_plan.load_providers(session, ids=[plan.provider_id for plan in plans.values()])
        by_id = {provider.id: provider for provider in stored}
        for index, data in checked.updates.items():
            plan = plans[index]
            provider = by_id.get(plan.provider_id)
            if provider is None or provider.version != plan.version:
                current = provider.version if provider is not None else None
                message = import_plan.changed_meanwhile(session, plan.name, plan.provider_id, current)
                session.rollback()
                return [ImportProblem(plan.row, "", message)]
            import_plan.apply_update(provider, data)
        created = insert_providers(session.connection(), list(checked.new.values()), actor)
        session.commit()
        checked.written = [plan.provider_id for plan in plans.values()] + created
    except sa.orm.exc.StaleDataError:
        session.rollback()
        return _write_problem(_("写入时发现有人同时修改了其中的供应商，没有写入任何数据。请重新预览。"))
    except sa.exc.IntegrityError:
        session.rollback()
        return _write_problem(
            _("写入时与已有数据冲突（可能有人同时登记了同一家供应商），没有写入任何数据。请重新预览。")
        )
    except ServiceError as exc:
        session.rollback()
        return _write_problem(exc.errors[0].message if exc.errors else str(exc))
    return []


def _check_written(session: Session, provider_ids: list[int]) -> None:
    """Check every provider the import created or changed, in the background: a file's licences and
    filings are vetted as soon as they land, never left unchecked until the nightly re-check."""
    from flask import has_app_context

    if not provider_ids or not has_app_context():  # outside the app (a script) the nightly check catches up
        return
    from app.core.jobs import enqueue

    enqueue(session, kind="vetting.check_all", params={"provider_ids": sorted(provider_ids)})


def import_provider_dicts(
    session: Session, *, providers: list[dict[str, Any]], dry_run: bool = False, format: str = "json"
) -> ImportReport:
    """Import already-parsed provider dicts (ProviderCreate-shaped): update matched ones, create the rest."""
    candidates = [
        Candidate(
            i, portable(p), json_locator(i), record_id=p.get(ID_COLUMN) if isinstance(p, dict) else None
        )
        for i, p in enumerate(providers, start=1)
    ]
    return _import(session, candidates, [], format=format, dry_run=dry_run)


def _in_file_terms(problems: list[ImportProblem], columns: dict[str, str]) -> list[ImportProblem]:
    """Problems naming columns as the file's header does (e.g. in Chinese)."""
    return [
        ImportProblem(p.row, columns.get(p.field, p.field), p.message) if p.field in columns else p
        for p in problems
    ]


def _import(
    session: Session,
    candidates: list[Candidate],
    problems: list[ImportProblem],
    *,
    format: str,
    dry_run: bool,
    progress: Progress = _no_progress,
    expected: list[Any] | None = None,
    columns: dict[str, str] | None = None,
    check_written: bool = False,
) -> ImportReport:
    """Check everything first (reads only), then write all in one short transaction, or nothing;
    `check_written` queues a credential check of the providers written."""
    report = ImportReport(format=format, dry_run=dry_run, providers=len(candidates))
    report.names = [candidate.name for candidate in candidates]
    duplicate_problems, duplicated = duplicates(candidates)
    problems = problems + duplicate_problems
    reported = {(problem.row, problem.field) for problem in problems}
    checked = check_all(session, candidates, duplicated, reported, progress)
    problems = sorted(problems + checked.problems, key=lambda p: p.row)
    report.plans = checked.plans
    report.warnings = number_warnings(candidates, checked)
    report.expected = [plan.token for plan in checked.plans]
    actions = [plan.action for plan in checked.plans]
    report.new, report.updated = actions.count(CREATE), actions.count(UPDATE)
    report.unchanged = actions.count(UNCHANGED)
    if not problems and expected is not None:
        problems = _stale(session, checked.plans, expected)
        report.conflict = bool(problems)
    if not dry_run and not problems and (checked.new or checked.updates):
        progress(len(candidates), len(candidates), _("写入数据库"))
        problems = _write_all(session, checked)
        report.applied, report.conflict = not problems, bool(problems)
        report.created = len(checked.new) if report.applied else 0
        if report.applied and check_written:
            _check_written(session, checked.written)
    progress(len(candidates), len(candidates), "")
    report.problems = _in_file_terms(problems, columns or {})
    report.warnings = _in_file_terms(report.warnings, columns or {})
    if not candidates and not report.problems:
        report.problems = [ImportProblem(0, "providers", _("文件中没有供应商"))]
    return report


def import_providers(
    session: Session,
    *,
    data: bytes | str,
    format: str,
    dry_run: bool = False,
    progress: Progress = _no_progress,
    expected: list[Any] | None = None,
) -> ImportReport:
    """Preview (dry run) or apply a JSON or CSV file: matched providers are updated, the rest created.

    `session` supplies the database and the audit actor. Checking takes no write lock (a dry run never
    writes); applying is one transaction at the end, all or nothing. `expected` is a preview's
    `report.expected`: apply then refuses, writing nothing, when a provider changed since that preview.
    `progress(done, total, current)` is called as the rows are checked.
    """
    check_format(format)
    columns: dict[str, str] = {}
    try:
        text = decode(data)
        if format == "json":
            candidates, problems = read_json(text), []
        else:
            candidates, problems, columns = read_csv(text)
    except FileError as exc:
        return ImportReport(
            format=format, dry_run=dry_run, problems=[ImportProblem(0, exc.field, exc.message)]
        )
    return _import(
        session,
        candidates,
        problems,
        format=format,
        dry_run=dry_run,
        progress=progress,
        expected=expected,
        columns=columns,
        check_written=True,
    )
