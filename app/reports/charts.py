"""Charts as SVG (pygal): one Chart description in, the same SVG for the HTML view and the PDF out.

A Chart is plain data, so any producer (registry offers today, benchmark runs later) can describe one;
its `kind` picks the drawing function from CHART_KINDS.

pygal's SVG is made for browsers: JavaScript tooltips, ~90 CSS rules, hidden tooltip data. WeasyPrint
matches every one of those rules against every SVG element, which tripled the time to draw a chart. So
the SVG is cleaned after pygal draws it: scripts, comments and tooltip data go, and the stylesheet is
replaced by the dozen rules a static chart needs.
"""

from __future__ import annotations

import functools
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from app.reports.text import reveal_controls

WIDTH = 640
LABEL_LIMIT = 34  # width (CJK counts 2) of a chart label before it is cut; the tables give the full text
FONT = '"GV Sans", "GV Sans Full", "WenQuanYi Micro Hei", "Noto Sans CJK SC", sans-serif'
COLOURS = ("#4f7cac", "#e39b4f", "#5aa872", "#c0566a", "#8a7bb8", "#6b8e9e", "#b8956b", "#7a7a7a")
MIN_LINE_POINTS = 2  # a series of fewer points is no line: it is drawn as a marked point
DOTS_UNTIL = 20  # series of at most this many points have their points marked (a quick run's few samples)
_KEY = re.compile(r"^[a-z0-9][a-z0-9-]{0,40}$")
# Elements pygal adds for its JavaScript tooltips; a static chart does not need them.
_DROPPED_TAGS = {"script", "desc"}
_DROPPED_CLASSES = {"tooltip-overlay", "overlay"}


@functools.cache
def _style() -> Any:
    """The charts' pygal Style (pygal is imported where a chart is drawn, not with this module)."""
    from pygal.style import Style

    return Style(
        font_family=FONT, colors=COLOURS, background="#ffffff", plot_background="#ffffff", transition="0ms"
    )


_BASE_CSS = (
    ".pygal-chart text{{font-family:{font};font-size:11px;fill:#333;stroke:none}}"
    ".pygal-chart .title{{font-size:14px;text-anchor:middle;fill:#111}}"
    ".pygal-chart .legends text{{font-size:11px}}"
    ".pygal-chart .axis.x text,.pygal-chart .centered{{text-anchor:middle}}"
    ".pygal-chart .axis.y text{{text-anchor:end}}"
    ".pygal-chart .background{{fill:#fff}}"
    ".pygal-chart .axis .line{{stroke:#555;fill:none}}"
    ".pygal-chart .guide.line{{stroke:#d8d8d8;stroke-dasharray:3,3}}"
    ".pygal-chart .horizontal .axis.y .guide.line,.pygal-chart .vertical .axis.x .guide.line{{stroke:none}}"
    ".pygal-chart .reactive{{fill-opacity:.9;stroke-width:1}}"
    ".pygal-chart .nofill,.pygal-chart .line{{fill:none}}"
    ".pygal-chart .text-overlay text.value{{fill:#111}}"
)


@dataclass(frozen=True)
class Series:
    """One named series: bar values (in label order) or (x, y) points; None is a gap."""

    name: str
    values: tuple[float | None, ...] = ()
    points: tuple[tuple[float, float | None], ...] = ()
    dashed: bool = False


@dataclass(frozen=True)
class Chart:
    """What to draw: kind (a CHART_KINDS key), a stable key for ids, texts, labels and series."""

    kind: str
    key: str
    title: str
    unit: str = ""
    labels: tuple[str, ...] = ()
    series: tuple[Series, ...] = ()
    x_title: str = ""
    y_title: str = ""
    y_range: tuple[float, float] | None = None
    reference: float | None = None  # e.g. the nominal value, drawn as a dashed line on timelines
    reference_label: str = ""

    def has_data(self) -> bool:
        """Whether there is something to draw: a bar value, or a point of a timeline (a line or a dot)."""
        if self.kind == "timeline":
            return any(y is not None for series in self.series for _, y in series.points)
        values = [value for series in self.series for value in series.values]
        return any(value is not None for value in values)


def number_text(value: float | None) -> str:
    """A number as shown on a chart: thousands separators, at most two decimals, no trailing zeros."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def _wide(text: str) -> int:
    return sum(1 for char in text if ord(char) >= 0x2E80)


def _label(text: str, limit: int = LABEL_LIMIT) -> str:
    """Chart text with control characters shown, cut to `limit` characters (wide CJK counts double)."""
    text = reveal_controls(text)
    width, cut = 0, len(text)
    for index, char in enumerate(text):
        width += 1 + _wide(char)
        if width > limit:
            cut = index
            break
    return text if cut == len(text) else text[:cut] + "…"


def _config(chart: Chart, height: int, **options: Any) -> dict[str, Any]:
    return {
        "width": WIDTH,
        "height": height,
        "style": _style(),
        "title": None,  # the figure caption carries the title
        "x_title": _label(chart.x_title) or None,
        "y_title": _label(chart.y_title) or None,
        "js": [],
        "css": [],
        "classes": ["pygal-chart", "chart"],
        "disable_xml_declaration": True,
        "explicit_size": False,
        "truncate_label": -1,  # _label already cut the labels, knowing CJK characters are wide
        "truncate_legend": -1,
        "legend_at_bottom": True,
        "no_data_text": "—",
        "value_formatter": number_text,
        "max_scale": 6,  # at most ~6 value ticks: long numbers must not run into each other
        **options,
    }


def _with_unit(unit: str) -> Callable[[Any], str]:
    """A value formatter: '21.5 Mbit/s'; an (x, y) point of a timeline (its marked dots) shows its y."""

    def text(value: Any) -> str:
        if isinstance(value, list | tuple):
            value = value[-1] if value else None
        return f"{number_text(value)} {unit}".strip() if value is not None else ""

    return text


def _css(chart_id: str, dashed: list[int]) -> str:
    colours = "".join(
        f".pygal-chart .color-{index}{{stroke:{colour};fill:{colour}}}"
        for index, colour in enumerate(COLOURS)
    )
    strokes = "".join(
        f"#{chart_id} .serie-{index} .line{{stroke-width:1.5;stroke-dasharray:6,4}}" for index in dashed
    )
    lines = ".pygal-chart .line{stroke-width:2}"
    return _BASE_CSS.format(font=FONT) + colours + lines + strokes


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _has_dots(element: Any) -> bool:
    """Whether an (overlay) element holds the marked points of a short timeline, which stay."""
    return any(_local(node.tag) == "circle" for node in element.iter())


def _cleaner(chart_id: str, dashed: list[int]) -> Callable[[Any], Any]:
    """An XML filter: drop scripts, comments and tooltip parts; put the compact stylesheet in place."""

    def clean(root: Any) -> Any:
        for parent in list(root.iter()):
            for child in list(parent):
                classes = set((child.get("class") or "").split()) if isinstance(child.tag, str) else set()
                in_guides = _local(child.tag) == "title" and "guides" in (parent.get("class") or "")
                if (
                    child.tag is ET.Comment
                    or _local(child.tag) in _DROPPED_TAGS
                    or (classes & _DROPPED_CLASSES and not _has_dots(child))
                    or in_guides
                ):
                    parent.remove(child)
                elif _local(child.tag) == "style":
                    child.text = _css(chart_id, dashed)
        return root

    return clean


def _bars(chart: Chart) -> Any:
    import pygal  # imported where a chart is drawn: most requests and commands draw none

    # pygal draws the first label at the bottom; reverse so the table order reads top to bottom.
    many = len(chart.series) > 1
    height = max(170, 80 + len(chart.labels) * (22 + 14 * len(chart.series)) + (30 if many else 0))
    labels = [_label(label) for label in reversed(chart.labels)]
    # pygal sizes the label column at 0.6 em a character; CJK characters are a full em wide.
    extra = round(0.45 * 11 * max((_wide(label) for label in labels), default=0))
    graph = pygal.HorizontalBar(
        **_config(
            chart,
            height,
            print_values=True,
            show_legend=many,
            y_title=chart.unit or None,
            margin_left=20 + extra,
        )
    )
    graph.x_labels = labels
    for series in chart.series:
        graph.add(_label(series.name), list(reversed(series.values)), formatter=_with_unit(chart.unit))
    return graph


def _timeline(chart: Chart) -> Any:
    import pygal  # imported where a chart is drawn: most requests and commands draw none

    # Few samples (a quick run): mark each point, so a series of one point is a dot, not nothing.
    longest = max((len(series.points) for series in chart.series), default=0)
    options: dict[str, Any] = {
        "show_dots": longest <= DOTS_UNTIL,
        "dots_size": 4,
        "y_title": chart.unit or None,
        "include_x_axis": True,
    }
    if chart.y_range:
        options["range"] = chart.y_range
    graph = pygal.XY(**_config(chart, 300, **options))
    xs = [x for series in chart.series for x, _ in series.points]
    for series in chart.series:
        graph.add(_label(series.name), list(series.points), formatter=_with_unit(chart.unit))
    if chart.reference is not None and xs:
        graph.add(
            _label(chart.reference_label),
            [(min(0.0, min(xs)), chart.reference), (max(xs), chart.reference)],  # from the start
            formatter=_with_unit(chart.unit),
            show_dots=False,
        )
    return graph


def _dashed(chart: Chart) -> list[int]:
    indexes = [index for index, series in enumerate(chart.series) if series.dashed]
    if chart.kind == "timeline" and chart.reference is not None:
        indexes.append(len(chart.series))
    return indexes


CHART_KINDS: dict[str, Callable[[Chart], Any]] = {"bars": _bars, "timeline": _timeline}


def render_svg(chart: Chart) -> Markup:
    """The chart as an inline <svg> element (safe to place in HTML: pygal escapes every text)."""
    if chart.kind not in CHART_KINDS:
        raise ValueError(f"unknown chart kind {chart.kind!r}; known: {', '.join(CHART_KINDS)}")
    if not _KEY.match(chart.key):
        raise ValueError(f"chart key {chart.key!r} must be lower-case letters, digits and dashes")
    from pygal.etree import etree

    etree.to_etree()  # pygal picks lxml where installed (pyHanko needs it); _cleaner works on xml.etree
    graph = CHART_KINDS[chart.kind](chart)
    graph.uuid = f"gv-{chart.key}"  # pygal uses a random uuid for the id and CSS prefix
    graph.add_xml_filter(_cleaner(f"chart-gv-{chart.key}", _dashed(chart)))
    return Markup(graph.render(is_unicode=True))


def bar_chart(key: str, title: str, unit: str, labels: Sequence[str], series: Sequence[Series]) -> Chart:
    """A horizontal bar chart of one or more series over `labels`."""
    return Chart(kind="bars", key=key, title=title, unit=unit, labels=tuple(labels), series=tuple(series))


def timeline_chart(
    key: str,
    title: str,
    unit: str,
    series: Sequence[Series],
    *,
    x_title: str = "",
    y_range: tuple[float, float] | None = None,
    reference: float | None = None,
    reference_label: str = "",
) -> Chart:
    """A line chart of (x, y) series, with an optional dashed reference line (e.g. the nominal value)."""
    return Chart(
        kind="timeline",
        key=key,
        title=title,
        unit=unit,
        series=tuple(series),
        x_title=x_title,
        y_range=y_range,
        reference=reference,
        reference_label=reference_label,
    )
