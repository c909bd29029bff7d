"""The only way the PDF renderer may load a resource: an allow-list of local files, nothing else.

WeasyPrint would otherwise follow any URL a template, a stylesheet or an SVG names (https://,
file:///etc/...). A report is built from provider-supplied text, so the renderer must never reach the
network or read other files.
"""

from __future__ import annotations

import logging
import mimetypes
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from flask_babel import gettext as _
from weasyprint.urls import FatalURLFetchingError, URLFetcher, URLFetcherResponse

logger = logging.getLogger(__name__)

# Font files have no registered type on every system; WeasyPrint only needs a plausible one.
_TYPES = {".ttc": "font/collection", ".ttf": "font/ttf", ".otf": "font/otf", ".css": "text/css"}


class ResourceRefused(FatalURLFetchingError):
    """A document asked for a resource outside the allow-list; rendering stops."""

    def __init__(self, url: str) -> None:
        self.url = url
        shown = url if len(url) <= 200 else url[:200] + "…"
        super().__init__(_("报告渲染拒绝加载外部资源 %(url)s", url=shown))


class RestrictedFetcher(URLFetcher):
    """Serve the allow-listed local files; refuse every other URL with ResourceRefused."""

    def __init__(self, allowed: Iterable[Path]) -> None:
        super().__init__(timeout=1, allowed_protocols=("file",), allow_redirects=False, fail_on_errors=True)
        self.allowed = frozenset(Path(path).resolve() for path in allowed)
        self.refused: list[str] = []

    def _path(self, url: str) -> Path | None:
        parts = urlsplit(url)
        if parts.scheme != "file" or parts.netloc not in ("", "localhost"):
            return None
        try:
            path = Path(unquote(parts.path)).resolve()
        except (OSError, ValueError):
            return None
        return path if path in self.allowed else None

    def fetch(self, url: str, headers: dict | None = None) -> URLFetcherResponse:
        """Return an allow-listed file's bytes; raise ResourceRefused for anything else."""
        path = self._path(url)
        if path is None:
            self.refused.append(url)
            logger.warning("report renderer refused %s", url[:200])
            raise ResourceRefused(url)
        media_type = _TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0]
        return URLFetcherResponse(
            path.as_uri(), path.read_bytes(), {"Content-Type": media_type or "application/octet-stream"}
        )
