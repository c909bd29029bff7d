"""Login, logout, redirects for anonymous users and the `next` parameter."""

from __future__ import annotations

from tests.conftest import PASSWORD


def test_anonymous_is_sent_to_login(app):
    client = app.test_client()
    for url in ("/", "/providers", "/providers/1", "/providers/new", "/providers/1/offers/new"):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response.location.startswith("/login?next="), response.location
    response = client.post("/providers/new", data={"legal_name": "x"})
    assert response.status_code == 302
    assert response.location.startswith("/login")


def test_login_page_renders(app):
    response = app.test_client().get("/login")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'name="username"' in html and 'name="password"' in html
    assert 'name="csrf_token"' in html


def test_wrong_password_and_unknown_user_get_the_same_message(app, make_user):
    make_user("alice", "analyst")
    client = app.test_client()
    wrong = client.post("/login", data={"username": "alice", "password": "not the password"})
    unknown = client.post("/login", data={"username": "nobody", "password": "whatever123"})
    assert wrong.status_code == unknown.status_code == 401
    assert "用户名或密码错误" in wrong.get_data(as_text=True)
    assert "用户名或密码错误" in unknown.get_data(as_text=True)
    # the typed user name is kept, the password is not
    assert 'value="alice"' in wrong.get_data(as_text=True)
    assert client.get("/providers").status_code == 302


def test_login_follows_local_next_only(app, make_user):
    make_user("alice", "analyst")
    client = app.test_client()
    response = client.post(
        "/login", data={"username": "alice", "password": PASSWORD, "next": "/providers/new"}
    )
    assert response.status_code == 302
    assert response.location == "/providers/new"
    with client.session_transaction() as session:
        assert session.permanent

    for target in ("https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)"):
        client = app.test_client()
        response = client.post("/login", data={"username": "alice", "password": PASSWORD, "next": target})
        assert response.status_code == 302
        assert response.location == "/", target  # the dashboard


def test_logout_needs_post(login):
    client = login("viewer")
    assert client.get("/logout").status_code == 405
    response = client.post("/logout")
    assert response.status_code == 302
    assert response.location == "/login"
    assert client.get("/providers").status_code == 302


def test_navbar_shows_user_role_and_logout_form(login):
    html = login("analyst", "bob").get("/providers").get_data(as_text=True)
    assert "bob" in html
    assert "分析员" in html
    assert 'action="/logout"' in html
    assert 'method="post"' in html
