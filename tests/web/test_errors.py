"""Error pages: HTML with the status and the message."""

from __future__ import annotations


def test_unknown_page_is_404_page(login):
    response = login("viewer").get("/no/such/page")
    assert response.status_code == 404
    assert response.content_type.startswith("text/html")
    html = response.get_data(as_text=True)
    assert "404" in html and "页面或记录不存在" in html
    assert "返回供应商列表" in html


def test_missing_provider_is_404_with_the_service_message(login):
    response = login("viewer").get("/providers/424242")
    assert response.status_code == 404
    assert "供应商 424242 不存在" in response.get_data(as_text=True)


def test_method_not_allowed_page(login):
    response = login("viewer").get("/logout")
    assert response.status_code == 405
    assert "不支持此请求方法" in response.get_data(as_text=True)


def test_pages_use_local_bootstrap_and_no_inline_script(login):
    client = login("viewer")
    html = client.get("/providers").get_data(as_text=True)
    assert "cdn." not in html and "jsdelivr" not in html
    assert "/bootstrap/static/" in html
    assert "<script>" not in html
    css = client.get("/static/app.css")
    assert css.status_code == 200
