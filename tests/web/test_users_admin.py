"""Account administration: only admins, field errors, last-admin protection, new passwords work."""

from __future__ import annotations

from sqlmodel import select

from app.models import AuditEntry, User
from tests.conftest import PASSWORD


def _user(session, name):
    session.expire_all()
    return session.exec(select(User).where(User.username == name)).one()


def test_only_admins_reach_user_admin(login):
    assert login("analyst").get("/admin/users").status_code == 403
    assert login("viewer").get("/admin/users").status_code == 403
    page = login("admin").get("/admin/users")
    assert page.status_code == 200
    assert "用户管理" in page.get_data(as_text=True)


def test_admin_creates_user_who_can_log_in(app, login, session):
    admin = login("admin")
    response = admin.post(
        "/admin/users", data={"username": "小王", "password": "long enough pw", "role": "analyst"}
    )
    assert response.status_code == 302
    assert _user(session, "小王").role == "analyst"
    other = app.test_client()
    assert other.post("/login", data={"username": "小王", "password": "long enough pw"}).status_code == 302


def test_bad_new_user_names_the_field_and_keeps_input(login):
    response = login("admin").post(
        "/admin/users", data={"username": "abc", "password": "short", "role": "analyst"}
    )
    html = response.get_data(as_text=True)
    assert response.status_code == 422
    assert "密码至少 10 个字符" in html and 'value="abc"' in html


def test_role_change_and_deactivation_are_audited(login, make_user, session):
    admin = login("admin")
    make_user("bob", "viewer")
    bob = _user(session, "bob")
    assert (
        admin.post(f"/admin/users/{bob.id}", data={"role": "analyst", "active": "false"}).status_code == 302
    )
    bob = _user(session, "bob")
    assert (bob.role, bob.active) == ("analyst", False)
    entry = session.exec(
        select(AuditEntry).where(AuditEntry.entity == "user", AuditEntry.action == "update")
    ).one()
    assert entry.actor_name == "admin"
    assert entry.changes == {"role": ["viewer", "analyst"], "active": [True, False]}


def test_admin_cannot_demote_self_or_remove_last_admin(login, session):
    admin = login("admin")
    me = _user(session, "admin")
    response = admin.post(f"/admin/users/{me.id}", data={"role": "viewer", "active": "true"})
    assert response.status_code == 422
    assert "不能降低自己的角色" in response.get_data(as_text=True)
    assert _user(session, "admin").role == "admin"


def test_password_reset(app, login, make_user, session):
    admin = login("admin")
    make_user("carol", "viewer")
    carol = _user(session, "carol")
    assert admin.post(f"/admin/users/{carol.id}", data={"password": "brand new secret"}).status_code == 302
    client = app.test_client()
    assert client.post("/login", data={"username": "carol", "password": PASSWORD}).status_code == 401
    assert (
        client.post("/login", data={"username": "carol", "password": "brand new secret"}).status_code == 302
    )
    entry = session.exec(
        select(AuditEntry).where(AuditEntry.entity == "user", AuditEntry.action == "update")
    ).all()
    assert entry == []  # a password change is not copied into the audit trail


def test_admin_page_refuses_weak_passwords_on_create_and_reset(login, make_user, session):
    admin = login("admin")
    created = admin.post("/admin/users", data={"username": "dan", "password": "password12", "role": "viewer"})
    assert created.status_code == 422 and "常见密码" in created.get_data(as_text=True)
    make_user("erin", "viewer")
    erin = _user(session, "erin")
    reset = admin.post(f"/admin/users/{erin.id}", data={"password": "erin-erin-erin"})
    assert reset.status_code == 422 and "用户名" in reset.get_data(as_text=True)
    assert _user(session, "erin").password_hash == erin.password_hash


def test_admin_page_lists_tokens_with_last_use_and_revokes_them(app, login, make_user, session):
    from app.accounts import users

    admin = login("admin")
    make_user("fay", "viewer")
    token = users.issue_token(session, username="fay", expires_days=30)
    assert (
        app.test_client().get("/api/v1/providers", headers={"Authorization": f"Bearer {token}"}).status_code
        == 200
    )
    (row, _owner), *_ = users.list_tokens(session)
    html = admin.get("/admin/users").get_data(as_text=True)
    assert 'id="api-tokens"' in html and "fay" in html and "从未使用" not in html and "不过期" not in html
    assert f'action="/admin/tokens/{row.id}/revoke"' in html and "data-confirm=" in html
    assert admin.post(f"/admin/tokens/{row.id}/revoke").status_code == 302
    assert (
        app.test_client().get("/api/v1/providers", headers={"Authorization": f"Bearer {token}"}).status_code
        == 401
    )
    assert "已吊销" in admin.get("/admin/users").get_data(as_text=True)
    assert login("analyst").post(f"/admin/tokens/{row.id}/revoke").status_code == 403
    assert admin.post("/admin/tokens/99999/revoke").status_code == 404
