"""Role matrix: viewers read, analysts edit, admins also delete providers and their nested records."""

from __future__ import annotations

import pytest

from app.models import Provider


@pytest.fixture
def seeded(make_provider) -> Provider:
    return make_provider(
        datacenters=[{"name": "一号机房", "province": "北京"}],
        offers=[{"gpu_model": "H800", "gpus_per_node": 8, "datacenter_name": "一号机房"}],
    )


def test_viewer_reads_but_cannot_change(login, seeded):
    client = login("viewer")
    pid, version, offer = seeded.id, seeded.version, seeded.offers[0].id
    assert client.get("/providers").status_code == 200
    detail = client.get(f"/providers/{pid}")
    assert detail.status_code == 200
    html = detail.get_data(as_text=True)
    assert f"/providers/{pid}/edit" not in html
    assert "/offers/new" not in html
    assert "新建供应商" not in html
    forbidden = [
        ("get", "/providers/new", None),
        ("post", "/providers/new", {"legal_name": "某某科技有限公司"}),
        ("get", f"/providers/{pid}/edit", None),
        ("post", f"/providers/{pid}/edit", {"legal_name": "改名科技有限公司", "version": version}),
        ("get", f"/providers/{pid}/offers/new", None),
        (
            "post",
            f"/providers/{pid}/offers/new",
            {"gpu_model": "A100", "gpus_per_node": "8", "version": version},
        ),
        ("get", f"/providers/{pid}/offers/{offer}/edit", None),
        ("post", f"/providers/{pid}/offers/{offer}/delete", {"version": version}),
        ("get", f"/providers/{pid}/delete", None),
        ("post", f"/providers/{pid}/delete", {"version": version}),
    ]
    for method, url, data in forbidden:
        response = getattr(client, method)(url, data=data)
        assert response.status_code == 403, (method, url)
        assert "你的角色无权执行此操作" in response.get_data(as_text=True)


def test_analyst_edits_but_cannot_delete_provider(login, seeded, session):
    client = login("analyst")
    pid = seeded.id
    html = client.get(f"/providers/{pid}").get_data(as_text=True)
    assert f"/providers/{pid}/edit" in html
    assert f"/providers/{pid}/delete" not in html

    assert client.get("/providers/new").status_code == 200
    response = client.post(
        "/providers/new", data={"legal_name": "上海新建算力有限公司", "status": "candidate"}
    )
    assert response.status_code == 302

    response = client.post(
        f"/providers/{pid}/edit",
        data={
            "legal_name": "北京示例算力科技有限公司",
            "short_name": "新简称",
            "status": "approved",
            "version": "1",
        },
    )
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]

    offer = seeded.offers[0].id
    html = client.get(f"/providers/{pid}").get_data(as_text=True)
    assert f"/providers/{pid}/offers/{offer}/edit" in html
    assert f"/providers/{pid}/offers/{offer}/delete" not in html  # deleting is for admins
    response = client.post(f"/providers/{pid}/offers/{offer}/delete", data={"version": "2"})
    assert response.status_code == 403
    session.expire_all()
    assert [o.id for o in session.get(Provider, pid).offers] == [offer]

    assert client.get(f"/providers/{pid}/delete").status_code == 403
    assert client.post(f"/providers/{pid}/delete", data={"version": "3"}).status_code == 403
    assert session.get(Provider, pid) is not None


def test_admin_deletes_a_nested_record(login, seeded, session):
    client = login("admin")
    pid, offer = seeded.id, seeded.offers[0].id
    assert f"/providers/{pid}/offers/{offer}/delete" in client.get(f"/providers/{pid}").get_data(as_text=True)
    response = client.post(f"/providers/{pid}/offers/{offer}/delete", data={"version": "1"})
    assert response.status_code == 302
    session.expire_all()
    assert session.get(Provider, pid).offers == []


def test_admin_deletes_after_confirmation(login, seeded, session):
    client = login("admin")
    pid = seeded.id
    assert f"/providers/{pid}/delete" in client.get(f"/providers/{pid}").get_data(as_text=True)
    confirm = client.get(f"/providers/{pid}/delete")
    assert confirm.status_code == 200
    html = confirm.get_data(as_text=True)
    assert 'name="version" value="1"' in html
    assert "确认删除" in html

    response = client.post(f"/providers/{pid}/delete", data={"version": "1"})
    assert response.status_code == 302
    assert response.location == "/providers"
    session.expire_all()
    assert session.get(Provider, pid) is None
    assert client.get(f"/providers/{pid}").status_code == 404


def test_admin_delete_with_stale_version_is_refused(login, seeded, session):
    client = login("admin")
    pid = seeded.id
    response = client.post(f"/providers/{pid}/delete", data={"version": "0"})
    assert response.status_code == 409
    assert "请重新打开页面" in response.get_data(as_text=True)
    response = client.post(f"/providers/{pid}/delete", data={})
    assert response.status_code == 422
    assert "缺少版本号" in response.get_data(as_text=True)
    session.expire_all()
    assert session.get(Provider, pid) is not None
