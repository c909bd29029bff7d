"""Templates obey the Content-Security-Policy (no inline handlers or scripts); destructive forms confirm."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TEMPLATES = Path(__file__).resolve().parents[2] / "app" / "templates"
TAG = re.compile(r"<[a-zA-Z][^<>]*>", re.S)
INLINE_HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)
SCRIPT = re.compile(r"<script\b[^>]*>", re.I | re.S)
FORM = re.compile(r"<form\b[^>]*>", re.I | re.S)
DESTRUCTIVE = re.compile(r"delete|revoke|cancel|deactivate|remove")
# Deactivating an account or replacing its password (web.user_update) counts as destructive too.
ALSO_DESTRUCTIVE = {"web.user_update"}


def _templates() -> list[Path]:
    found = sorted(TEMPLATES.rglob("*.html"))
    assert len(found) > 20  # the scan really reads the templates
    return found


def _without_jinja(text: str) -> str:
    return re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", "", text, flags=re.S)


@pytest.mark.parametrize("path", _templates(), ids=lambda path: str(path.relative_to(TEMPLATES)))
def test_no_inline_event_handlers_scripts_or_javascript_urls(path: Path):
    text = _without_jinja(path.read_text(encoding="utf-8"))
    for tag in TAG.findall(text):
        assert not INLINE_HANDLER.search(tag), f"{path.name}: inline event handler in {tag!r}"
        assert "javascript:" not in tag.lower(), f"{path.name}: javascript: URL in {tag!r}"
    for script in SCRIPT.findall(text):
        assert re.search(r"\ssrc\s*=", script), f"{path.name}: inline script {script!r}"


def test_the_scan_would_catch_the_old_trial_server_delete():
    old = """<form method="post" action="/x" onsubmit="return confirm('{{ _('删除？') }}');">"""
    assert any(INLINE_HANDLER.search(tag) for tag in TAG.findall(_without_jinja(old)))


def test_every_destructive_form_asks_for_confirmation(app):
    endpoints = {
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if "POST" in (rule.methods or ())
        and rule.endpoint.startswith("web.")
        and (DESTRUCTIVE.search(rule.endpoint) or rule.endpoint in ALSO_DESTRUCTIVE)
    }
    assert {"web.trial_server_delete", "web.record_delete", "web.bench_run_cancel"} <= endpoints
    forms: dict[str, list[tuple[str, str]]] = {endpoint: [] for endpoint in endpoints}
    for path in _templates():
        for form in FORM.findall(path.read_text(encoding="utf-8")):
            for endpoint in endpoints:
                if re.search(rf"url_for\(\s*['\"]{re.escape(endpoint)}['\"]", form):
                    forms[endpoint].append((path.name, form))
    for endpoint, found in forms.items():
        assert found, f"no form posts to {endpoint}"
        for name, form in found:
            assert "data-confirm=" in form, f"{name}: the form for {endpoint} is not confirmed"
