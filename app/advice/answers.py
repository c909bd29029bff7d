"""The questionnaire's answers: pydantic sections, workload-kind rules and one validation entry point.

Every error names its field as "section.field" and says in Chinese and English what is accepted.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from enum import StrEnum
from operator import attrgetter
from typing import Annotated, Any, Optional

from flask_babel import gettext
from flask_babel import lazy_gettext as _l
from flask_babel.speaklater import LazyString
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from app.advice import cities
from app.core.errors import FieldError, InvalidInput, from_validation_error
from app.models.fields import blank_to_none, resolve_province_name, split_list


class WorkloadKind(StrEnum):
    """What the GPUs will be used for; decides which questions are asked and what matters most."""

    interactive_inference = "interactive_inference"
    distributed_training = "distributed_training"
    single_node_training = "single_node_training"
    offline_batch = "offline_batch"


class BatchKind(StrEnum):
    """Offline batch work: training that runs for days, or rendering."""

    training = "training"
    rendering = "rendering"


class Precision(StrEnum):
    """Numeric precision of the gradients exchanged between nodes."""

    fp32 = "fp32"
    tf32 = "tf32"
    bf16 = "bf16"
    fp16 = "fp16"
    fp8 = "fp8"


class DataSource(StrEnum):
    """Where the training data comes from."""

    office_upload = "office_upload"
    object_storage = "object_storage"
    at_provider = "at_provider"


class Residency(StrEnum):
    """Where the data must stay: anywhere, in mainland China, or in one province."""

    none = "none"
    mainland = "mainland"
    province = "province"


class Criterion(StrEnum):
    """Ranking criteria a buyer may put first."""

    cost = "cost"
    gpu = "gpu"
    intranet = "intranet"
    storage = "storage"
    latency = "latency"
    bandwidth = "bandwidth"
    compliance = "compliance"
    credentials = "credentials"
    transparency = "transparency"


def _city(value: str) -> str:
    city = cities.lookup(value)
    if city is None:
        raise ValueError(
            gettext(
                "未知城市“%(value)s”：请填写地级市名称，如 %(examples)s",
                value=value,
                examples=cities.examples(),
            )
        )
    return city.name


def _gpu_model(value: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", value).split()).upper()


City = Annotated[str, AfterValidator(_city)]
GpuModel = Annotated[str, Field(min_length=1, max_length=60), AfterValidator(_gpu_model)]


_COMMAS = re.compile(r"[,，、;；\n]+")


def _list(value: Any) -> Any:
    """A list, or text separated by commas, 、 or semicolons (spaces stay: "RTX 4090" is one model)."""
    if isinstance(value, str):
        return [part.strip() for part in _COMMAS.split(value) if part.strip()]
    return split_list(value)


def _unique(values: list[Any]) -> list[Any]:
    if len(set(values)) != len(values):
        raise ValueError(gettext("有重复项"))
    return values


class Section(BaseModel):
    """Base of every section: unknown keys are refused, blank text counts as not given."""

    model_config = ConfigDict(extra="forbid", use_enum_values=False)

    @model_validator(mode="before")
    @classmethod
    def _blanks(cls, data: Any) -> Any:
        """Blank text becomes None; a None for a field that has a default means "use the default"."""
        return cls.cleaned(data) if isinstance(data, dict) else data

    @classmethod
    def cleaned(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The input with blank text as None and dropped where the field has a default."""
        cleaned = {key: blank_to_none(value) for key, value in data.items()}
        return {
            key: value
            for key, value in cleaned.items()
            if value is not None or key not in cls.model_fields or cls.model_fields[key].is_required()
        }


class WorkloadSection(Section):
    """Step 1: what kind of work and what to call the case."""

    kind: WorkloadKind
    title: Optional[str] = Field(default=None, max_length=120)
    batch_kind: Optional[BatchKind] = None


class ComputeSection(Section):
    """Nodes, GPUs per node and GPU preferences."""

    nodes: int = Field(default=1, ge=1, le=1024)
    gpus_per_node: int = Field(ge=1, le=64)
    gpu_models: Annotated[
        list[GpuModel], BeforeValidator(_list), AfterValidator(_unique), Field(max_length=10)
    ] = Field(default_factory=list)
    gpu_strict: bool = False
    min_gpu_memory_gb: Optional[int] = Field(default=None, ge=1, le=2048)


class ModelSection(Section):
    """Model size, gradient precision and the step time the buyer aims for."""

    parameters_billion: Optional[float] = Field(default=None, gt=0, le=100_000)
    precision: Precision = Precision.bf16
    target_step_seconds: Optional[float] = Field(default=None, gt=0, le=86_400)
    # "Not sure" of the step time: no offer is excluded on a guess; each shows the shortest step it supports.
    step_unknown: bool = False
    sync_share: float = Field(default=0.3, gt=0, le=1)

    @model_validator(mode="after")
    def _unsure_wins(self) -> ModelSection:
        """A step time typed before "not sure" was ticked is not kept (the advice would not read it)."""
        if self.step_unknown:
            self.target_step_seconds = None
        return self


class DataSection(Section):
    """Dataset size, where it comes from and how fast the loader reads it."""

    dataset_gb: Optional[float] = Field(default=None, ge=0, le=100_000_000)
    source: DataSource = DataSource.office_upload
    samples_per_second: Optional[float] = Field(default=None, gt=0, le=100_000_000)
    sample_kb: Optional[float] = Field(default=None, gt=0, le=10_000_000)


class SiteSection(Section):
    """Where the team sits and how fast its uplink is."""

    office_city: City
    uplink_mbps: Optional[float] = Field(default=None, gt=0, le=1_000_000)
    # "Not sure" of the uplink: the upload time is shown for typical uplinks instead of the buyer's own.
    uplink_unknown: bool = False

    @model_validator(mode="after")
    def _unsure_wins(self) -> SiteSection:
        """An uplink typed before "not sure" was ticked is not kept."""
        if self.uplink_unknown:
            self.uplink_mbps = None
        return self


class UsersSection(Section):
    """Interactive inference: where the users are and how long they may wait."""

    user_cities: Annotated[
        list[City], BeforeValidator(_list), AfterValidator(_unique), Field(max_length=20)
    ] = Field(default_factory=list)
    latency_budget_ms: float = Field(default=300, gt=0, le=60_000)
    model_time_ms: float = Field(default=200, ge=0, le=60_000)


class CheckpointSection(Section):
    """Checkpoint size, how often one is written and how long training may pause for it."""

    size_gb: Optional[float] = Field(default=None, gt=0, le=1_000_000)
    interval_minutes: Optional[float] = Field(default=None, gt=0, le=100_000)
    acceptable_stall_seconds: Optional[float] = Field(default=None, gt=0, le=86_400)


class BudgetSection(Section):
    """Monthly budget, how many hours a month the GPUs run, contract length and what matters most."""

    monthly_cny: Optional[float] = Field(default=None, gt=0, le=10_000_000_000)
    hours_per_month: float = Field(default=720, gt=0, le=744)
    contract_months: int = Field(default=12, ge=1, le=120)
    priorities: Annotated[
        list[Criterion], BeforeValidator(_list), AfterValidator(_unique), Field(max_length=3)
    ] = Field(default_factory=list)


class ComplianceSection(Section):
    """Certifications the buyer requires and whether bandwidth must be dedicated."""

    iso27001: bool = False
    dengbao_level: int = Field(default=0, ge=0, le=5)
    dedicated_bandwidth: Optional[bool] = None
    residency: Residency = Residency.none
    residency_province: Annotated[Optional[str], BeforeValidator(resolve_province_name)] = None

    @model_validator(mode="after")
    def _province_only_when_asked(self) -> ComplianceSection:
        """A province left over from an earlier choice is not kept when the data need not stay in one."""
        if self.residency != Residency.province:
            self.residency_province = None
        return self


def _derived_names(values: list[str]) -> list[str]:
    """Each entry names a question as "section.field"."""
    for value in values:
        section, _dot, name = value.partition(".")
        if name not in getattr(SECTIONS.get(section), "model_fields", {}):
            raise ValueError(
                gettext("“%(value)s”不是问卷中的问题：请写成“部分.字段”，如 checkpoint.size_gb", value=value)
            )
    return sorted(set(values))


class Answers(BaseModel):
    """Everything the questionnaire asks; sections not asked for a workload kind keep their defaults."""

    model_config = ConfigDict(extra="forbid")

    workload: WorkloadSection
    compute: ComputeSection
    model: ModelSection = Field(default_factory=ModelSection)
    data: DataSection = Field(default_factory=DataSection)
    site: SiteSection
    users: UsersSection = Field(default_factory=UsersSection)
    checkpoint: CheckpointSection = Field(default_factory=CheckpointSection)
    budget: BudgetSection = Field(default_factory=BudgetSection)
    compliance: ComplianceSection = Field(default_factory=ComplianceSection)
    # Answers the questionnaire filled with a default worked out from earlier answers ("section.field").
    derived: Annotated[list[str], AfterValidator(_derived_names), Field(max_length=40)] = Field(
        default_factory=list
    )

    @property
    def kind(self) -> WorkloadKind:
        """The workload kind."""
        return self.workload.kind

    @property
    def trains(self) -> bool:
        """Whether the work is training (and so writes checkpoints)."""
        return self.kind in (WorkloadKind.distributed_training, WorkloadKind.single_node_training) or (
            self.kind == WorkloadKind.offline_batch and self.workload.batch_kind == BatchKind.training
        )


SECTIONS: dict[str, type[Section]] = {
    "workload": WorkloadSection,
    "compute": ComputeSection,
    "model": ModelSection,
    "data": DataSection,
    "site": SiteSection,
    "users": UsersSection,
    "checkpoint": CheckpointSection,
    "budget": BudgetSection,
    "compliance": ComplianceSection,
}

# ---------------------------------------------------------------- rules that depend on the workload kind
KindRule = Callable[[Answers], Iterator[FieldError]]
KIND_RULES: list[tuple[str, KindRule]] = []


class Unanswered(Exception):
    """A kind rule read a field whose answer is missing or invalid, so the rule cannot judge."""


class PartialSection:
    """The fields of one section that validated (defaults for the rest); reading another raises Unanswered."""

    def __init__(self, name: str, values: dict[str, Any]) -> None:
        self._name = name
        self._values = values

    def __getattr__(self, field: str) -> Any:
        try:
            return self._values[field]
        except KeyError:
            raise Unanswered(f"{self._name}.{field}") from None


def kind_rule(section: str) -> Callable[[KindRule], KindRule]:
    """Register a rule that checks one field of `section` against the workload kind."""

    def decorator(check: KindRule) -> KindRule:
        KIND_RULES.append((section, check))
        return check

    return decorator


def _missing(path: str, why: str) -> FieldError:
    return FieldError(path, gettext("必填项：%(why)s", why=why))


def _require(path: str, applies: Callable[[Answers], bool], why: LazyString) -> None:
    """Register a kind rule: the answer at `path` ("section.field") is required when `applies(answers)`."""
    section, field = path.split(".")

    def check(answers: Answers) -> Iterator[FieldError]:
        if applies(answers) and getattr(getattr(answers, section), field) is None:
            yield _missing(path, str(why))

    kind_rule(section)(check)


def _kind_is(*kinds: WorkloadKind) -> Callable[[Answers], bool]:
    """Whether the workload is of one of `kinds`."""
    return lambda answers: answers.kind in kinds


_OFFLINE_BATCH = _kind_is(WorkloadKind.offline_batch)
_DISTRIBUTED = _kind_is(WorkloadKind.distributed_training)
_NOT_INFERENCE = _kind_is(
    WorkloadKind.distributed_training, WorkloadKind.single_node_training, WorkloadKind.offline_batch
)
_TRAINS = attrgetter("trains")

# The kind rules run (and list their errors) in the order they are registered below.
_require("workload.batch_kind", _OFFLINE_BATCH, _l("离线任务须说明是训练还是渲染"))


@kind_rule("compute")
def _nodes(answers: Answers) -> Iterator[FieldError]:
    nodes = answers.compute.nodes
    if answers.kind == WorkloadKind.distributed_training and nodes < 2:
        yield FieldError("compute.nodes", gettext("多机分布式训练至少 2 个节点"))
    if answers.kind == WorkloadKind.single_node_training and nodes != 1:
        yield FieldError(
            "compute.nodes",
            gettext("单机训练只用 1 个节点；多个节点请选“多机分布式训练”"),
        )


_require("model.parameters_billion", _DISTRIBUTED, _l("估算梯度同步流量需要参数量"))
_require(
    "model.target_step_seconds",
    lambda answers: _DISTRIBUTED(answers) and not answers.model.step_unknown,
    _l("估算所需内网带宽需要目标步长；不知道就勾选“不确定”"),
)
_require("data.dataset_gb", _NOT_INFERENCE, _l("训练和离线任务须给出数据集大小"))


@kind_rule("site")
def _uplink(answers: Answers) -> Iterator[FieldError]:
    if answers.kind == WorkloadKind.interactive_inference or answers.site.uplink_mbps is not None:
        return
    if answers.site.uplink_unknown:
        return
    if answers.data.source == DataSource.office_upload and (answers.data.dataset_gb or 0) > 0:
        yield _missing(
            "site.uplink_mbps",
            gettext("数据从办公室上传时须给出上行带宽；不知道就勾选“不确定”"),
        )


@kind_rule("users")
def _user_cities(answers: Answers) -> Iterator[FieldError]:
    if answers.kind == WorkloadKind.interactive_inference and not answers.users.user_cities:
        yield _missing(
            "users.user_cities",
            gettext("交互式推理须说明用户所在城市"),
        )


@kind_rule("users")
def _model_time(answers: Answers) -> Iterator[FieldError]:
    if answers.kind != WorkloadKind.interactive_inference:
        return
    if answers.users.model_time_ms >= answers.users.latency_budget_ms:
        yield FieldError(
            "users.model_time_ms",
            gettext("模型计算时间须小于时延预算，否则网络没有余量"),
        )


_require("checkpoint.size_gb", _TRAINS, _l("训练须给出检查点大小"))
_require("checkpoint.acceptable_stall_seconds", _TRAINS, _l("训练须给出保存检查点时可接受的停顿"))


_require(
    "compliance.residency_province",
    lambda answers: answers.compliance.residency == Residency.province,
    _l("要求数据留在某个省份时须说明是哪个省份"),
)


def _judged(check: KindRule, answers: Answers) -> list[FieldError]:
    """The rule's errors; a rule that reads an unanswered field judges nothing."""
    try:
        return list(check(answers))
    except Unanswered:
        return []


def kind_errors(answers: Answers, sections: set[str] | None = None) -> list[FieldError]:
    """Errors of the workload-kind rules, optionally only for some sections."""
    return [
        error
        for section, check in KIND_RULES
        if sections is None or section in sections
        for error in _judged(check, answers)
    ]


# ---------------------------------------------------------------- answers that only partly validate
def _valid_fields(model: type[Section], data: Any) -> dict[str, Any]:
    """The section's fields whose answers validate on their own, with defaults for those not given."""
    instance = model.model_construct()
    values = dict(instance.__dict__)
    if not isinstance(data, dict):
        return values if data is None else {}
    for key, value in model.cleaned(data).items():
        values.pop(key, None)
        if key not in model.model_fields:
            continue
        try:
            model.__pydantic_validator__.validate_assignment(instance, key, value)
        except ValidationError:
            continue
        values[key] = getattr(instance, key)
    return values


def provisional(data: dict[str, Any]) -> Answers:
    """Answers built from the fields that validate, to run the kind rules on; the rest are Unanswered.

    A required section that is absent is unanswered as a whole; an optional one keeps its defaults.
    """
    sections = {
        name: PartialSection(
            name,
            {}
            if data.get(name) is None and Answers.model_fields[name].is_required()
            else _valid_fields(model, data.get(name)),
        )
        for name, model in SECTIONS.items()
    }
    return Answers.model_construct(**sections)


def _section_order(error: FieldError) -> int:
    names = list(SECTIONS)
    section = error.field.split(".", 1)[0].split("[", 1)[0]
    return names.index(section) if section in names else len(names)


def _together(found: list[FieldError], rules: list[FieldError]) -> list[FieldError]:
    """Validation errors and kind-rule errors in one list, by section, one message per field."""
    named = {error.field for error in found}
    merged = found + [error for error in rules if error.field not in named]
    return sorted(merged, key=_section_order)


# ---------------------------------------------------------------- entry points
def validate_answers(data: Any) -> Answers:
    """Validate a whole answers document; raise InvalidInput listing every problem by field."""
    if not isinstance(data, dict):
        raise InvalidInput(gettext("答卷须为 JSON 对象"), field="")
    try:
        answers = Answers.model_validate(data)
    except ValidationError as exc:
        found = from_validation_error(exc).errors
        raise InvalidInput(_together(found, kind_errors(provisional(data)))) from None
    errors = kind_errors(answers)
    if errors:
        raise InvalidInput(errors)
    return answers


def validate_section(name: str, data: Any) -> Section:
    """Validate one section on its own (one questionnaire step); errors are named section.field."""
    if name not in SECTIONS:
        raise InvalidInput(gettext("没有这一部分：%(name)s", name=name), field="section")
    try:
        return SECTIONS[name].model_validate(data if data is not None else {})
    except ValidationError as exc:
        raise from_validation_error(exc, prefix=name) from None


def validate_step(name: str, data: Any, answers: dict[str, Any]) -> Section:
    """Validate one step against the stored answers: its section's errors and its kind rules together."""
    data = data if data is not None else {}
    rules = kind_errors(provisional({**answers, name: data}), {name})
    try:
        section = validate_section(name, data)
    except InvalidInput as exc:
        raise InvalidInput(_together(exc.errors, rules)) from None
    if rules:
        raise InvalidInput(rules)
    return section
