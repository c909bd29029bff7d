"""The questionnaire's steps: their fields and choices, the values shown, and what each answer changes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from app.advice import questionnaire
from app.advice.answers import SECTIONS
from app.advice.knowledge import load
from app.advice.numbers import fmt
from app.advice.requirements import preview, storage_name, storage_types_writing
from app.core.i18n import current_language
from app.web import labels
from app.web.forms import FieldSpec, FormSpec, display_values, enum_choices
from app.web.forms import _provinces as provinces_choices


def _pick(zh: Any, en: Any) -> Any:
    return en if current_language() == "en" else zh


@dataclass(frozen=True)
class CaseField(FieldSpec):
    """A questionnaire input with its own label (the provider field labels do not apply here)."""

    text: Any = None

    @property
    def label(self) -> Any:
        """The question's label."""
        return self.text


def kind_choices(_context: Any) -> list[tuple[str, Any]]:
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


def _asked_after_a_choice(name: str, choices: Any, text: Any, help_text: Any) -> CaseField:
    """A select that only one choice of another question calls for (blank: not applicable)."""
    return CaseField(name, "select", choices, blank=_l("（不适用）"), width=6, text=text, help=help_text)


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
        CaseField("kind", "select", kind_choices, width=6, text=_l("GPU 用来做什么")),
        CaseField("title", width=6, text=_l("案例名称"), help=_l("留空则按任务类型和日期命名")),
        _asked_after_a_choice(
            "batch_kind", _batch_kinds, _l("离线任务的类型"), _l("只在选择“离线训练 / 渲染”时需要")
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
                "可从训练日志中的每步耗时读出（日志只给每秒步数时取其倒数）；"
                "它取决于 GPU、批大小和代码，无法只按参数量推算。步长越短，节点间同步要越快"
            ),
        ),
        CaseField(
            "step_unknown",
            "checkbox",
            width=3,
            text=_l("不确定步长"),
            help=_l("不知道就勾选：不按步长排除套餐，改为列出每个套餐的内网能支持的最短步长，待你确认"),
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
        CaseField(
            "uplink_unknown",
            "checkbox",
            width=6,
            text=_l("不确定上行带宽"),
            help=_l("不知道就勾选：按几种常见上行带宽估算上传时间"),
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
        CaseField(
            "residency",
            "select",
            enum_choices(labels.RESIDENCY),
            width=6,
            text=_l("数据存放地要求"),
            help=_l("数据是否必须留在某个省份或中国大陆境内；按机房所在省份筛选套餐"),
        ),
        _asked_after_a_choice(
            "residency_province",
            provinces_choices,
            _l("数据须留在的省份"),
            _l("只在选择“须在指定省份内”时需要"),
        ),
    ),
}


FORMS = {key: FormSpec(key, SECTIONS[key], fields) for key, fields in STEP_FIELDS.items()}


def step_values(step: str, stored: dict[str, Any]) -> dict[str, Any]:
    spec = FORMS[step]
    values = {**spec.defaults(), **stored}
    shown = display_values(spec, values)
    if step == "compliance" and "dengbao_level" in shown and shown["dengbao_level"] == "":
        shown["dengbao_level"] = "0"
    return shown


def stored_step_values(raw: dict[str, Any], step: str) -> dict[str, Any]:
    """A step's stored answers as the inputs show them; blank or derived answers show today's default."""
    derived = set(raw.get(questionnaire.DERIVED) or [])
    own = {name: value for name, value in raw.get(step, {}).items() if f"{step}.{name}" not in derived}
    stored = dict(raw.get(step, {}))
    for name, default in questionnaire.derived_defaults(raw, step, own).items():
        if own.get(name) is None:
            stored[name] = default.value
    return step_values(step, stored)


# The requirement each question's effect line shows (one question per requirement, so no line repeats).
EFFECTS: dict[str, dict[str, str]] = {
    "compute": {"gpus_per_node": "gpus_total", "nodes": "allreduce_gb"},
    "model": {
        "parameters_billion": "gradient_gb",
        "target_step_seconds": "intranet_gbps_needed",
        "step_unknown": "target_step",
    },
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
    lang = current_language()
    fits = [storage_name(name, lang) for name in storage_types_writing(float(quantity.value))]
    rate = quantity.display(lang)
    if not fits:
        return _("每次保存需要持续写入 %(rate)s：按典型写速没有一种存储够快", rate=rate)
    types = (", " if lang == "en" else "、").join(fits)
    return _("每次保存需要持续写入 %(rate)s：按典型写速够快的存储有%(types)s", rate=rate, types=types)


def _effect(quantity: Any, quantities: dict[str, Any], step_seconds: float | None) -> dict[str, str]:
    """One "what this answer changes" line, with the arithmetic behind it."""
    lang = current_language()
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
        line = _rdma_line(fmt(seconds), needed.display(current_language()), verdict)
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
