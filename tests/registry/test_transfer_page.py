"""The /transfer page: role rules, upload with problems listed by row and field, downloads."""

from __future__ import annotations

import html as markup
import io
import json
import re

from app.registry.providers import create_provider, get_provider, update_provider
from tests.conftest import csrf_token_from
from tests.registry.conftest import BARE, awkward, snapshot

BAD_CSV = (
    "legal_name,registered_province,gpu_model,gpus_per_node,bandwidth_type\n"
    "示例好的有限公司,北京,H800,8,dedicated\n"
    "示例坏的有限公司,火星,H100,0,fast\n"
)


def _problem_cells(html: str) -> set[tuple[str, str]]:
    """(row, field as in the file) of every line of the problem table."""
    table = html[html.index('id="import-problems"') :]
    return set(
        re.findall(r'<td class="text-nowrap">([^<]*)</td>\s*<td class="text-break" title="([^"]*)">', table)
    )


def _apply_form(html: str) -> dict[str, str]:
    """The hidden fields of the preview's apply form."""
    form = html[html.index('id="import-apply"') :]
    form = form[: form.index("</form>")]
    return {name: markup.unescape(value) for name, value in re.findall(r'name="(\w+)" value="([^"]*)"', form)}


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
    assert "上传并预览" in html and 'name="dry_run"' not in html
    assert csrf_token_from(html)


def test_upload_with_invalid_rows_lists_row_and_field_and_imports_nothing(login, session):
    client = login("analyst")
    response = _upload(client, BAD_CSV.encode("gbk"), "providers.csv")
    assert response.status_code == 422
    html = response.get_data(as_text=True)
    assert "没有导入任何数据" in html and "注册省份" in html and "套餐 · 每节点 GPU 数" in html
    assert _problem_cells(html) == {
        ("3", "registered_province"),
        ("3", "gpus_per_node"),
        ("3", "bandwidth_type"),
    }
    assert snapshot(session) == []


def test_upload_previews_then_apply_writes_and_a_second_upload_shows_no_change(login, session):
    client = login("analyst")
    content = json.dumps({"providers": [awkward(), BARE]}, ensure_ascii=False).encode()
    response = _upload(client, content, "registry.json")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "预览：新增 2 家，更新 0 家，0 家无变化。尚未写入任何数据。" in html
    assert snapshot(session) == []
    applied = client.post("/transfer/apply", data=_apply_form(html))
    assert applied.status_code == 200
    assert "已应用：新增 2 家供应商，更新 0 家" in applied.get_data(as_text=True)
    assert len(snapshot(session)) == 2
    again = client.post("/transfer/apply", data=_apply_form(html))  # the kept file is gone once applied
    assert again.status_code == 404 and "已应用或已过期" in again.get_data(as_text=True)

    export = client.get("/transfer/export.csv?headers=zh")
    assert export.data.decode("utf-8-sig").startswith("供应商ID,企业名称,")
    assert "-zh.csv" in export.headers["Content-Disposition"]
    same = _upload(client, export.data, "registry.csv").get_data(as_text=True)
    assert "无变化：文件中的 2 家供应商与登记内容完全一致" in same and 'id="import-apply"' not in same
    assert client.get("/transfer/export.csv?headers=fr").status_code == 404


def test_preview_lists_old_and_new_values_and_a_stale_apply_is_refused(login, session):
    stored = create_provider(session, data=awkward())
    client = login("analyst")
    document = json.loads(client.get("/transfer/export.json").data)
    document["providers"][0]["offers"][0]["price_gpu_hour_cny"] = 12.5
    html = _upload(client, json.dumps(document).encode(), "edit.json").get_data(as_text=True)
    assert "单价（元/卡·时）" in html and "15.8" in html and "12.5" in html and "更新" in html
    form = _apply_form(html)
    update_provider(session, provider_id=stored.id, patch={"version": stored.version, "notes": "抢先修改"})
    before = snapshot(session)
    refused = client.post("/transfer/apply", data=form)
    assert refused.status_code == 409
    text = refused.get_data(as_text=True)
    assert "在预览之后已被" in text and "没有写入任何数据" in text
    assert snapshot(session) == before
    assert get_provider(session, provider_id=stored.id).offers[0].price_gpu_hour_cny == 15.8


def test_messages_follow_the_english_ui(login, session):
    client = login("analyst")
    with client.session_transaction() as state:
        state["lang"] = "en"
    response = _upload(client, "legal_name,colour\n示例有限公司,red\n".encode(), "x.csv")
    html = response.get_data(as_text=True)
    assert response.status_code == 422 and "Unknown column" in html and "不认识的列名" not in html
    ok = _upload(client, "legal_name\n示例有限公司\n".encode(), "x.csv").get_data(as_text=True)
    assert "Preview: 1 new" in ok and "Apply these changes" in ok


def test_missing_file_and_unknown_format_are_explained(login, session):
    client = login("analyst")
    response = client.post("/transfer/import", data={}, content_type="multipart/form-data")
    assert response.status_code == 422
    assert "请选择要导入的 JSON 或 CSV 文件" in response.get_data(as_text=True)
    response = _upload(client, b"legal_name\nx\n", "providers.xlsx")
    assert response.status_code == 422
    assert "无法从文件名判断格式" in response.get_data(as_text=True)
    response = _upload(client, "legal_name\n示例格式有限公司\n".encode(), "providers.xlsx", format="csv")
    assert response.status_code == 200
    assert snapshot(session) == []
    client.post("/transfer/apply", data=_apply_form(response.get_data(as_text=True)))
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
