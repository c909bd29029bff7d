"""What an audit entry changed, in words: labelled fields with labelled before/after values, never keys."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask_babel import lazy_gettext as _l

from app.advice import checklist
from app.advice.questionnaire import DERIVED
from app.core import clock as localtime
from app.core.i18n import current_language
from app.web import bp, labels

# Columns that are bookkeeping on every audited table (who/when is already in the entry itself).
_HIDDEN = {"id", "provider_id", "case_id", "owner_id", "ticked_by_id", "created_by_id", "created_by_name"}

_YES_NO = labels.TRISTATE


@dataclass(frozen=True)
class Change:
    """One changed field: its label and the values before and after, ready to show (None: no value)."""

    label: Any
    before: Any
    after: Any
    verbatim: bool = False  # values as someone typed them (names, notes), shown in their own language


def _change(label: Any, show: Callable[[Any], Any], before: Any, after: Any) -> Change:
    """A change with both values shown by `show` (None stays None: no value before a create)."""
    return Change(
        label,
        None if before is None else show(before),
        None if after is None else show(after),
        verbatim=show is _plain and isinstance(before if after is None else after, str),
    )


def _plain(value: Any) -> Any:
    """A stored value as text a person reads: yes/no, lists joined, numbers without '.0', '—' for nothing."""
    return labels.value_label("", value)


def _choice(choices: Callable[[], dict[str, Any]]) -> Callable[[Any], Any]:
    def show(value: Any) -> Any:
        if isinstance(value, list):
            return ", ".join(str(show(item)) for item in value) if value else "—"
        return choices().get(str(value), _plain(value)) if value is not None else "—"

    return show


def _when(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return localtime.when(localtime.aware(datetime.fromisoformat(value)))
        except ValueError:
            return value
    return _plain(value)


# ---------------------------------------------------------------- procurement cases
def _step_labels() -> dict[str, Any]:
    from app.web.case_steps import STEP_TITLES

    return {**STEP_TITLES, "done": _l("已完成")}


# workload_kind is left out: it repeats the answer "GPU 用来做什么", which the answers diff shows.
CASE_COLUMNS: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "title": (_l("案例名称"), _plain),
    "step": (_l("填写进度"), _choice(_step_labels)),
    "complete": (_l("问卷已填完"), _plain),
    "owner_name": (_l("负责人"), _plain),
}


def _flatten(answers: Any, prefix: str = "") -> dict[str, Any]:
    """{"compute": {"nodes": 2}} as {"compute.nodes": 2}; lists stay whole."""
    if not isinstance(answers, dict):
        return {prefix: answers} if prefix else {}
    flat: dict[str, Any] = {}
    for key, value in answers.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        flat.update(_flatten(value, path) if isinstance(value, dict) else {path: value})
    return flat


def _answer_label_and_show(path: str) -> tuple[Any, Callable[[Any], Any]]:
    """The question behind an answers path ("compute.nodes"), and how to show its values."""
    from app.web.case_steps import STEP_FIELDS, STEP_TITLES

    section, _, name = path.partition(".")
    field = next((f for f in STEP_FIELDS.get(section, ()) if f.name == name), None)
    if field is None:
        return (STEP_TITLES.get(section, _l("其他回答")), _plain)
    show = _plain
    if callable(field.choices):
        choices = field.choices
        show = _choice(lambda: {str(key): text for key, text in choices(None)})
    return (f"{STEP_TITLES.get(section, '')} · {field.text}", show)


def _derived_names(paths: Any) -> Any:
    """The questions answered with a default ("checkpoint.acceptable_stall_seconds"), by their labels."""
    if not isinstance(paths, list):
        return _plain(paths)
    separator = "、" if current_language() == "zh" else "; "
    return separator.join(str(_answer_label_and_show(str(path))[0]) for path in paths) if paths else "—"


def _answer_changes(before: Any, after: Any) -> list[Change]:
    old, new = _flatten(before or {}), _flatten(after or {})
    changes = []
    for path in [*old, *(key for key in new if key not in old)]:
        if old.get(path) != new.get(path):
            if path == DERIVED:  # bookkeeping: which answers were filled in with a default
                label, show = _l("按默认值填写的回答"), _derived_names
            else:
                label, show = _answer_label_and_show(path)
            changes.append(_change(label, show, old.get(path), new.get(path)))
    return changes


def _case_changes(changes: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    for name, (before, after) in changes.items():
        if name == "answers":
            out += _answer_changes(before, after)
        elif name in CASE_COLUMNS:
            out.append(_change(*CASE_COLUMNS[name], before, after))
    return out


# ---------------------------------------------------------------- checklist ticks and trial servers
def _item_titles() -> dict[str, Any]:
    english = current_language() == "en"
    return {item.key: item.title_en if english else item.title_zh for item in checklist.items()}


def _auth_methods() -> dict[str, Any]:
    return {"password": _l("密码"), "key": _l("私钥")}


def _server_names(context: dict[str, Any]) -> Callable[[Any], Any]:
    names = context.get("server_names") or {}
    return lambda value: names.get(value) or _l("试用服务器 #%(id)s", id=value)


def _offer_names(context: dict[str, Any]) -> Callable[[Any], Any]:
    names = context.get("offer_names") or {}
    return lambda value: names.get(value) or _l("套餐 #%(id)s", id=value)


TICK_COLUMNS: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "item_key": (_l("核查项"), _choice(_item_titles)),
    "done": (_l("已核对"), _plain),
    "comment": (_l("备注"), _plain),
    "evidence_url": (_l("核查证据链接"), _plain),
    "ticked_by": (_l("勾选人"), _plain),
    "ticked_at": (_l("勾选时间"), _when),
}

SERVER_COLUMNS: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "name": (_l("名称"), _plain),
    "host": (_l("主机地址"), _plain),
    "port": (_l("SSH 端口"), _plain),
    "username": (_l("登录用户名"), _plain),
    "auth_method": (_l("登录方式"), _choice(_auth_methods)),
    "host_key_type": (_l("主机密钥类型"), _plain),
    "host_key_fingerprint": (_l("主机密钥指纹"), _plain),
    "host_key_pinned_at": (_l("主机密钥确认时间"), _when),
    "peer_address": (_l("对端内网地址"), _plain),
    "notes": (_l("备注"), _plain),
}

EXPORT_COLUMNS: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "number": (_l("报告编号"), _plain),
    "subject_name": (_l("报告对象"), _plain),
    "language": (_l("报告语言"), _choice(lambda: {"zh": _l("中文"), "en": _l("英文")})),
    "verdict": (_l("结论"), _choice(lambda: {**labels.VERDICT, "unchecked": labels.VERDICT["not_verified"]})),
    "pages": (_l("页数"), _plain),
}


def _column_changes(
    changes: dict[str, Any], columns: dict[str, tuple[Any, Callable[[Any], Any]]], extra: dict[str, Any]
) -> list[Change]:
    shown = {**columns, **extra}
    out = []
    for name, pair in changes.items():
        if name in _HIDDEN or name not in shown or len(pair) != 2:
            continue
        out.append(_change(*shown[name], *pair))
    return out


def describe(entry: Any, context: dict[str, Any] | None = None) -> list[Change]:
    """The labelled changes of one audit entry; `context` may map offer_names / server_names to names."""
    return [
        change for change in _describe(entry, context or {}) if _shown(change.before) != _shown(change.after)
    ]


def _shown(value: Any) -> str:
    return "—" if value is None else str(value)


def _describe(entry: Any, context: dict[str, Any]) -> list[Change]:
    changes = entry.changes or {}
    if entry.entity == "procurement_case":
        return _case_changes(changes)
    if entry.entity == "checklist_tick":
        return _column_changes(changes, TICK_COLUMNS, {})
    if entry.entity == "trial_server":
        extra = {
            "offer_id": (_l("对应套餐"), _offer_names(context)),
            "peer_id": (_l("对端试用服务器"), _server_names(context)),
        }
        return _column_changes(changes, SERVER_COLUMNS, extra)
    if entry.entity == "export_record":
        return _column_changes(changes, EXPORT_COLUMNS, {})
    if entry.entity == "invitation":  # issue 14: answers and decisions are read on the review page
        from app.web.invitations import invitation_changes

        return invitation_changes(entry.action, changes)
    return [
        Change(labels.field_label(name), labels.value_label(name, before), labels.value_label(name, after))
        for name, before, after in labels.ordered_changes(changes, entry.entity)
    ]


def subject(entry: Any) -> Any:
    """What the entry is about, in words: "核查清单勾选 · 服务等级协议" rather than checklist_tick #3."""
    what = labels.label(entry.entity, "entity")
    if entry.entity == "checklist_tick":
        from app.core.db import get_session
        from app.models.cases import ChecklistTick

        key = (entry.changes or {}).get("item_key", [None, None])[-1]
        if key is None and entry.entity_id is not None:
            tick = get_session().get(ChecklistTick, entry.entity_id)
            key = tick.item_key if tick is not None else None
        return f"{what} · {_item_titles().get(key, key)}" if key else what
    return what


def actor(entry: Any) -> Any:
    """Who made the change: the user's name, or "系统" for changes made by gpuvet itself (no user)."""
    return actor_name(entry.actor_name) if entry.actor_id is None else entry.actor_name


def actor_name(name: str | None) -> Any:
    """A recorded actor's name as shown: "system" (gpuvet itself) and "invitation:N" (the provider filling in
    questionnaire N, no user) in words."""
    if name and name.startswith("invitation:") and name[11:].isdigit():
        return _l("供应商（尽调问卷 #%(id)s）", id=name[11:])
    return _l("系统") if name == "system" else name


@bp.record_once
def _register(state: Any) -> None:
    state.app.jinja_env.globals["history_changes"] = describe
    state.app.jinja_env.globals["history_subject"] = subject
    state.app.jinja_env.globals["history_actor"] = actor
    state.app.jinja_env.filters["actor_name"] = actor_name
