"""The provider's "前后对比" tab: two check runs or report exports side by side, and what changed; and two
benchmark runs' key figures and claim verdicts, with how much each moved."""

from __future__ import annotations

from typing import Any

from flask import abort, render_template, request
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from app.accounts.auth import role_required
from app.core.db import get_session
from app.core.errors import FieldError, InvalidInput, NotFound
from app.core.i18n import current_language
from app.core.limits import parse_id
from app.credentials import compare_runs as service
from app.models.enums import Role
from app.models.trials import BenchRun
from app.registry.providers import get_provider
from app.trials import bench_runs
from app.web import bp, labels
from app.web.bench_run_view import comparison_rows, figure, number_text
from app.web.credentials import (
    SEVERITY_COLOURS,
    SEVERITY_LABELS,
    VERDICT_COLOURS,
    VERDICT_LABELS,
    rule_title,
)
from app.web.labels import label
from app.web.missing import or_404
from app.web.nav import provider_tab
from app.web.trials import VERDICT_COLOURS as BENCH_VERDICT_COLOURS
from app.web.trials import VERDICT_LABELS as BENCH_VERDICT_LABELS
from app.web.trials import other_runs

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
# What a finding's subject ("bench_run:3") names, in words; kinds not listed here read as the registry's
# entity labels ("licence:2": 许可证 #2), and a subject of no known kind is left to the finding's message.
SUBJECT_KINDS = {"bench_run": _l("测试"), "trial_server": _l("试用服务器")}


def finding_subject(subject: str) -> str:
    """ "测试 #3" for "bench_run:3", "许可证 #2" for "licence:2"; "" when the subject names no record."""
    kind, _colon, number = str(subject or "").partition(":")
    name = SUBJECT_KINDS.get(kind) or labels.ENTITY.get(kind)
    return f"{name} #{number}" if name and number.isdigit() else ""


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
    if before and after and before.ref == after.ref:  # never a run against itself
        errors.append(FieldError("a", _("不能与自身对比：请另选一次核查或一份报告。")))
        before, status = None, 400
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
        finding_subject=finding_subject,
        status_labels=STATUS_LABELS,
        status_colours=STATUS_COLOURS,
        severity_labels=SEVERITY_LABELS,
        severity_colours=SEVERITY_COLOURS,
        verdict_labels=SIDE_VERDICT_LABELS,
        verdict_colours=VERDICT_COLOURS,
    )
    return html, status


# ---------------------------------------------------------------- two benchmark runs (issue 27 item 5)
# Key figures where a smaller value is the better one (the rest: larger is better).
LOWER_IS_BETTER = frozenset({"packet_loss", "rtt_avg", "rtt_mdev", "read_latency"})
VERDICT_RANK = {"fail": 0, "warn": 1, "info": 2, "pass": 3}


def _signed(value: float, text: str) -> str:
    return f"{'+' if value > 0 else '−' if value < 0 else '±'}{text}"


def figure_change(metric: str, unit: str, before: Any, after: Any) -> dict[str, Any]:
    """How a key figure moved from `before` to `after`: the difference with its unit, the share of the
    earlier value, and whether that is better or worse (a kind, such as the storage class, only differs)."""
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (before, after))
    if not numbers:
        moved = before is not None and after is not None and before != after
        return {"delta": _("已变化") if moved else "", "percent": "", "direction": "changed" if moved else ""}
    diff = round(float(after) - float(before), 6)
    if unit == "%":  # a share already: its change is in percentage points
        delta = _signed(diff, _("%(n)s 个百分点", n=number_text(round(abs(diff), 3))))
    else:
        delta = _signed(diff, figure(abs(diff), unit))
    percent = ""
    if unit != "%" and before:
        percent = _signed(diff, f"{number_text(round(abs(diff) / abs(float(before)) * 100, 1))}%")
    direction = "same"
    if diff:
        better = (diff < 0) if metric in LOWER_IS_BETTER else (diff > 0)
        direction = "better" if better else "worse"
    return {"delta": delta if diff else "±0", "percent": percent, "direction": direction}


def verdict_changes(before: BenchRun, after: BenchRun) -> list[dict[str, Any]]:
    """Every claim check of either run with its verdict before and after; moved ones first, the worst
    later verdict first among them."""
    thresholds = bench_runs.thresholds()
    old = {(r["check"], r["subject"]): r for r in comparison_rows(before.comparisons or [], thresholds)}
    new = {(r["check"], r["subject"]): r for r in comparison_rows(after.comparisons or [], thresholds)}
    rows = []
    for key in [*old, *(key for key in new if key not in old)]:
        was, now = old.get(key), new.get(key)
        shown = now or was or {}
        rows.append(
            {
                "check": key[0],
                "label": shown.get("check_label", key[0]),
                "subject_label": shown.get("subject_label", ""),
                "before": was,
                "after": now,
                "moved": (was or {}).get("verdict") != (now or {}).get("verdict"),
            }
        )
    rows.sort(key=lambda row: (not row["moved"], VERDICT_RANK.get((row["after"] or {}).get("verdict"), 9)))
    return rows


def _bench_sides() -> tuple[list[BenchRun], str | None]:
    """The two runs ?a=&b= name, earlier first, or an explanation of what is wrong with the choice."""
    asked = [parse_id(request.args.get(name, "")) for name in ("a", "b")]
    if not all(asked):
        abort(400, description=_("请选择两次测试：a 与 b 须为测试编号"))
    runs = [or_404(bench_runs.get_run, run_id=run_id) for run_id in asked]
    if runs[0].id == runs[1].id:
        return runs[:1], _("同一次测试不能与自身对比：请另选一次测试。")
    return sorted(runs, key=lambda run: run.id), None


@bp.get("/bench-runs/compare")
@role_required(Role.viewer)
def bench_compare() -> Any:
    """Key figures and claim verdicts of two runs side by side (?a=ID&b=ID): what changed and by how much."""
    runs, refused = _bench_sides()
    candidates = sorted({run.id: run for run in [*runs, *other_runs(runs[0])]}.values(), key=lambda r: -r.id)
    rows: list[dict[str, Any]] = []
    verdicts: list[dict[str, Any]] = []
    if refused is None:
        rows = bench_runs.compare_runs(get_session(), run_ids=[run.id for run in runs])
        for row in rows:
            kind = "storage_class" if row["metric"] == "storage_class" else None
            row["texts"] = [
                str(label(value, kind)) if kind and value is not None else figure(value, row["unit"])
                for value in row["values"]
            ]
            row.update(figure_change(row["metric"], row["unit"], *row["values"]))
        verdicts = verdict_changes(*runs)
    html = render_template(
        "compare/bench.html",
        runs=runs,
        rows=rows,
        verdicts=verdicts,
        refused=refused,
        candidates=candidates,
        verdict_labels=BENCH_VERDICT_LABELS,
        verdict_colours=BENCH_VERDICT_COLOURS,
    )
    return html, (400 if refused else 200)
