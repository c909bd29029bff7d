"""Report HTML from Jinja2 templates: every value escaped, invisible control characters shown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from app.core.plugins import register_once
from app.reports.case_document import case_context
from app.reports.decision_document import decision_context
from app.reports.document import provider_context
from app.reports.pdf import PdfRenderer, RenderedPdf, report_css
from app.reports.text import reveal_controls

TEMPLATES = Path(__file__).resolve().parent / "templates"


def _finalize(value: Any) -> Any:
    """Applied to every {{ value }}: None prints nothing, plain text has its control characters revealed."""
    if value is None:
        return ""
    if isinstance(value, str) and not isinstance(value, Markup):
        return reveal_controls(value)
    return value


ENV = Environment(
    loader=FileSystemLoader(str(TEMPLATES)),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    finalize=_finalize,
    trim_blocks=True,
    lstrip_blocks=True,
)


@dataclass(frozen=True)
class ReportKind:
    """A kind of report: its template, the function that turns inputs + meta into template context,
    and from how many pages on its PDF gets a table of contents (0: always)."""

    name: str
    template: str
    context: Callable[[dict[str, Any], dict[str, Any], str], dict[str, Any]]
    title_key: str
    toc_min_pages: int = 0


REPORT_KINDS: dict[str, ReportKind] = {}


def report_kind(kind: ReportKind) -> ReportKind:
    """Register a kind of report; a duplicate name raises."""
    register_once(REPORT_KINDS, kind.name, kind, "report kind")
    return kind


report_kind(ReportKind("provider", "provider.html", provider_context, "provider_title", toc_min_pages=6))
report_kind(ReportKind("case", "case.html", case_context, "case_title"))
report_kind(ReportKind("decision", "decision.html", decision_context, "decision_title"))


def render_html(
    kind: str,
    inputs: dict[str, Any],
    meta: dict[str, Any],
    language: str,
    *,
    screen: bool,
    toolbar: Markup | None = None,
    toc: bool = True,
) -> str:
    """The report document; `screen` inlines the stylesheet for the in-app view (the PDF gets it parsed)."""
    entry = REPORT_KINDS[kind]
    context = entry.context(inputs, meta, language)
    template = ENV.get_template(entry.template)
    return template.render(
        **context,
        title=context["L"].t(entry.title_key),
        screen=screen,
        inline_css=Markup(report_css()) if screen else None,
        toolbar=toolbar,
        toc=toc,
    )


def render_pdf(
    renderer: PdfRenderer, kind: str, inputs: dict[str, Any], meta: dict[str, Any], language: str
) -> RenderedPdf:
    """The report as PDF. Page numbers in a table of contents make WeasyPrint lay pages out again, so a
    short report goes without one; a report that turns out long is rendered again with it."""
    entry = REPORT_KINDS[kind]
    always = entry.toc_min_pages <= 0
    pdf = renderer.render(render_html(kind, inputs, meta, language, screen=False, toc=always))
    if not always and pdf.pages >= entry.toc_min_pages:
        pdf = renderer.render(render_html(kind, inputs, meta, language, screen=False, toc=True))
    return pdf
