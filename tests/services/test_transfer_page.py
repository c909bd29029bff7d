"""The /transfer page: role rules, upload with problems listed by row and field, downloads."""

from __future__ import annotations

import io
import json
import re

from app.services.providers import create_provider
from tests.conftest import csrf_token_from
from tests.services.conftest import BARE, awkward, snapshot

BAD_CSV = (
    "legal_name,registered_province,gpu_model,gpus_per_node,bandwidth_type\n"
    "示例好的有限公司,北京,H800,8,dedicated\n"
    "示例坏的有限公司,火星,H100,0,fast\n"
)


def _problem_cells(html: str) -> set[tuple[str, str]]:
    """(row, field) of every line of the problem table."""
    table = html[html.index('id="import-problems"') :]
    return set(re.findall(r'<td class="text-nowrap">([^<]*)</td>\s*<td><code>([^<]*)</code></td>', table))


def _upload(client, content: bytes, filename: str, **form):
    data = {"file": (io.BytesIO(content), filename), **form}
    return client.post("/transfer/import", data=data, content_type="multipart/form-data")


def test_anonymous_users_are_sent_to_login(app):
    client = app.test_client()
    for url in ("/transfer", "/transfer/export.json", "/transfer/export.csv"):
        response = client.get(url)
        assert response.status_code == 302 and response.location.startswith("/login"), url
    response = _upload(client, b"[]", "x.json")
    assert response.status_code == 302


def test_viewer_may_export_but_not_import(login, session):
    create_provider(session, data=awkward())
    client = login("viewer")
    page = client.get("/transfer")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "/transfer/export.json" in html and "/transfer/export.csv" in html
    assert 'action="/transfer/import"' not in html
    assert _upload(client, json.dumps([BARE]).encode(), "x.json").status_code == 403
    assert [p["legal_name"] for p in snapshot(session)] == [awkward()["legal_name"]]

    download = client.get("/transfer/export.json")
    assert download.status_code == 200
    assert download.mimetype == "application/json"
    assert "attachment" in download.headers["Content-Disposition"]
    assert json.loads(download.data)["providers"][0]["legal_name"] == awkward()["legal_name"]
    csv_download = client.get("/transfer/export.csv")
    assert csv_download.status_code == 200 and csv_download.mimetype == "text/csv"
    assert csv_download.data.startswith(b"\xef\xbb\xbf")
    assert client.get("/transfer/export.xml").status_code == 404


def test_analyst_sees_the_upload_form_with_csrf_field(app, login):
    client = login("analyst")
    html = client.get("/transfer").get_data(as_text=True)
    assert 'action="/transfer/import"' in html
    assert 'enctype="multipart/form-data"' in html
    assert 'name="dry_run"' in html
    assert csrf_token_from(html)


def test_upload_with_invalid_rows_lists_row_and_field_and_imports_nothing(login, session):
    client = login("analyst")
    response = _upload(client, BAD_CSV.encode("gbk"), "providers.csv")
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert "没有导入任何数据" in html
    assert _problem_cells(html) == {
        ("3", "registered_province"),
        ("3", "gpus_per_node"),
        ("3", "bandwidth_type"),
    }
    assert snapshot(session) == []


def test_dry_run_then_real_import(login, session):
    client = login("analyst")
    content = json.dumps({"providers": [awkward(), BARE]}, ensure_ascii=False).encode()
    response = _upload(client, content, "registry.json", dry_run="y")
    assert response.status_code == 200
    assert "试运行" in response.get_data(as_text=True)
    assert snapshot(session) == []
    response = _upload(client, content, "registry.json")
    assert response.status_code == 200
    assert "已导入 2 家供应商" in response.get_data(as_text=True)
    assert len(snapshot(session)) == 2


def test_missing_file_and_unknown_format_are_explained(login, session):
    client = login("analyst")
    response = client.post("/transfer/import", data={}, content_type="multipart/form-data")
    assert response.status_code == 422
    assert "<code>file</code>" in response.get_data(as_text=True)
    response = _upload(client, b"legal_name\nx\n", "providers.xlsx")
    assert response.status_code == 422
    assert "<code>format</code>" in response.get_data(as_text=True)
    response = _upload(client, "legal_name\n示例格式有限公司\n".encode(), "providers.xlsx", format="csv")
    assert response.status_code == 200
    assert [p["legal_name"] for p in snapshot(session)] == ["示例格式有限公司"]


def test_upload_needs_csrf_when_protection_is_on(app, login):
    client = login("analyst")
    app.config["WTF_CSRF_ENABLED"] = True
    try:
        response = _upload(client, b"[]", "x.json")
        assert response.status_code == 400
        html = client.get("/transfer").get_data(as_text=True)
        token = csrf_token_from(html)
        ok = _upload(client, json.dumps([BARE]).encode(), "x.json", csrf_token=token)
        assert ok.status_code == 200, ok.get_data(as_text=True)[:500]
    finally:
        app.config["WTF_CSRF_ENABLED"] = False
