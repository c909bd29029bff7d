"""The renderer loads its own font and stylesheet and nothing else: every other URL stops the render."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from jinja2 import ChoiceLoader, DictLoader

from app.reports.fetcher import ResourceRefused, RestrictedFetcher
from app.reports.render import render_html
from tests.reports.conftest import make_inputs, make_meta


def test_fetcher_serves_only_allow_listed_files(tmp_path: Path):
    allowed = tmp_path / "font.ttf"
    allowed.write_bytes(b"font bytes")
    other = tmp_path / "secret.txt"
    other.write_text("secret")
    fetcher = RestrictedFetcher([allowed])

    response = fetcher.fetch(allowed.as_uri())
    assert response.read() == b"font bytes" and response.content_type == "font/ttf"

    for url in (
        other.as_uri(),
        "file:///etc/passwd",
        f"file://{tmp_path}/sub/../secret.txt",
        f"file://evil.example{allowed}",  # a host in a file URL means another machine
        "https://example.com/font.ttf",
        "http://127.0.0.1:5000/static/app.css",
        "ftp://example.com/x",
        "data:text/css,body{color:red}",
        "javascript:alert(1)",
    ):
        with pytest.raises(ResourceRefused) as caught:
            fetcher.fetch(url)
        assert caught.value.url == url and "拒绝加载外部资源" in str(caught.value)
    assert len(fetcher.refused) == 9


@pytest.mark.parametrize(
    "snippet",
    [
        '<img src="https://example.com/logo.png">',
        '<img src="file:///etc/passwd">',
        '<link rel="stylesheet" href="https://cdn.example.com/x.css">',
        "<style>@import url(https://cdn.example.com/x.css);</style>",
        '<style>@font-face { font-family: X; src: url("https://fonts.example.com/x.woff2"); }'
        " body { font-family: X; }</style>",
        '<div style="background: url(file:///etc/passwd)">x</div>',
        '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
        '<image href="https://example.com/x.png" width="10" height="10"/></svg>',
        '<object data="https://example.com/x.svg"></object>',
    ],
)
def test_renderer_refuses_external_resources(renderer, snippet: str):
    html = f"<html><body><p>正文</p>{snippet}</body></html>"
    with pytest.raises(ResourceRefused):
        renderer.render(html)
    assert gc.isenabled()  # the collector, paused while rendering, is back on after the error


def test_a_template_that_loads_a_url_is_refused(renderer, monkeypatch: pytest.MonkeyPatch):
    """A report template edited to pull in a remote logo fails loudly instead of reaching out."""
    from app.reports import render

    source = (render.TEMPLATES / "provider.html").read_text(encoding="utf-8")
    tampered = source.replace(
        '<div class="kicker">', '<img src="https://cdn.example.com/logo.png"><div class="kicker">', 1
    )
    assert tampered != source
    loader = ChoiceLoader([DictLoader({"provider.html": tampered}), render.ENV.loader])
    monkeypatch.setattr(render.ENV, "loader", loader)
    monkeypatch.setattr(render.ENV, "cache", None)
    html = render_html("provider", make_inputs(), make_meta(), "zh", screen=False)
    with pytest.raises(ResourceRefused) as caught:
        renderer.render(html)
    assert caught.value.url == "https://cdn.example.com/logo.png"
