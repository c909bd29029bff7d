"""HTML to PDF with WeasyPrint: one renderer per font, reusing its parsed stylesheet and font setup.

WeasyPrint (and app.reports.fetcher, built on it) is imported only when a renderer is made: importing it
takes most of a second, which pages and commands that never render a PDF should not pay.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask_babel import gettext as _

from app.reports.fonts import ensure_subset, harfbuzz_subsetting
from benchmarks.gc_pause import without_gc

logger = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
REPORT_CSS = STATIC / "report.css"
FONT_FAMILY = '"GV Sans", "GV Sans Full"'


@dataclass(frozen=True)
class RenderedPdf:
    """A rendered document: the PDF bytes and its page count."""

    data: bytes
    pages: int


def font_face_css(regular: Path, full: Path) -> str:
    """@font-face rules naming the pre-subset font first and the full font as per-glyph fallback."""
    return (
        f'@font-face {{ font-family: "GV Sans"; src: url("{regular.resolve().as_uri()}"); }}\n'
        f'@font-face {{ font-family: "GV Sans Full"; src: url("{full.resolve().as_uri()}"); }}\n'
    )


@functools.cache
def report_css() -> str:
    """The report stylesheet shared by the PDF and the HTML view."""
    return REPORT_CSS.read_text(encoding="utf-8")


class PdfRenderer:
    """Renders report HTML to PDF; loads only its own font files and stylesheet, never the network."""

    def __init__(
        self, *, font_path: Path, cache_dir: Path | None = None, presubset: bool = True, pause_gc: bool = True
    ) -> None:
        from weasyprint import CSS
        from weasyprint.text.fonts import FontConfiguration

        from app.reports.fetcher import RestrictedFetcher

        self.font_path = Path(font_path)
        if not self.font_path.is_file():
            raise FileNotFoundError(
                _(
                    "报告字体不存在：%(path)s（请安装 fonts-wqy-microhei 或设置 GPUVET_REPORT_FONT）",
                    path=self.font_path,
                )
            )
        subset = ensure_subset(self.font_path, cache_dir) if presubset and cache_dir else None
        self.regular_font = subset or self.font_path
        self.fetcher = RestrictedFetcher([self.regular_font, self.font_path, REPORT_CSS])
        self.font_config = FontConfiguration()
        self.harfbuzz = harfbuzz_subsetting()
        if not self.harfbuzz:
            logger.warning(
                "WeasyPrint cannot use HarfBuzz to subset fonts (install libharfbuzz-subset0): "
                "each report PDF takes about a second longer"
            )
        # Parsed once: parsing the stylesheet also registers the @font-face fonts with font_config.
        self.stylesheet = CSS(
            string=font_face_css(self.regular_font, self.font_path) + report_css(),
            url_fetcher=self.fetcher,
            font_config=self.font_config,
        )
        # Pango and fontconfig objects are shared between renders: one render at a time per renderer.
        self._lock = threading.Lock()
        self.pause_gc = pause_gc

    def render(self, html: str) -> RenderedPdf:
        """Lay out `html` and write the PDF; raises ResourceRefused if it names any other resource."""
        from weasyprint import HTML

        from app.reports.fetcher import ResourceRefused

        with self._lock, without_gc() if self.pause_gc else contextlib.nullcontext():
            self.fetcher.refused.clear()
            document = HTML(string=html, url_fetcher=self.fetcher).render(
                stylesheets=[self.stylesheet], font_config=self.font_config
            )
            data = document.write_pdf()
            # WeasyPrint swallows some fetch errors (e.g. an <image> inside SVG): check what was refused.
            if self.fetcher.refused:
                raise ResourceRefused(self.fetcher.refused[0])
        return RenderedPdf(data=data, pages=len(document.pages))


@functools.lru_cache(maxsize=4)
def renderer_for(font_path: Path, cache_dir: Path | None) -> PdfRenderer:
    """The shared renderer for a font and a font cache folder (built once per process)."""
    return PdfRenderer(font_path=font_path, cache_dir=cache_dir)


# Drop the shared renderers before the interpreter tears modules down: WeasyPrint, imported late (on the
# first render), is torn down first, and a FontConfiguration collected after that cannot remove its
# temporary font folder ("Exception ignored in FontConfiguration.__del__").
atexit.register(renderer_for.cache_clear)


def font_cache_dir(settings: Any) -> Path:
    """Where the pre-subset report font is kept: under the instance folder."""
    return Path(settings.instance_path) / "cache" / "fonts"


def renderer_for_settings(settings: Any) -> PdfRenderer:
    """The renderer for the app's settings: its report font, the pre-subset copy kept under instance/."""
    return renderer_for(Path(settings.report_font), font_cache_dir(settings))
