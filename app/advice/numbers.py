"""Number formatting shared by the arithmetic, explanations and FAQ answers."""

from __future__ import annotations

import functools
import math
import re

# A space between two CJK characters (or CJK punctuation) is an artefact of folded YAML lines.
_CJK_GAP = re.compile(
    r"(?<=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]) (?=[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef])"
)


@functools.lru_cache(maxsize=8192)
def fmt(value: float | int | None, digits: int = 3) -> str:
    """A readable number: about `digits` significant figures, thousands separated, no float noise."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value)
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return "∞"
    magnitude = math.floor(math.log10(abs(value)))
    decimals = max(0, digits - 1 - magnitude)
    text = f"{value:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def zh_unit(unit: str) -> str:
    """A figure's unit after a number in Chinese text, with its leading space: GPUs are 卡 (no English plural
    on a Chinese page); Gbps, MB/s and the like are written the same in both languages."""
    return " 卡" if unit == "GPUs" else (f" {unit}" if unit else "")


def hours_text(seconds: float, lang: str) -> str:
    """A duration in the unit people think in: seconds, minutes, hours or days."""
    if seconds < 120:
        return f"{fmt(seconds)} 秒" if lang == "zh" else f"{fmt(seconds)} s"
    if seconds < 3600:
        return f"{fmt(seconds / 60)} 分钟" if lang == "zh" else f"{fmt(seconds / 60)} min"
    if seconds < 72 * 3600:
        return f"{fmt(seconds / 3600)} 小时" if lang == "zh" else f"{fmt(seconds / 3600)} h"
    return f"{fmt(seconds / 86400)} 天" if lang == "zh" else f"{fmt(seconds / 86400)} days"


def tidy(text: str) -> str:
    """Collapse whitespace, and drop the spaces folded YAML leaves between Chinese characters."""
    return _CJK_GAP.sub("", " ".join(text.split()))
