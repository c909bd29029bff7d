"""Check an import without writing: match stored providers, merge, validate and plan each one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask_babel import gettext as _
from sqlmodel import Session

from app.core.errors import FieldError, ServiceError
from app.core.limits import parse_id
from app.models import Provider
from app.models.fields import blank_to_none
from app.registry import import_plan
from app.registry.import_plan import CREATE, UNCHANGED, UPDATE, ProviderPlan
from app.registry.providers import build_provider
from app.registry.transfer.candidates import Candidate
from app.registry.transfer.columns import ID_COLUMN
from app.registry.transfer.csv_read import resolve_variants
from app.registry.transfer.report import ImportProblem


def duplicates(candidates: list[Candidate]) -> tuple[list[ImportProblem], set[int]]:
    """USCCs that appear more than once in the file; later occurrences are the problem rows."""
    first: dict[str, Candidate] = {}
    problems = []
    duplicated = set()
    for index, candidate in enumerate(candidates):
        uscc = candidate.uscc
        if not uscc:
            continue
        if uscc in first:
            row, where = candidate.locate("uscc")
            problems.append(
                ImportProblem(
                    row,
                    where,
                    _(
                        "统一社会信用代码 %(uscc)s 在文件中重复（第 %(first)s 行已有）",
                        uscc=uscc,
                        first=first[uscc].row,
                    ),
                )
            )
            duplicated.add(index)
        else:
            first[uscc] = candidate
    return problems, duplicated


def _build(data: dict[str, Any]) -> tuple[Provider | None, list[FieldError]]:
    """Validate one provider into unsaved objects, or the field errors that refuse it."""
    try:
        return build_provider(data=data), []
    except ServiceError as exc:
        return None, list(exc.errors)


def _validation_data(candidate: Candidate, duplicate: bool) -> dict[str, Any]:
    data = dict(candidate.data)
    if "__not_an_object__" in data:
        return data
    if duplicate:
        data.pop("uscc", None)  # already reported; validate the rest without a second, misleading clash
    return data


def _not_an_object(candidate: Candidate) -> list[ImportProblem]:
    return [ImportProblem(candidate.row, "", _("每个供应商须为 JSON 对象"))]


def _unknown_datacenters(candidate: Candidate) -> list[ImportProblem]:
    """Offers naming a datacenter the provider does not list (found before the service's first-error stop)."""
    datacenters, offers = candidate.data.get("datacenters") or [], candidate.data.get("offers")
    if not isinstance(datacenters, list) or not isinstance(offers, list):
        return []
    names = {blank_to_none(dc.get("name")) for dc in datacenters if isinstance(dc, dict)}
    problems = []
    for index, offer in enumerate(offers):
        name = blank_to_none(offer.get("datacenter_name")) if isinstance(offer, dict) else None
        if isinstance(name, str) and name not in names:
            row, where = candidate.locate(f"offers[{index}].datacenter_name")
            problems.append(ImportProblem(row, where, _("本供应商没有名为“%(name)s”的机房", name=name)))
    return problems


def _record_id(candidate: Candidate) -> tuple[int | None, ImportProblem | None]:
    """The provider id the file gives (None when blank), or the problem with it."""
    value = candidate.record_id
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    text = str(value).strip() if isinstance(value, int | str) and not isinstance(value, bool) else ""
    number = parse_id(text)
    if number is None:
        row, where = candidate.locate(ID_COLUMN)
        return None, ImportProblem(
            row, where, _("供应商ID须为正整数（导出文件中的编号）；新增的供应商请留空")
        )
    return number, None


Progress = Callable[[int, int, str], None]


@dataclass
class Checked:
    """What checking found: a plan per provider of the file, and what applying it writes."""

    plans: list[ProviderPlan] = field(default_factory=list)
    updates: dict[int, dict[str, Any]] = field(default_factory=dict)  # candidate index -> merged data
    new: dict[int, Provider] = field(default_factory=dict)  # candidate index -> unsaved provider
    problems: list[ImportProblem] = field(default_factory=list)
    written: list[int] = field(default_factory=list)  # ids of the providers applying changed or created


def _matches(session: Session, candidates: list[Candidate], checked: Checked) -> list[Provider | None]:
    """The stored provider each candidate updates (None: a new one); id problems go to `checked`."""
    keys = []
    for candidate in candidates:
        record_id, problem = _record_id(candidate)
        if problem is not None:
            checked.problems.append(problem)
        keys.append((candidate.uscc, record_id))
    stored = import_plan.load_providers(
        session,
        usccs=[uscc for uscc, _id in keys if uscc],
        ids=[record_id for _uscc, record_id in keys if record_id is not None],
    )
    return import_plan.match(keys, stored)


def _check_update(
    candidate: Candidate, target: Provider, before: dict[str, Any], checked: Checked, index: int
) -> ProviderPlan:
    """Merge the file's values into a stored provider, validate the result and list what changes."""
    data = import_plan.merged(before, candidate.data, candidate.given_fields())
    provider, errors = _build(data)
    checked.problems.extend(candidate.problems(errors))
    name = candidate.name or target.legal_name
    plan = ProviderPlan(candidate.row, name, UPDATE, target.id, target.version)
    if provider is not None:
        plan.changes = import_plan.diff(before, import_plan.stored_input(provider))
        if plan.changes:
            checked.updates[index] = data
        else:
            plan.action = UNCHANGED
    return plan


def check_all(
    session: Session,
    candidates: list[Candidate],
    duplicated: set[int],
    reported: set[tuple[int, str]],
    progress: Progress,
) -> Checked:
    """Match, merge and validate every candidate without writing anything."""
    checked = Checked()
    targets = _matches(session, candidates, checked)
    first_row: dict[int, int] = {}  # stored provider id -> the file row that updates it
    step = max(1, len(candidates) // 100)
    found = len(checked.problems)
    for index, candidate in enumerate(candidates):
        if index % step == 0:
            progress(index, len(candidates), candidate.name)
        target = targets[index]
        before = import_plan.stored_input(target) if target is not None else None
        checked.problems.extend(resolve_variants(candidate, before))
        if "__not_an_object__" in candidate.data:
            checked.problems.extend(_not_an_object(candidate))
            checked.plans.append(ProviderPlan(candidate.row, "", CREATE))
            continue
        if target is not None and index not in duplicated and target.id in first_row:
            row, where = candidate.locate(ID_COLUMN)
            message = _(
                "与第 %(first)s 行是同一家已登记的供应商（%(name)s），每家供应商只能出现一次",
                first=first_row[target.id],
                name=target.legal_name,
            )
            checked.problems.append(ImportProblem(row, where, message))
            checked.plans.append(
                ProviderPlan(candidate.row, candidate.name, UPDATE, target.id, target.version)
            )
            continue
        if target is not None and index not in duplicated:
            first_row[target.id] = candidate.row
            checked.plans.append(_check_update(candidate, target, before, checked, index))
            continue
        unknown = _unknown_datacenters(candidate)
        checked.problems.extend(unknown)
        provider, errors = _build(_validation_data(candidate, index in duplicated))
        skip = {(p.row, p.field) for p in unknown}
        checked.problems.extend(p for p in candidate.problems(errors) if (p.row, p.field) not in skip)
        checked.plans.append(ProviderPlan(candidate.row, candidate.name, CREATE))
        if provider is not None and index not in duplicated:
            checked.new[index] = provider
    checked.problems[found:] = [p for p in checked.problems[found:] if (p.row, p.field) not in reported]
    return checked


def number_warnings(candidates: list[Candidate], checked: Checked) -> list[ImportProblem]:
    """Each malformed licence, filing or credit-code number of the providers the file writes, worded as
    the credential check will word it (red flag 9), so the preview says so before anything is applied."""
    from app.vetting.rules.numbers import malformed_numbers

    providers: list[tuple[int, Any]] = list(checked.new.items())
    for index, data in checked.updates.items():
        built, _errors = _build(data)
        if built is not None:
            providers.append((index, built))
    warnings = []
    for index, provider in sorted(providers, key=lambda pair: pair[0]):
        for path, value, problems in malformed_numbers(provider):
            row, where = candidates[index].locate(path)
            message = _(
                "编号格式错误（核查将记为红旗 9）：%(value)s：%(problems)s", value=value, problems=problems
            )
            warnings.append(ImportProblem(row, where, message))
    return warnings
