"""A finding's evidence without a URL (registry value, benchmark comparison, fact source) as labelled text."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from app.reports.labels import Labels

TRANSLATIONS = Path(__file__).resolve().parent.parent / "translations"

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
BENCH_CHECKS: dict[str, tuple[str, str]] = {
    "bandwidth": ("带宽", "bandwidth"),
    "stability": ("带宽稳定性", "bandwidth stability"),
    "storage_type": ("存储类型", "storage type"),
    "iops": ("IOPS", "IOPS"),
    "iops_range": ("IOPS 波动", "IOPS spread"),
    "write_rate": ("写入速率", "write rate"),
    "write_throughput": ("写入吞吐", "write throughput"),
    "ping_jitter": ("延迟抖动", "latency jitter"),
    "ping_loss": ("丢包", "packet loss"),
    "gpu_count": ("GPU 数量", "GPU count"),
    "gpu_model": ("GPU 型号", "GPU model"),
    "gpu_utilization": ("GPU 利用率", "GPU utilisation"),
}
BENCH_VERDICTS: dict[str, tuple[str, str]] = {
    "pass": ("通过", "pass"),
    "warn": ("警告", "warning"),
    "fail": ("不通过", "fail"),
    "info": ("信息", "info"),
}
ENTITIES: dict[str, tuple[str, str]] = {
    "provider": ("供应商", "provider"),
    "licence": ("许可证", "licence"),
    "filing": ("备案", "filing"),
    "certification": ("认证", "certification"),
    "datacenter": ("机房", "datacenter"),
    "offer": ("套餐", "offer"),
}


def _word(labels: Labels, key: str, **values: Any) -> str:
    text = labels.pick(*WORDS[key])
    return text.format(**values) if values else text


def _pair(table: dict[str, tuple[str, str]], key: Any, labels: Labels) -> str:
    pair = table.get(str(key))
    return labels.pick(*pair) if pair else str(key)


def _sep(labels: Labels) -> str:
    return "：" if labels.language == "zh" else ": "


def _ui_label(lazy: Any, labels: Labels) -> str:
    """A web label (lazy gettext) in the report's language, with or without an app around."""
    from flask import has_app_context
    from flask_babel import force_locale

    if has_app_context():
        with force_locale(labels.language):
            return str(lazy)
    return _catalog(labels.language).gettext(str(lazy))  # outside an app the msgid is the Chinese text


@functools.lru_cache(maxsize=4)
def _catalog(language: str) -> Any:
    from babel.support import Translations

    return Translations.load(str(TRANSLATIONS), [language])


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
    from app.web import labels as web_labels

    name = str(item.get("field") or "")
    entity = _pair(ENTITIES, item.get("entity"), labels)
    head = f"{entity} #{item['id']}" if item.get("id") is not None else entity
    value = item.get("value")
    if isinstance(value, str):
        shown = _ui_label(web_labels.value_label(name, value), labels)
    else:
        shown = _value(value, labels)
    field = _ui_label(web_labels.field_label(name), labels) if name else ""
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
    parts.append(f"{_word(labels, 'check')}{sep}{_pair(BENCH_CHECKS, name, labels)} {detail}".strip())
    if item.get("measured") is not None:
        parts.append(f"{_word(labels, 'measured')}{sep}{_figure(item['measured'], item.get('unit'))}")
    if item.get("claimed") is not None:
        parts.append(f"{_word(labels, 'claimed')}{sep}{_figure(item['claimed'], item.get('unit'))}")
    if isinstance(item.get("ratio"), (int, float)):
        parts.append(f"{_word(labels, 'ratio')}{sep}{item['ratio']:.0%}")
    if item.get("verdict"):
        parts.append(f"{_word(labels, 'verdict')}{sep}{_pair(BENCH_VERDICTS, item['verdict'], labels)}")
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
    from app.web import labels as web_labels

    return " · ".join(
        f"{_ui_label(web_labels.field_label(str(key)), labels)}{_sep(labels)}{_value(value, labels)}"
        for key, value in item.items()
        if key != "kind" and value not in (None, "", [], {})
    )
