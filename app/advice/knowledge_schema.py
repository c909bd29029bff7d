"""Schemas of the knowledge YAML files (app/knowledge/**/*.yaml): required keys and whole bilingual texts.

Each file has a pydantic model naming the keys the code relies on; other keys are tolerated, so a
file can grow. Every text pair (`zh` / `en`, `x_zh` / `x_en`) anywhere in a file must have both
languages, non-empty, and read as a whole sentence: not ending in a comma, colon or opening bracket,
brackets and quotes balanced. An unquoted ", " inside a YAML flow mapping ({...}) silently cuts a
text and turns its rest into a key without a value; such a key is reported too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

import yaml
from flask_babel import gettext as _
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

KNOWLEDGE_ROOT = Path(__file__).resolve().parent.parent / "knowledge"

# Characters a finished text never ends with.
_DANGLING = tuple(",，、;；:：([{（【「《“‘-—")
# Opening and closing marks that must pair up within one text.
_PAIRS = ("()", "（）", "[]", "【】", "「」", "《》", "“”", "{}")


def text_problem(text: str) -> str | None:
    """Why a text reads as cut off or broken, or None when it is whole."""
    stripped = text.strip()
    if not stripped:
        return _("文字为空")
    if stripped.endswith(_DANGLING):
        return _("文字以“%(end)s”结尾，像是被截断", end=stripped[-1])
    for opening, closing in _PAIRS:
        if stripped.count(opening) != stripped.count(closing):
            return _("括号或引号不成对：%(pair)s", pair=opening + closing)
    if stripped.count('"') % 2:
        return _("引号不成对：%(quote)s", quote='"')
    return None


def _whole(text: str) -> str:
    problem = text_problem(text)
    if problem:
        raise ValueError(problem)
    return text


Text = Annotated[str, AfterValidator(_whole)]
Number = Union[int, float]


class Loose(BaseModel):
    """A mapping with the keys the code needs; additional keys are tolerated."""

    model_config = ConfigDict(extra="allow")


class Bilingual(Loose):
    """A text in both languages."""

    zh: Text
    en: Text


# ---------------------------------------------------------------- app/knowledge/advice
class Assumption(Bilingual):
    """A constant of the sizing arithmetic with its origin and its explanation."""

    source: Literal["domain", "assumption"]
    value: Optional[Number] = None
    low: Optional[Number] = None
    high: Optional[Number] = None


class StorageAssumptions(Assumption):
    """Typical figures per storage type, with the explanation of where they come from."""

    typical: dict[str, dict[str, Number]]
    read_block_kb: Number
    headroom: Number


Constants = dict[str, Union[Assumption, Number, dict[str, Number]]]


class AssumptionsFile(Loose):
    """assumptions.yaml."""

    units: dict[str, Number]
    network: Constants
    latency: Constants
    storage: StorageAssumptions
    gpu: Constants
    cost: dict[str, Number]


class Label(Loose):
    """A short name in both languages."""

    label_zh: Text
    label_en: Text


class ScoringFile(Loose):
    """scoring.yaml."""

    priority_multiplier: Number
    criteria: dict[str, Label]
    weights: dict[str, dict[str, Number]]


class ChecklistItem(Loose):
    """One item of the procurement checklist."""

    key: str = Field(min_length=1)
    topic: str = Field(min_length=1)
    title_zh: Text
    title_en: Text
    how_zh: Text
    how_en: Text
    pass_zh: Text
    pass_en: Text
    target_zh: Optional[Text] = None
    target_en: Optional[Text] = None


class ChecklistFile(Loose):
    """checklist.yaml."""

    items: list[ChecklistItem] = Field(min_length=1)


class FaqAnswer(Bilingual):
    """One answer of a FAQ question, taken when its conditions hold."""

    when: list[str] = Field(default_factory=list)


class FaqQuestion(Loose):
    """One FAQ question with its answers."""

    key: str = Field(min_length=1)
    question_zh: Text
    question_en: Text
    answers: list[FaqAnswer] = Field(min_length=1)


class FaqFile(Loose):
    """faq.yaml."""

    questions: list[FaqQuestion] = Field(min_length=1)


class Scenario(Label):
    """Guidance for one workload kind."""

    sensitive_zh: Text
    sensitive_en: Text
    guidance_zh: Text
    guidance_en: Text


class ScenariosFile(Loose):
    """scenarios.yaml."""

    kinds: dict[str, Scenario]


class CityRow(Loose):
    """One city with its coordinates."""

    name: str = Field(min_length=1)
    province: str = Field(min_length=1)
    lat: Number = Field(ge=-90, le=90)
    lon: Number = Field(ge=-180, le=180)


class CitiesFile(Loose):
    """cities.yaml."""

    cities: list[CityRow] = Field(min_length=1)


# ---------------------------------------------------------------- app/knowledge
class RuleTexts(Loose):
    """The severity and message of one vetting rule."""

    severity: str = Field(min_length=1)
    message_zh: Text
    message_en: Text


class RulesFile(Loose):
    """vetting.yaml and sources.yaml: versioned rule texts."""

    version: int
    rules: dict[str, RuleTexts]


class ThresholdsFile(Loose):
    """benchmarks.yaml: verdict thresholds (numbers only)."""

    bandwidth_pass: Number
    bandwidth_warn: Number


class DemoFile(Loose):
    """demo_providers.yaml."""

    providers: list[dict[str, Any]] = Field(min_length=1)


SCHEMAS: dict[str, type[BaseModel]] = {
    "advice/assumptions.yaml": AssumptionsFile,
    "advice/scoring.yaml": ScoringFile,
    "advice/checklist.yaml": ChecklistFile,
    "advice/faq.yaml": FaqFile,
    "advice/scenarios.yaml": ScenariosFile,
    "advice/cities.yaml": CitiesFile,
    "vetting.yaml": RulesFile,
    "sources.yaml": RulesFile,
    "benchmarks.yaml": ThresholdsFile,
    "demo_providers.yaml": DemoFile,
}


# ---------------------------------------------------------------- checks on every mapping of a file
def _path(loc: tuple[Any, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def _pair_problems(mapping: dict[Any, Any], loc: tuple[Any, ...]) -> Iterator[str]:
    """Text pairs of one mapping (`zh`/`en`, `x_zh`/`x_en`): both languages present and whole."""
    keys = {str(key) for key in mapping}
    for key in sorted(keys):
        if key != "zh" and not key.endswith("_zh"):
            continue
        other = key[:-2] + "en"
        if other not in keys:
            yield f"{_path((*loc, other))}: " + _("缺少英文对应项")
        for name in (key, other) if other in keys else (key,):
            value = mapping.get(name)
            problem = text_problem(value) if isinstance(value, str) else _("须为文本")
            if problem:
                yield f"{_path((*loc, name))}: {problem}"


def _has_text(mapping: dict[Any, Any]) -> bool:
    return any(str(key) == "zh" or str(key).endswith("_zh") for key in mapping)


def _stray_keys(mapping: dict[Any, Any], loc: tuple[Any, ...]) -> Iterator[str]:
    """Keys without a value that are the rest of a text cut at an unquoted comma."""
    texts = _has_text(mapping)
    for key, value in mapping.items():
        if value is None and isinstance(key, str) and (texts or " " in key.strip()):
            yield (f"{_path((*loc, key))}: " + _("像是在逗号处被截断的文字的后半句；含逗号的文字请加引号"))


def text_problems(document: Any, loc: tuple[Any, ...] = ()) -> Iterator[str]:
    """Every broken text pair or cut-off text in a parsed YAML document, named by its path."""
    if isinstance(document, dict):
        yield from _pair_problems(document, loc)
        yield from _stray_keys(document, loc)
        for key, value in document.items():
            yield from text_problems(value, (*loc, key))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from text_problems(value, (*loc, index))


class KnowledgeError(ValueError):
    """A knowledge file that does not follow its schema; the message lists every problem."""


def _model_problems(model: type[BaseModel], document: Any) -> list[str]:
    try:
        model.model_validate(document)
    except ValidationError as exc:
        return [f"{_path(tuple(e['loc']))}: {e['msg'].removeprefix('Value error, ')}" for e in exc.errors()]
    return []


def check(name: str, document: Any) -> None:
    """Raise KnowledgeError naming every problem of `document`, the parsed file `name` (relative path)."""
    model = SCHEMAS.get(name)
    problems = _model_problems(model, document) if model is not None else []
    problems += text_problems(document)
    if problems:
        listed = "\n  ".join(dict.fromkeys(problems))
        raise KnowledgeError(f"app/knowledge/{name}:\n  {listed}")


def load_checked(path: Path, name: str | None = None) -> Any:
    """Parse a knowledge YAML file and check it against the schema of `name` (default: its own path)."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    check(name or path.relative_to(KNOWLEDGE_ROOT).as_posix(), document)
    return document
