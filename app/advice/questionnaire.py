"""The questionnaire's steps: one answers section per step, shown or skipped by workload kind.

Also what a step can work out for the buyer: which questions must be answered, and defaults derived from
earlier answers (used when a derivable answer is left blank, and recorded in the answers as "derived").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask_babel import gettext as _
from pydantic import ValidationError

from app.advice import sizing
from app.advice.answers import (
    SECTIONS,
    BatchKind,
    Unanswered,
    WorkloadKind,
    kind_errors,
    provisional,
)
from app.advice.knowledge import assumptions, load
from app.advice.numbers import fmt
from app.advice.requirements import storage_name
from app.core.i18n import current_language
from app.models.fields import blank_to_none

Raw = dict[str, Any]


def kind_of(raw: Raw) -> WorkloadKind | None:
    """The workload kind of (possibly incomplete) raw answers, if it is a valid one."""
    value = (raw.get("workload") or {}).get("kind")
    try:
        return WorkloadKind(value)
    except ValueError:
        return None


def trains(raw: Raw) -> bool:
    """Whether the raw answers describe training (and so checkpoints)."""
    kind = kind_of(raw)
    batch = (raw.get("workload") or {}).get("batch_kind")
    return kind in (WorkloadKind.distributed_training, WorkloadKind.single_node_training) or (
        kind == WorkloadKind.offline_batch and batch == BatchKind.training.value
    )


@dataclass(frozen=True)
class Step:
    """One page of the questionnaire; `key` is also the answers section it fills."""

    key: str
    applies: Callable[[Raw], bool]


def _always(_raw: Raw) -> bool:
    return True


STEPS: tuple[Step, ...] = (
    Step("workload", _always),
    Step("compute", _always),
    Step("model", trains),
    Step("data", lambda raw: kind_of(raw) != WorkloadKind.interactive_inference),
    Step("site", _always),
    Step("users", lambda raw: kind_of(raw) == WorkloadKind.interactive_inference),
    Step("checkpoint", trains),
    Step("budget", _always),
    Step("compliance", _always),
)
STEP_KEYS = tuple(step.key for step in STEPS)
assert set(STEP_KEYS) == set(SECTIONS), "every answers section needs a questionnaire step"


def steps_for(raw: Raw) -> list[str]:
    """The steps these answers go through, in order."""
    return [step.key for step in STEPS if step.applies(raw)]


def neighbour(raw: Raw, current: str, offset: int) -> str | None:
    """The step `offset` places after (or before) `current`, or None at either end."""
    keys = steps_for(raw)
    if current not in keys:
        return keys[0] if keys else None
    index = keys.index(current) + offset
    return keys[index] if 0 <= index < len(keys) else None


DERIVED = "derived"


def pruned(raw: Raw) -> Raw:
    """Answers without the sections this workload kind does not ask for (left from an earlier kind)."""
    keep = set(steps_for(raw))
    out = {key: value for key, value in raw.items() if key in keep}
    derived = [name for name in raw.get(DERIVED) or [] if name.split(".", 1)[0] in keep]
    if derived:
        out[DERIVED] = derived
    return out


def first_invalid(raw: Raw) -> str | None:
    """The first step whose section does not validate on its own, or None."""
    for key in steps_for(raw):
        try:
            SECTIONS[key].model_validate(raw.get(key) or {})
        except ValidationError:
            return key
    return None


# ---------------------------------------------------------------- required questions
def required_fields(raw: Raw, step: str, shown: dict[str, Any]) -> set[str]:
    """The questions of `step` that the workload-kind rules require, given the other answers.

    A question is required when leaving it blank (the rest of the page as `shown`) breaks a kind rule.
    """
    required = set()
    for name in SECTIONS[step].model_fields:
        blanked = {**raw, step: {**shown, name: None}}
        if any(error.field == f"{step}.{name}" for error in kind_errors(provisional(blanked), {step})):
            required.add(name)
    return required


# ---------------------------------------------------------------- defaults derived from earlier answers
@dataclass(frozen=True)
class Derived:
    """A default answer worked out from other answers, and in words how ("按 … 推算")."""

    value: float | int
    basis: str


def _rounded(value: float) -> float | int:
    """Three significant figures, as an input shows it (an integer when whole)."""
    rounded = float(f"{value:.3g}")
    return int(rounded) if rounded.is_integer() else rounded


def positive_number(value: Any) -> float | None:
    """A positive number typed into a form, or None."""
    try:
        number = float(str(blank_to_none(value) or "").replace(",", ""))
    except ValueError:
        return None
    return number if number > 0 and math.isfinite(number) else None


def _compute_defaults(raw: Raw, _shown: dict[str, Any]) -> dict[str, Derived]:
    kind = kind_of(raw)
    if kind == WorkloadKind.distributed_training:
        return {"nodes": Derived(2, _("按任务类型推算：多机分布式训练至少 2 个节点"))}
    if kind == WorkloadKind.single_node_training:
        return {"nodes": Derived(1, _("按任务类型推算：单机训练只用 1 个节点"))}
    return {}


def _weights(raw: Raw) -> tuple[float, int, str] | None:
    """Parameters (billions), bytes per parameter and precision of the model step, if answered."""
    model = provisional(raw).model
    try:
        parameters, precision = model.parameters_billion, model.precision
    except Unanswered:
        return None
    if not parameters:
        return None
    return parameters, assumptions()["gpu"]["bytes_per_gradient"][precision.value], precision.value


def _best_storage(raw: Raw) -> str | None:
    """The storage type that suits this workload kind best (as the result page suggests)."""
    kind = kind_of(raw)
    if kind is None:
        return None
    fit = load("scenarios")["kinds"][kind.value]["storage_types"]
    return max(fit, key=lambda name: fit[name])


def _checkpoint_defaults(raw: Raw, shown: dict[str, Any]) -> dict[str, Derived]:
    if not trains(raw):
        return {}
    out: dict[str, Derived] = {}
    weights = _weights(raw)
    if weights is not None:
        parameters, per_parameter, precision = weights
        size = _rounded(sizing.weight_bytes(parameters * 1e9, per_parameter) / 1e9)
        out["size_gb"] = Derived(
            size,
            _(
                "按参数量推算：%(parameters)s B 参数 × %(bytes)s 字节（%(precision)s）= %(size)s GB，仅权重；"
                "含优化器状态（如 Adam）的完整检查点大几倍，知道实际大小请改",
                parameters=fmt(parameters),
                bytes=per_parameter,
                precision=precision,
                size=fmt(size),
            ),
        )
    size_gb = positive_number(shown.get("size_gb")) or (out["size_gb"].value if "size_gb" in out else None)
    storage = _best_storage(raw)
    if size_gb and storage:
        rate = float(assumptions()["storage"]["typical"][storage]["write_mb_s"])
        stall = _rounded(sizing.checkpoint_stall_seconds(size_gb, rate))
        out["acceptable_stall_seconds"] = Derived(
            stall,
            _(
                "按检查点大小推算：%(size)s GB 以%(storage)s的典型写速 %(rate)s MB/s 写完约需 %(stall)s 秒",
                size=fmt(size_gb),
                storage=storage_name(storage, current_language()),
                rate=fmt(rate),
                stall=fmt(stall),
            ),
        )
    return out


DEFAULTS: dict[str, Callable[[Raw, dict[str, Any]], dict[str, Derived]]] = {
    "compute": _compute_defaults,
    "checkpoint": _checkpoint_defaults,
}


def derived_defaults(raw: Raw, step: str, shown: dict[str, Any]) -> dict[str, Derived]:
    """Defaults of `step` worked out from the other answers (and from the page itself as `shown`)."""
    derive = DEFAULTS.get(step)
    return derive(raw, shown) if derive is not None else {}


def _same(typed: Any, value: float | int) -> bool:
    number = positive_number(typed)
    return number is not None and math.isclose(number, value, rel_tol=1e-9)


def with_defaults(raw: Raw, step: str, data: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The page's answers with blanks filled from derivable defaults, and the questions answered so.

    A question counts as derived when it was left blank or still holds the derived figure.
    """
    filled = dict(data)
    derived = []
    for name, default in derived_defaults(raw, step, data).items():
        if blank_to_none(filled.get(name)) is None:
            filled[name] = default.value
        if _same(filled.get(name), default.value):
            derived.append(name)
    return filled, derived


def with_derived(raw: Raw, step: str, names: list[str]) -> Raw:
    """The answers recording that `names` of `step` hold derived defaults (the step's old record replaced).

    Every answer recorded as derived is worked out again, so a default follows the answers it came from.
    """
    others = [entry for entry in raw.get(DERIVED) or [] if entry.split(".", 1)[0] != step]
    entries = sorted(others + [f"{step}.{name}" for name in names])
    out = {key: value for key, value in raw.items() if key != DERIVED}
    if entries:
        out[DERIVED] = entries
    return _rederived(out)


def _rederived(raw: Raw) -> Raw:
    """The answers with each derived answer worked out again from the others (own figures stay)."""
    out = dict(raw)
    entries = raw.get(DERIVED) or []
    for step in dict.fromkeys(entry.split(".", 1)[0] for entry in entries):
        section = out.get(step)
        if not isinstance(section, dict):
            continue
        names = {entry.split(".", 1)[1] for entry in entries if entry.split(".", 1)[0] == step}
        own = {key: value for key, value in section.items() if key not in names}
        defaults = derived_defaults(out, step, own)
        out[step] = {**section, **{name: defaults[name].value for name in names if name in defaults}}
    return out
