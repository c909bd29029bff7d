"""Selection questionnaire pages: one step per page (no JavaScript), results, checklist with hand ticks."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from flask import Response, abort, current_app, flash, jsonify, redirect, render_template, request, url_for
from flask_babel import get_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from app.accounts.auth import has_role, role_required
from app.advice import questionnaire
from app.advice.answers import SECTIONS, validate_step
from app.advice.knowledge import load
from app.advice.numbers import fmt
from app.advice.requirements import preview, storage_name, storage_types_writing
from app.cases import cases as service
from app.core.db import get_session
from app.core.errors import Conflict, FieldError, InvalidInput
from app.core.limits import parse_id
from app.models.enums import Role
from app.web import bp
from app.web.forms import FieldSpec, FormSpec, bind, display_values, parse_form, split_errors
from app.web.nav import nav_item

nav_item(
    "web.cases",
    _l("选型问卷"),
    order=40,
    active=("web.case_new", "web.case_step", "web.case_detail", "web.case_checklist"),
)


# Offers listed per group (eligible / excluded) on the result page; the CLI and API can list all.
PAGE_OFFERS = 100


def _lang() -> str:
    return "en" if str(get_locale() or "zh") == "en" else "zh"


def _pick(zh: Any, en: Any) -> Any:
    return en if _lang() == "en" else zh


@dataclass(frozen=True)
class CaseField(FieldSpec):
    """A questionnaire input with its own label (the provider field labels do not apply here)."""

    text: Any = None

    @property
    def label(self) -> Any:
        """The question's label."""
        return self.text


# ---------------------------------------------------------------- choices
def _kinds(_context: Any) -> list[tuple[str, Any]]:
    return [
        (key, _pick(kind["label_zh"], kind["label_en"])) for key, kind in load("scenarios")["kinds"].items()
    ]


def _batch_kinds(_context: Any) -> list[tuple[str, Any]]:
    return [("training", _("离线训练")), ("rendering", _("渲染"))]


def _precisions(_context: Any) -> list[tuple[str, Any]]:
    return [(value, value) for value in ("bf16", "fp16", "fp32", "tf32", "fp8")]


def _sources(_context: Any) -> list[tuple[str, Any]]:
    return [
        ("office_upload", _("从办公室上传")),
        ("object_storage", _("从对象存储拉取")),
        ("at_provider", _("已在服务商处")),
    ]


def _criteria(_context: Any) -> list[tuple[str, Any]]:
    return [(key, _pick(c["label_zh"], c["label_en"])) for key, c in load("scoring")["criteria"].items()]


def _levels(_context: Any) -> list[tuple[str, Any]]:
    return [("0", _("不要求"))] + [
        (str(level), _("%(level)s 级及以上", level=level)) for level in range(1, 6)
    ]


STEP_TITLES = {
    "workload": _l("任务类型"),
    "compute": _l("算力规模"),
    "model": _l("模型与步长"),
    "data": _l("数据集"),
    "site": _l("办公室与上行"),
    "users": _l("用户与时延"),
    "checkpoint": _l("检查点"),
    "budget": _l("预算与优先级"),
    "compliance": _l("合规与带宽"),
}

STEP_FIELDS: dict[str, tuple[CaseField, ...]] = {
    "workload": (
        CaseField("kind", "select", _kinds, width=6, text=_l("GPU 用来做什么")),
        CaseField("title", width=6, text=_l("案例名称"), help=_l("留空则按任务类型和日期命名")),
        CaseField(
            "batch_kind",
            "select",
            _batch_kinds,
            blank=_l("（不适用）"),
            width=6,
            text=_l("离线任务的类型"),
            help=_l("只在选择“离线训练 / 渲染”时需要"),
        ),
    ),
    "compute": (
        CaseField(
            "nodes",
            "number",
            width=3,
            text=_l("节点数"),
            help=_l("一台 GPU 服务器算一个节点；单机训练只用 1 个"),
        ),
        CaseField(
            "gpus_per_node",
            "number",
            width=3,
            text=_l("每节点 GPU 数"),
            help=_l("每台服务器插几张 GPU，训练服务器常见 8 张"),
        ),
        CaseField(
            "gpu_models",
            width=6,
            text=_l("偏好的 GPU 型号"),
            help=_l("按偏好顺序，用逗号分隔，如 H800, A800"),
        ),
        CaseField(
            "min_gpu_memory_gb",
            "number",
            width=3,
            text=_l("每卡最少显存（GB）"),
            help=_l("模型和数据要放进一张卡所需的显存；不确定可不填"),
        ),
        CaseField("gpu_strict", "checkbox", width=6, text=_l("只接受上面列出的型号")),
    ),
    "model": (
        CaseField(
            "parameters_billion",
            "decimal",
            width=3,
            text=_l("参数量（十亿）"),
            help=_l("模型有多少参数，以十亿计：7B 模型填 7，70B 模型填 70"),
        ),
        CaseField(
            "precision",
            "select",
            _precisions,
            width=3,
            text=_l("梯度精度"),
            help=_l("训练时梯度的数值格式，决定每个参数占几个字节；大模型训练多用 bf16，不确定就选 bf16"),
        ),
        CaseField(
            "target_step_seconds",
            "decimal",
            width=3,
            text=_l("目标步长（秒）"),
            help=_l(
                "训练一步（一次前向、反向和参数更新）要花的秒数，"
                "可从训练日志的 step time 或 it/s 的倒数读出；"
                "它取决于 GPU、批大小和代码，无法只按参数量推算。步长越短，节点间同步要越快"
            ),
        ),
        CaseField(
            "sync_share",
            "decimal",
            width=3,
            text=_l("同步占步长的上限"),
            help=_l("0-1 之间，默认 0.3：梯度同步最多占一步时间的 30%"),
        ),
    ),
    "data": (
        CaseField(
            "dataset_gb",
            "decimal",
            width=3,
            text=_l("数据集大小（GB）"),
            help=_l("训练要读的全部数据的大小，决定上传要多久"),
        ),
        CaseField("source", "select", _sources, width=3, text=_l("数据从哪里来")),
        CaseField(
            "samples_per_second",
            "decimal",
            width=3,
            text=_l("读取速度（样本/秒）"),
            help=_l("全部 GPU 每秒合计读多少个样本（如图片、文本块），可不填"),
        ),
        CaseField(
            "sample_kb",
            "decimal",
            width=3,
            text=_l("平均样本大小（KB）"),
            help=_l("一个样本平均多大，可不填；和读取速度一起决定存储要多少 IOPS"),
        ),
    ),
    "site": (
        CaseField(
            "office_city", width=6, text=_l("办公室所在城市"), help=_l("地级市名称，如 北京、深圳、乌兰察布")
        ),
        CaseField(
            "uplink_mbps",
            "decimal",
            width=6,
            text=_l("办公室上行带宽（Mbps）"),
            help=_l("宽带的上传速度（不是下载速度），测速网站可查；从办公室上传数据时必填"),
        ),
    ),
    "users": (
        CaseField(
            "user_cities", width=12, text=_l("用户所在城市"), help=_l("用逗号分隔，如 上海, 杭州, 南京")
        ),
        CaseField(
            "latency_budget_ms",
            "decimal",
            width=4,
            text=_l("可接受的总响应时间（毫秒）"),
            help=_l("用户从发出请求到收到回答能接受多久；往返超过 300 毫秒就会觉得慢"),
        ),
        CaseField(
            "model_time_ms",
            "decimal",
            width=4,
            text=_l("模型计算时间（毫秒）"),
            help=_l("模型算出一次回答的时间，不含网络；通常几百毫秒"),
        ),
    ),
    "checkpoint": (
        CaseField(
            "size_gb",
            "decimal",
            width=4,
            text=_l("检查点大小（GB）"),
            help=_l("保存一次训练进度要写多少数据：权重约为参数量 × 每参数字节数，含优化器状态时大好几倍"),
        ),
        CaseField(
            "interval_minutes",
            "decimal",
            width=4,
            text=_l("保存间隔（分钟）"),
            help=_l("多久保存一次检查点，可不填"),
        ),
        CaseField(
            "acceptable_stall_seconds",
            "decimal",
            width=4,
            text=_l("可接受的停顿（秒）"),
            help=_l("保存检查点时训练暂停等待写完，能接受停多少秒；决定存储要写多快"),
        ),
    ),
    "budget": (
        CaseField(
            "monthly_cny", "decimal", width=3, text=_l("每月预算（元）"), help=_l("留空则不按预算排除")
        ),
        CaseField("hours_per_month", "decimal", width=3, text=_l("每月使用小时数"), help=_l("全月为 720")),
        CaseField("contract_months", "number", width=3, text=_l("合同期（月）")),
        CaseField("priorities", "checks", _criteria, width=12, text=_l("最看重的几项（最多 3 项）")),
    ),
    "compliance": (
        CaseField("iso27001", "checkbox", width=4, text=_l("要求 ISO 27001")),
        CaseField("dengbao_level", "select", _levels, width=4, text=_l("等保级别要求")),
        CaseField(
            "dedicated_bandwidth",
            "tristate",
            width=4,
            text=_l("要求独享带宽"),
            help=_l("“未知”表示按任务类型的默认值"),
        ),
    ),
}
FORMS = {key: FormSpec(key, SECTIONS[key], fields) for key, fields in STEP_FIELDS.items()}


def _actor() -> service.Actor:
    return service.Actor(current_user.id, current_user.username)


def _values_for(step: str, stored: dict[str, Any]) -> dict[str, Any]:
    spec = FORMS[step]
    values = {**spec.defaults(), **stored}
    shown = display_values(spec, values)
    if step == "compliance" and "dengbao_level" in shown and shown["dengbao_level"] == "":
        shown["dengbao_level"] = "0"
    return shown


def _stored_values(raw: dict[str, Any], step: str) -> dict[str, Any]:
    """A step's stored answers as the inputs show them; blank or derived answers show today's default."""
    derived = set(raw.get(questionnaire.DERIVED) or [])
    own = {name: value for name, value in raw.get(step, {}).items() if f"{step}.{name}" not in derived}
    stored = dict(raw.get(step, {}))
    for name, default in questionnaire.derived_defaults(raw, step, own).items():
        if own.get(name) is None:
            stored[name] = default.value
    return _values_for(step, stored)


# ---------------------------------------------------------------- what each answer changes
# The requirement each question's effect line shows (one question per requirement, so no line repeats).
EFFECTS: dict[str, dict[str, str]] = {
    "compute": {"gpus_per_node": "gpus_total", "nodes": "allreduce_gb"},
    "model": {"parameters_billion": "gradient_gb", "target_step_seconds": "intranet_gbps_needed"},
    "data": {"sample_kb": "read_iops", "dataset_gb": "upload_hours"},
    "site": {"uplink_mbps": "upload_hours"},
    "users": {"model_time_ms": "network_rtt_budget_ms"},
    "checkpoint": {"acceptable_stall_seconds": "checkpoint_write_mb_s"},
    "budget": {"monthly_cny": "budget_per_gpu_hour"},
}
# Step times the step-time question shows as examples while it is blank.
EXAMPLE_STEP_SECONDS = (1, 10, 60)


def _rdma_line(step_seconds: Any, gbps: str, verdict: Any) -> str:
    if verdict == "required":
        return _("%(step)s 秒一步需要 %(gbps)s：必须 RDMA", step=step_seconds, gbps=gbps)
    if verdict == "recommended":
        return _("%(step)s 秒一步需要 %(gbps)s：建议 RDMA", step=step_seconds, gbps=gbps)
    return _("%(step)s 秒一步需要 %(gbps)s：以太网 TCP 即可", step=step_seconds, gbps=gbps)


def _write_line(quantity: Any) -> str:
    lang = _lang()
    fits = [storage_name(name, lang) for name in storage_types_writing(float(quantity.value))]
    rate = quantity.display(lang)
    if not fits:
        return _("每次保存需要持续写入 %(rate)s：按典型写速没有一种存储够快", rate=rate)
    types = (", " if lang == "en" else "、").join(fits)
    return _("每次保存需要持续写入 %(rate)s：按典型写速够快的存储有%(types)s", rate=rate, types=types)


def _effect(quantity: Any, quantities: dict[str, Any], step_seconds: float | None) -> dict[str, str]:
    """One "what this answer changes" line, with the arithmetic behind it."""
    lang = _lang()
    how = quantity.arithmetic_en if lang == "en" else quantity.arithmetic_zh
    if quantity.key == "intranet_gbps_needed" and step_seconds is not None:
        verdict = quantities["rdma"].value if "rdma" in quantities else None
        return {"text": _rdma_line(fmt(step_seconds), quantity.display(lang), verdict), "how": how}
    if quantity.key == "checkpoint_write_mb_s":
        return {"text": _write_line(quantity), "how": how}
    label = quantity.label_en[:1].upper() + quantity.label_en[1:] if lang == "en" else quantity.label_zh
    return {"text": _("%(label)s：%(value)s", label=label, value=quantity.display(lang)), "how": how}


def _step_examples(raw: dict[str, Any]) -> list[dict[str, str]]:
    """While the step time is blank: what a few step times would need."""
    lines = []
    for seconds in EXAMPLE_STEP_SECONDS:
        model = {**(raw.get("model") or {}), "target_step_seconds": seconds}
        quantities = preview({**raw, "model": model})
        needed = quantities.get("intranet_gbps_needed")
        if needed is None:
            return []
        verdict = quantities["rdma"].value if "rdma" in quantities else None
        line = _rdma_line(fmt(seconds), needed.display(_lang()), verdict)
        lines.append({"text": _("例如 %(line)s", line=line), "how": ""})
    return lines


def effects_for(raw: dict[str, Any], step: str) -> dict[str, list[dict[str, str]]]:
    """For each question of `step`, what the answers so far change (worked out as the result page does)."""
    quantities = preview(raw)
    model = raw.get("model") if isinstance(raw.get("model"), dict) else {}
    step_seconds = questionnaire.positive_number(model.get("target_step_seconds"))
    out: dict[str, list[dict[str, str]]] = {name: [] for name in EFFECTS.get(step, {})}
    for name, key in EFFECTS.get(step, {}).items():
        if key in quantities:
            out[name].append(_effect(quantities[key], quantities, step_seconds))
    if step == "model" and step_seconds is None:
        out["target_step_seconds"] = _step_examples(raw)
    return out


def _posted(values: dict[str, Any]) -> dict[str, Any]:
    """The page's values as answers to preview (blank inputs left out)."""
    return {name: value for name, value in values.items() if value not in ("", None, [])}


def _questions(
    raw: dict[str, Any], step: str, values: dict[str, Any], by_field: dict[str, list[str]]
) -> tuple[list[Any], dict[str, Any]]:
    """The bound inputs (required ones marked) and, per input, its derived default and effect lines."""
    spec = FORMS[step]
    shown = _posted(values)
    required = questionnaire.required_fields(raw, step, shown) if raw else set()
    fields = [
        replace(field, required=True) if field.name in required else field
        for field in bind(spec, values, by_field)
    ]
    defaults = questionnaire.derived_defaults(raw, step, shown) if raw else {}
    effects = effects_for({**raw, step: shown}, step) if raw else {}
    extras = {
        field.name: {"default": defaults.get(field.name), "effects": effects.get(field.name)}
        for field in fields
        if field.name in defaults or field.name in effects
    }
    return fields, extras


def _step_links(case: Any, raw: dict[str, Any]) -> list[dict[str, Any]]:
    keys = questionnaire.steps_for(raw)
    return [
        {
            "key": key,
            "title": STEP_TITLES[key],
            "answered": key in raw,
            "url": url_for("web.case_step", case_id=case.id, step=key) if case is not None else None,
        }
        for key in keys
    ]


def _render_step(
    case: Any, step: str, values: dict[str, Any], errors: list[FieldError], version: Any, status: int = 200
) -> Any:
    spec = FORMS[step]
    prefix = f"{step}."
    local = [
        FieldError(e.field.removeprefix(prefix), e.message) if e.field.startswith(prefix) else e
        for e in errors
    ]
    by_field, general = split_errors(spec, local)
    raw = case.answers if case is not None else {}
    keys = questionnaire.steps_for(raw) if case is not None else ["workload"]
    position = keys.index(step) + 1 if step in keys else 1
    fields, extras = _questions(raw, step, values, by_field)
    html = render_template(
        "cases/step.html",
        case=case,
        step=step,
        step_title=STEP_TITLES[step],
        steps=_step_links(case, raw) if case is not None else [],
        position=position,
        total=len(keys) if case is not None else None,
        fields=fields,
        extras=extras,
        general_errors=general,
        conflict=any(error.field == "version" for error in errors),
        version=version,
        is_first=position == 1,
        is_last=case is not None and step == keys[-1],
        action=url_for("web.case_step", case_id=case.id, step=step)
        if case is not None
        else url_for("web.case_new"),
        preview_url=url_for("web.case_step_preview", case_id=case.id, step=step)
        if case is not None and extras
        else None,
    )
    return html, status


def _step_errors_general(errors: list[FieldError], current: str) -> list[FieldError]:
    """Every error: the current step's stay under their inputs, other steps' name the step and question."""
    out = []
    for error in errors:
        section, _dot, rest = error.field.partition(".")
        title = STEP_TITLES.get(section)
        if title is None or (section == current and rest):
            out.append(error)
        elif not rest:
            out.append(FieldError("", _("%(step)s：本步尚未填写", step=title)))
        else:
            name = rest.split("[", 1)[0].split(".", 1)[0]
            label = next((f.text for f in STEP_FIELDS[section] if f.name == name), name)
            out.append(FieldError("", f"{title} · {label}: {error.message}"))
    return out


# ---------------------------------------------------------------- pages
@bp.get("/cases")
@role_required(Role.viewer)
def cases() -> Any:
    """Procurement cases, newest first."""
    rows = service.list_cases(get_session())
    kinds = dict(_kinds(None))
    return render_template("cases/list.html", cases=rows, kinds=kinds)


@bp.route("/cases/new", methods=["GET", "POST"])
@role_required(Role.analyst)
def case_new() -> Any:
    """First step: the workload kind; posting it creates the draft case."""
    if request.method == "GET":
        return _render_step(None, "workload", _values_for("workload", {}), [], None)
    data = parse_form(FORMS["workload"], request.form)
    try:
        case = service.start_case(get_session(), workload=data, owner=_actor())
    except InvalidInput as exc:
        return _render_step(
            None, "workload", display_values(FORMS["workload"], data), exc.errors, None, exc.status
        )
    return redirect(url_for("web.case_step", case_id=case.id, step=case.step))


@bp.route("/cases/<int:case_id>/steps/<step>", methods=["GET", "POST"])
@role_required(Role.analyst)
def case_step(case_id: int, step: str) -> Any:
    """One questionnaire step: back / next / finish buttons, answers kept in the case on the server."""
    session = get_session()
    case = service.get_case(session, case_id=case_id)
    if step not in FORMS:
        abort(404)
    if request.method == "GET":
        return _render_step(case, step, _stored_values(case.answers, step), [], case.version)
    data = parse_form(FORMS[step], request.form)
    version = request.form.get("version", "")
    nav = request.form.get("nav", "next")
    if nav == "check":
        return _checked(case, step, data, version)
    try:
        case = service.save_step(session, case_id=case_id, step=step, data=data, version=version)
    except (InvalidInput, Conflict) as exc:
        if nav == "back" and not isinstance(exc, Conflict):
            previous = questionnaire.neighbour(case.answers, step, -1)
            if previous:
                flash(_("本页有误，未保存；已返回上一步"), "warning")
                return redirect(url_for("web.case_step", case_id=case_id, step=previous))
        session.expire_all()
        case = service.get_case(session, case_id=case_id)
        filled, _derived = questionnaire.with_defaults(case.answers, step, data)
        return _render_step(case, step, display_values(FORMS[step], filled), exc.errors, version, exc.status)
    if nav == "back":
        target = questionnaire.neighbour(case.answers, step, -1) or step
        return redirect(url_for("web.case_step", case_id=case_id, step=target))
    if nav == "save":
        flash(_("已保存"), "success")
        return redirect(url_for("web.case_step", case_id=case_id, step=step))
    following = questionnaire.neighbour(case.answers, step, 1)
    if nav == "next" and following:
        return redirect(url_for("web.case_step", case_id=case_id, step=following))
    try:
        service.finish_case(session, case_id=case_id, version=case.version)
    except InvalidInput as exc:
        session.expire_all()
        case = service.get_case(session, case_id=case_id)
        errors = _step_errors_general(exc.errors, step)
        return _render_step(
            case, step, _values_for(step, case.answers.get(step, {})), errors, case.version, 422
        )
    flash(_("问卷已完成"), "success")
    return redirect(url_for("web.case_detail", case_id=case_id))


def _checked(case: Any, step: str, data: dict[str, Any], version: str) -> Any:
    """The "check" button: the page again with derived defaults, errors and effects; nothing is saved."""
    filled, _derived = questionnaire.with_defaults(case.answers, step, data)
    errors: list[FieldError] = []
    try:
        validate_step(step, filled, case.answers)
    except InvalidInput as exc:
        errors = exc.errors
    shown = display_values(FORMS[step], filled)
    return _render_step(case, step, shown, errors, version, 422 if errors else 200)


@bp.get("/cases/<int:case_id>/steps/<step>/preview")
@role_required(Role.analyst)
def case_step_preview(case_id: int, step: str) -> Any:
    """JSON for the live hints: each question's derived default and effect lines, from the inputs as typed."""
    case = service.get_case(get_session(), case_id=case_id)
    if step not in FORMS:
        abort(404)
    shown = _posted(display_values(FORMS[step], parse_form(FORMS[step], request.args)))
    _fields, extras = _questions(case.answers, step, shown, {})
    body = {
        name: {
            "default": None
            if extra["default"] is None
            else {
                "value": display_values(FORMS[step], {name: extra["default"].value})[name],
                "basis": extra["default"].basis,
            },
            "effects": extra["effects"] or [],
        }
        for name, extra in extras.items()
    }
    return jsonify({"fields": body})


def _check_link(provider_id: int) -> str | None:
    """The provider's credential-check page, when that page exists."""
    if "web.provider_credentials" in current_app.view_functions:
        return url_for("web.provider_credentials", provider_id=provider_id)
    return url_for("web.provider_detail", provider_id=provider_id)


def step_link(case_id: int) -> Any:
    """A function giving the address of one questionnaire step of the case (nearest misses link it)."""
    return lambda step: url_for("web.case_step", case_id=case_id, step=step) if step in FORMS else None


def _unfinished(case: Any) -> Any:
    """Send an analyst back to the first unfinished step; tell a viewer the case is not finished."""
    if not has_role(current_user, Role.analyst):
        return render_template("cases/unfinished.html", case=case), 409
    step = questionnaire.first_invalid(case.answers) or case.step
    if step not in FORMS:
        step = questionnaire.steps_for(case.answers)[-1]
    flash(_("问卷尚未完成，请继续填写"), "info")
    return redirect(url_for("web.case_step", case_id=case.id, step=step))


@bp.get("/cases/<int:case_id>")
@role_required(Role.viewer)
def case_detail(case_id: int) -> Any:
    """Requirements with their arithmetic, ranked and excluded offers, latency table, FAQ."""
    session = get_session()
    case = service.get_case(session, case_id=case_id)
    if not case.complete:
        return _unfinished(case)
    advice = service.advise_case(session, case_id=case_id, check_link=_check_link)
    return render_template(
        "cases/result.html",
        case=case,
        advice=advice.to_dict(limit=PAGE_OFFERS, step_url=step_link(case_id)),
        page_offers=PAGE_OFFERS,
        lang=_lang(),
        steps=_step_links(case, case.answers),
        history=service.case_history(session, case_id=case_id),
        changed=service.evidence_since(session, case=case),
    )


@bp.post("/cases/<int:case_id>/resave")
@role_required(Role.analyst)
def case_resave(case_id: int) -> Any:
    """Save the case again on the evidence there is now (clears the "evidence changed" notice)."""
    try:
        service.resave_case(get_session(), case_id=case_id, version=request.form.get("version", ""))
    except (Conflict, InvalidInput) as exc:
        for error in exc.errors:
            flash(error.message, "danger")
    else:
        flash(_("已按最新证据重新保存"), "success")
    return redirect(url_for("web.case_detail", case_id=case_id))


@bp.get("/cases/<int:case_id>/answers.json")
@role_required(Role.viewer)
def case_answers(case_id: int) -> Any:
    """The case's answers as JSON (the input of `flask advise`)."""
    case = service.get_case(get_session(), case_id=case_id)
    body = json.dumps(case.answers, ensure_ascii=False, indent=2)
    return Response(
        body,
        mimetype="application/json",
        headers={"Content-Disposition": f'attachment; filename="case-{case.id}-answers.json"'},
    )


def _provider_param() -> int | None:
    raw = request.args.get("provider_id", "").strip()
    if not raw:
        return None
    provider_id = parse_id(raw)
    if provider_id is None:
        raise InvalidInput(
            "供应商编号须为正整数 (provider_id must be a positive integer)", field="provider_id"
        )
    return provider_id


@bp.get("/cases/<int:case_id>/checklist")
@role_required(Role.viewer)
def case_checklist(case_id: int) -> Any:
    """The case's checklist, or the checklist for one provider auto-ticked from its evidence."""
    session = get_session()
    case = service.get_case(session, case_id=case_id)
    if not case.complete:
        return _unfinished(case)
    advice = service.advise_case(session, case_id=case_id, check_link=_check_link)
    provider_id = _provider_param()
    ticks = service.ticks_of(session, case_id=case_id)
    providers = {provider.id: provider.name for provider in advice.ranked.table.providers}
    entries = (
        service.provider_checklist(advice, provider_id=provider_id, ticks=ticks)
        if provider_id is not None
        else list(advice.checklist)
    )
    eligible = advice.ranked.eligible_provider_ids()
    return render_template(
        "cases/checklist.html",
        case=case,
        entries=[entry.to_dict() for entry in entries],
        providers=sorted(providers.items(), key=lambda item: (item[0] not in eligible, item[1])),
        eligible=eligible,
        provider_id=provider_id,
        provider_name=providers.get(provider_id) if provider_id else None,
        lang=_lang(),
        errors={},
    )


@bp.post("/cases/<int:case_id>/checklist/tick")
@role_required(Role.analyst)
def case_tick(case_id: int) -> Any:
    """Tick or untick one item by hand with a comment and an optional evidence link (audited)."""
    session = get_session()
    form = request.form
    provider_raw = form.get("provider_id", "").strip()
    provider_id = parse_id(provider_raw)
    if provider_raw and provider_id is None:
        raise InvalidInput(
            "供应商编号须为正整数 (provider_id must be a positive integer)", field="provider_id"
        )
    item_key = form.get("item_key", "")
    try:
        service.tick_item(
            session,
            case_id=case_id,
            item_key=item_key,
            provider_id=provider_id,
            done=form.get("done", "1") == "1",
            comment=form.get("comment", ""),
            evidence_url=form.get("evidence_url", ""),
            actor=_actor(),
        )
    except InvalidInput as exc:
        for error in exc.errors:
            flash(f"{item_key}: {error.message}", "danger")
    else:
        flash(_("已记录"), "success")
    target = (
        url_for("web.case_checklist", case_id=case_id, provider_id=provider_id)
        if provider_id
        else url_for("web.case_checklist", case_id=case_id)
    )
    return redirect(f"{target}#item-{item_key}")
