"""Issue 9 items 4-5 on pages: ids past the INTEGER range are 404 pages, oversized requests get the error
page, and invisible direction / zero-width characters in user text show as [U+XXXX] markers."""

from __future__ import annotations

import html
import re

import pytest
from markupsafe import Markup
from werkzeug.routing import IntegerConverter

from app.core.limits import MAX_ID
from app.web.markers import form_value, reveal_in_page
from tests.web.conftest import field_error, provider_data

HIDDEN = "\u202e\u200b\u200c\u200d\u2066\ufeff"
NAME = "<b>反转</b>\u202e示例\u200b算力科技有限公司\u2069"


def _web_rules_with_ids(app) -> list[tuple[str, str]]:
    """(method, url) for every page rule with an int id, every id replaced by one past MAX_ID."""
    found = []
    for rule in app.url_map.iter_rules():
        ids = [c for c in rule._converters.values() if isinstance(c, IntegerConverter)]
        if rule.endpoint.startswith(("api.", "static")) or not ids:
            continue
        url = re.sub(r"<int[^>]*>", "99999999999999999999", rule.rule)
        url = re.sub(r"<[^>]*>", "x", url)
        found.extend((method, url) for method in sorted(rule.methods - {"HEAD", "OPTIONS"}))
    return found


def test_every_page_with_an_id_answers_404_for_ids_past_the_integer_range(app, login):
    client = login("admin")
    checked = _web_rules_with_ids(app)
    assert len(checked) >= 20
    for method, url in checked:
        response = client.open(url, method=method)
        assert response.status_code == 404, (method, url, response.status_code)
        assert "页面或记录不存在" in response.get_data(as_text=True), (method, url)


@pytest.mark.parametrize("value", [str(MAX_ID + 1), "9" * 5000])
def test_provider_page_with_a_huge_id_is_a_404_page(login, value):
    response = login("viewer").get(f"/providers/{value}")
    assert response.status_code == 404 and response.content_type.startswith("text/html")


def test_long_url_and_big_headers_get_the_error_page(login):
    client = login("viewer")
    response = client.get("/providers?q=" + "x" * 9000)
    assert response.status_code == 414 and "网址过长" in response.get_data(as_text=True)
    response = client.get("/providers", headers={"X-Big": "y" * 9000})
    assert response.status_code == 431 and "请求头过大" in response.get_data(as_text=True)


def test_invisible_characters_show_as_markers_and_stay_escaped(login, make_provider):
    provider = make_provider(legal_name=NAME, notes="备注\u202d尾\u200c")
    client = login("viewer")
    for url in ("/providers", f"/providers/{provider.id}"):
        page = client.get(url).get_data(as_text=True)
        assert not any(char in page for char in HIDDEN), url
        assert "[U+202E]示例[U+200B]算力科技有限公司[U+2069]" in page, url
        assert "&lt;b&gt;反转&lt;/b&gt;" in page and "<b>反转</b>" not in page, url
    page = client.get(f"/providers/{provider.id}").get_data(as_text=True)
    assert "备注[U+202D]尾[U+200C]" in page


def test_edit_form_keeps_invisible_characters_so_a_save_changes_nothing(login, make_provider, session):
    provider = make_provider(legal_name=NAME)
    client = login("analyst")
    form = client.get(f"/providers/{provider.id}/edit").get_data(as_text=True)
    assert not any(char in form for char in HIDDEN)
    value = re.search(r'name="legal_name" id="f-legal_name"\s+value="([^"]*)"', form).group(1)
    assert "&#x202E;" in value and "&lt;b&gt;" in value
    data = {**provider_data(), "legal_name": html.unescape(value), "version": str(provider.version)}
    response = client.post(f"/providers/{provider.id}/edit", data=data)
    assert response.status_code in (302, 303), response.get_data(as_text=True)[:2000]
    session.expire_all()
    session.refresh(provider)
    assert provider.legal_name == NAME


def test_javascript_website_is_an_error_under_the_field(login):
    data = {**provider_data(), "website": "javascript:alert(1)", "registered_capital_cny": "12"}
    response = login("analyst").post("/providers/new", data=data)
    assert response.status_code == 422
    assert "网址须为 http:// 或 https:// 链接" in field_error(response.get_data(as_text=True), "website")
    data["website"] = "gpu.example.cn"
    assert login("analyst", "analyst2").post("/providers/new", data=data).status_code in (302, 303)


def test_marker_hooks_keep_escaping():
    assert reveal_in_page(Markup("<b>\u202e</b>")) == Markup("<b>[U+202E]</b>")
    assert reveal_in_page("<b>\u200d") == "<b>[U+200D]"  # plain text: still escaped after finalize
    assert reveal_in_page(3) == 3
    assert form_value('<a href="x">\u202e') == Markup("&lt;a href=&#34;x&#34;&gt;&#x202E;")
    assert form_value(None) == Markup("")


@pytest.mark.parametrize("value", ["²", "9" * 5000, "0", "-1"])
def test_numbers_in_query_strings_never_give_a_500(login, make_provider, value):
    provider = make_provider()
    client = login("admin")
    urls = [
        f"/jobs?page={value}",
        f"/providers/{provider.id}/evidence?page={value}",
        f"/providers/{provider.id}/credentials?run={value}",
        f"/providers/{provider.id}/credentials?job={value}",
        f"/bench-runs/compare?a={value}&b=1",
    ]
    for url in urls:
        status = client.get(url).status_code
        assert status in (200, 400, 404), (url[:80], status)
