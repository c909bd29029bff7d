"""A finding's evidence without a URL (registry value, benchmark comparison, fact source) as labelled text."""

from __future__ import annotations

from typing import Any

from app.core import vocabulary
from app.reports.labels import Labels

# (Chinese, English) of the labels this module writes.
WORDS: dict[str, tuple[str, str]] = {
    "run": ("测试 #{id}", "run #{id}"),
    "check": ("检查项", "check"),
    "measured": ("实测", "measured"),
    "claimed": ("标称", "claimed"),
    "ratio": ("实测/标称", "measured/claimed"),
    "verdict": ("判定", "verdict"),
    "uploaded": ("上传的测试输出", "uploaded tool output"),
    "fact_source": ("核查依据来源", "fact source"),
    "error": ("错误", "error"),
}


def _word(labels: Labels, key: str, **values: Any) -> str:
    text = labels.pick(*WORDS[key])
    return text.format(**values) if values else text


def _term(kind: str, key: Any, labels: Labels) -> str:
    """A vocabulary label inside a line of evidence: English words start lower-case ('check: bandwidth'),
    acronyms stay as they are ('IOPS'); the key itself when the kind does not list it."""
    text = vocabulary.label(str(key), labels.language, kind=kind)
    return text[0].lower() + text[1:] if text[1:2].islower() else text


def _sep(labels: Labels) -> str:
    return "：" if labels.language == "zh" else ": "


def _value(value: Any, labels: Labels) -> str:
    if isinstance(value, bool):
        return labels.t("yes") if value else labels.t("no")
    if isinstance(value, list):
        return ("、" if labels.language == "zh" else ", ").join(str(item) for item in value) or labels.t(
            "dash"
        )
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return labels.t("dash") if value in (None, "") else str(value)


def registry_text(item: dict[str, Any], labels: Labels) -> str:
    """'套餐 #10 · 租用方式：裸金属' for a registry value a finding rests on."""
    name = str(item.get("field") or "")
    entity = _term("entity", item.get("entity"), labels)
    head = f"{entity} #{item['id']}" if item.get("id") is not None else entity
    value = item.get("value")
    if isinstance(value, str) and value:
        shown = vocabulary.value_label(name, value, labels.language)
    else:
        shown = _value(value, labels)
    field = vocabulary.field_label(name, labels.language)
    body = f"{field}{_sep(labels)}{shown}"
    return f"{head} · {body}" if field else head


def _figure(value: Any, unit: Any) -> str:
    if isinstance(value, float):
        value = f"{value:,.2f}".rstrip("0").rstrip(".")
    elif isinstance(value, int):
        value = f"{value:,}"
    return f"{value} {unit or ''}".strip()


def benchmark_lines(item: dict[str, Any], labels: Labels) -> list[str]:
    """['测试 #3', '检查项：带宽', '实测：320 Mbps', '标称：500 Mbps', '实测/标称：64%', '判定：不通过']."""
    sep = _sep(labels)
    name, _space, detail = str(item.get("check") or "").partition(" ")
    parts = [_word(labels, "run", id=item.get("run_id"))]
    parts.append(f"{_word(labels, 'check')}{sep}{_term('bench_check', name, labels)} {detail}".strip())
    if item.get("measured") is not None:
        parts.append(f"{_word(labels, 'measured')}{sep}{_figure(item['measured'], item.get('unit'))}")
    if item.get("claimed") is not None:
        parts.append(f"{_word(labels, 'claimed')}{sep}{_figure(item['claimed'], item.get('unit'))}")
    if isinstance(item.get("ratio"), (int, float)):
        parts.append(f"{_word(labels, 'ratio')}{sep}{item['ratio']:.0%}")
    if item.get("verdict"):
        parts.append(f"{_word(labels, 'verdict')}{sep}{_term('bench_verdict', item['verdict'], labels)}")
    if item.get("origin") == "uploaded":
        parts[0] += f" · {_word(labels, 'uploaded')}"
    return parts


def campaign_text(item: dict[str, Any], labels: Labels) -> str:
    """'高峰测试 #2 · 晚高峰中位数：452 Mbit/s · 非高峰中位数：940 Mbit/s · 高峰 / 非高峰：48%（阈值 70%）'"""
    sep, number = _sep(labels), item.get("campaign_id")
    parts = [labels.pick(f"高峰测试 #{number}", f"peak-hour campaign #{number}")]
    medians = (
        ("peak_median", "晚高峰中位数", "peak median"),
        ("offpeak_median", "非高峰中位数", "off-peak median"),
    )
    for key, zh, en in medians:
        if item.get(key) is not None:
            parts.append(f"{labels.pick(zh, en)}{sep}{_figure(item[key], 'Mbit/s')}")
    share, threshold = item.get("share"), item.get("threshold")
    if isinstance(share, (int, float)) and isinstance(threshold, (int, float)):
        limit = labels.pick(f"（阈值 {threshold:.0%}）", f" (threshold {threshold:.0%})")
        parts.append(f"{labels.pick('高峰 / 非高峰', 'peak / off-peak')}{sep}{share:.0%}{limit}")
    return " · ".join(parts)


def fact_lines(item: dict[str, Any], labels: Labels) -> list[str]:
    """Evidence without a URL as lines of labelled text (never a raw key: value dump)."""
    if item.get("kind") == "benchmark":
        return benchmark_lines(item, labels)
    return [fact_text(item, labels)]


def fact_text(item: dict[str, Any], labels: Labels) -> str:
    """Evidence without a URL as one line of labelled text."""
    kind = item.get("kind")
    if kind == "registry":
        return registry_text(item, labels)
    if kind == "benchmark":
        return " · ".join(benchmark_lines(item, labels))
    if kind == "peak_campaign":
        return campaign_text(item, labels)
    if kind == "fact_source":
        error = f"{_word(labels, 'error')}{_sep(labels)}{item['error']}" if item.get("error") else ""
        return " · ".join(
            part for part in (f"{_word(labels, 'fact_source')} {item.get('name', '')}", error) if part
        )
    return " · ".join(
        f"{vocabulary.field_label(str(key), labels.language)}{_sep(labels)}{_value(value, labels)}"
        for key, value in item.items()
        if key != "kind" and value not in (None, "", [], {})
    )
