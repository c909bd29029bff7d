"""What a benchmark run page shows, in the reader's language: labelled checks, figures with units, the
"probably not over the sold link" warning, and one live state that agrees with the run's job."""

from __future__ import annotations

from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from app.core.i18n import current_language
from app.models.jobs import Job, JobState
from app.models.trials import BenchRun, BenchStep, RunState
from app.web import labels
from benchmarks.compare import Thresholds, beyond_claim, beyond_claim_reason

# Which label group names the measured / claimed value of a check whose value is a kind, not a number.
MEASURED_KIND = {"storage_type": "storage_class"}
CLAIMED_KIND = {"storage_type": "storage_class", "stability": "bandwidth_type"}
# A bandwidth from this many Mbit/s on is shown in Gbit/s.
GBIT_FROM_MBPS = 1000
# Why a run could not measure (benchmarks.ssh.SSHError.kind; "refused" also: the address policy refused it).
ERROR_KINDS = {
    "ssh": _l("SSH 错误"),
    "refused": _l("连接被拒绝"),
    "unreachable": _l("无法到达服务器"),
    "timeout": _l("连接超时"),
    "auth_failed": _l("登录失败：服务器拒绝了私钥或密码"),
    "unknown_host_key": _l("主机密钥尚未固定"),
    "host_key_changed": _l("主机密钥已改变：服务器可能被重装，或有人在中间拦截"),
    "disconnected": _l("连接中断"),
    "invalid_key": _l("私钥无法读取（格式或口令不对）"),
}


def number_text(value: float | int) -> str:
    """A figure with thousands separators, two decimals (three below 1: 0.003 ms), no trailing zeros."""
    if float(value).is_integer():
        return f"{int(value):,}"
    decimals = 3 if abs(value) < 1 else 2
    return f"{value:,.{decimals}f}".rstrip("0").rstrip(".")


def figure(value: Any, unit: str) -> str:
    """A measured or claimed figure with its unit in the UI language: '21.5 Gbit/s', '8 块', '0.3 毫秒'."""
    if value is None or value == "":
        return "—"
    if isinstance(value, bool) or not isinstance(value, int | float):
        text = str(value)
        return f"{text} {labels.label(unit, 'unit')}" if unit and any(c.isdigit() for c in text) else text
    if unit == "Mbit/s" and abs(value) >= GBIT_FROM_MBPS:
        return f"{number_text(round(value / 1000, 2))} Gbit/s"
    if unit == "cv":
        return f"{labels.label(unit, 'unit')} {number_text(round(value, 3))}"
    shown = labels.label(unit, "unit") if unit else ""
    separator = "" if unit == "%" else " "
    return f"{number_text(value)}{separator}{shown}".strip()


def subject_label(subject: str) -> str:
    """What a comparison measured: a step, a network path or a GPU, as a person reads it."""
    if not subject:
        return ""
    if subject.startswith("gpu:"):
        return f"GPU {subject.removeprefix('gpu:')}"
    for group in ("bench_step", "net_path"):
        found = labels.GROUPS[group].get(subject)
        if found is not None:
            return str(found)
    return subject.replace("->", " → ")  # a pair of nodes of a multi-node run


def readable(text: str) -> str:
    """A stored reason with the network-path codes of older runs replaced by their labels."""
    for code, label in labels.NET_PATH.items():
        if "->" in code:
            text = text.replace(code, str(label))
    return text


def _value_text(check: str, value: Any, unit: str, kinds: dict[str, str]) -> str:
    """A measured or claimed value: a kind's label (storage, bandwidth type) or a figure with its unit."""
    if value is None:
        return "—"
    return str(labels.label(value, kinds[check])) if check in kinds else figure(value, unit)


def comparison_row(comparison: dict[str, Any], thresholds: Thresholds) -> dict[str, Any]:
    """One row of the claims-versus-measurements table; a throughput far above its nominal is a warning."""
    check, unit = str(comparison.get("check")), str(comparison.get("unit") or "")
    measured, claimed, ratio = comparison.get("measured"), comparison.get("claimed"), comparison.get("ratio")
    verdict = comparison.get("verdict")
    reason_zh, reason_en = comparison.get("reason_zh") or "", comparison.get("reason_en") or ""
    beyond = check == "bandwidth" and bool(claimed) and beyond_claim(ratio, thresholds)
    if beyond:  # older runs were stored as a pass: say what the figure means
        path = str((comparison.get("evidence") or {}).get("path") or "public")
        verdict = "warn"
        reason_zh, reason_en = beyond_claim_reason(path, float(measured), float(claimed), thresholds)
    return {
        "check": check,
        "check_label": str(labels.label(check, "bench_check")),
        "subject": str(comparison.get("subject") or ""),
        "subject_label": subject_label(str(comparison.get("subject") or "")),
        "verdict": verdict,
        "red_flag": comparison.get("red_flag"),
        "measured": _value_text(check, measured, unit, MEASURED_KIND),
        "claimed": _value_text(check, claimed, unit, CLAIMED_KIND),
        "ratio": f"{ratio:,.0%}" if isinstance(ratio, int | float) else "",
        "reason": readable(reason_en if current_language() == "en" else reason_zh),
        "beyond_claim": beyond,
    }


def comparison_rows(comparisons: list[dict[str, Any]], thresholds: Thresholds) -> list[dict[str, Any]]:
    """The claims-versus-measurements table of a run."""
    return [comparison_row(comparison, thresholds) for comparison in comparisons]


# ---------------------------------------------------------------- live state (page and polling JSON)
def error_kind_label(kind: str | None) -> str:
    """Why the run could not measure, in words ('错误' when it does not say)."""
    return str(ERROR_KINDS.get(kind or "", _("错误")))


def shown_state(run: BenchRun, job: Job | None) -> str:
    """The run's state as the page shows it: while the run is unfinished, its job's (queued or running)."""
    if run.finished or job is None:
        return str(run.state)
    if job.state == JobState.running:
        return RunState.running.value
    if job.state == JobState.queued:
        return RunState.queued.value
    return str(run.state)


def step_row(step: BenchStep) -> dict[str, Any]:
    """One step as the page and the poller show it."""
    ends = (step.options or {}).get("from"), (step.options or {}).get("to")  # a pair of a multi-node run
    return {
        "step": step.step,
        "label": f"{ends[0]} → {ends[1]}" if all(ends) else str(labels.label(step.step, "bench_step")),
        "status": step.status,
        "status_label": str(labels.label(step.status, "step_status")),
        "colour": labels.STEP_STATUS_COLOUR.get(step.status, "secondary"),
        "duration": _("%(n)s 秒", n=number_text(round(step.duration, 1))) if step.duration else "",
    }


def run_status(
    run: BenchRun, job: Job | None, steps: list[BenchStep], state_labels: dict, state_colours: dict
) -> dict[str, Any]:
    """The run's live state: badge, progress and steps, read in one go with its job so they agree."""
    state = shown_state(run, job)
    rows = [step_row(step) for step in steps]
    progress = (job.progress or {}) if job is not None else {}
    done = progress.get("done", sum(row["status"] not in ("pending", "running") for row in rows))
    running = next((row["label"] for row in rows if row["status"] == "running"), "")
    return {
        "id": run.id,
        "state": state,
        "state_label": str(state_labels.get(state, state)),
        "colour": state_colours.get(state, "secondary"),
        "finished": run.finished,
        "done": int(done),
        "total": len(rows),
        "current": running,
        "steps": rows,
    }


def current_text(status: dict[str, Any]) -> str:
    """The job box's progress line in words: '[3/5] 4k 随机读'."""
    if status["finished"] or status["state"] != RunState.running.value:
        return ""
    return f"[{status['done']}/{status['total']}] {status['current']}".strip()
