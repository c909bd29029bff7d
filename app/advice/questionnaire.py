"""The questionnaire's steps: one answers section per step, shown or skipped by workload kind."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from app.advice.answers import SECTIONS, BatchKind, WorkloadKind

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


def pruned(raw: Raw) -> Raw:
    """Answers without the sections this workload kind does not ask for (left from an earlier kind)."""
    keep = set(steps_for(raw))
    return {key: value for key, value in raw.items() if key in keep}


def first_invalid(raw: Raw) -> str | None:
    """The first step whose section does not validate on its own, or None."""
    for key in steps_for(raw):
        try:
            SECTIONS[key].model_validate(raw.get(key) or {})
        except ValidationError:
            return key
    return None
