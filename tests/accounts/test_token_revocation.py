"""A password change, a reset by an admin (page or CLI) and deactivation revoke every API token for good."""

from __future__ import annotations

from sqlmodel import select

from app.accounts import users
from app.models import ApiToken, User
from tests.conftest import PASSWORD

NEW = "violet tractor 47 umbrella"


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _works(app, token: str) -> int:
    return app.test_client().get("/api/v1/tokens", headers=_bearer(token)).status_code


def _user(session, name: str) -> User:
    session.expire_all()
    return session.exec(select(User).where(User.username == name)).one()


def _tokens_of(app, session, make_user, name: str) -> list[str]:
    """A new viewer `name` with two tokens, both answering 200."""
    make_user(name, "viewer")
    tokens = [users.issue_token(session, username=name) for _ in range(2)]
    assert [_works(app, token) for token in tokens] == [200, 200]
    return tokens


def _logged_in(app, name: str):
    client = app.test_client()
    assert client.post("/login", data={"username": name, "password": PASSWORD}).status_code == 302
    return client


def test_changing_ones_own_password_revokes_ones_tokens(app, session, make_user):
    tokens = _tokens_of(app, session, make_user, "ivan")
    other = _tokens_of(app, session, make_user, "olga")
    form = {"current_password": PASSWORD, "new_password": NEW, "confirm_password": NEW}
    response = _logged_in(app, "ivan").post("/account", data=form, follow_redirects=True)
    assert "API 令牌已全部吊销" in response.get_data(as_text=True)
    assert [_works(app, token) for token in tokens] == [401, 401]
    assert [_works(app, token) for token in other] == [200, 200]  # only ivan's tokens end


def test_an_admin_reset_on_the_page_revokes_the_users_tokens(app, session, make_user, login):
    tokens = _tokens_of(app, session, make_user, "frank")
    admin = login("admin")
    user_id = _user(session, "frank").id
    response = admin.post(f"/admin/users/{user_id}", data={"password": NEW}, follow_redirects=True)
    assert "已为 frank 重设密码：其会话已退出，API 令牌已全部吊销" in response.get_data(as_text=True)
    assert [_works(app, token) for token in tokens] == [401, 401]
    listed = admin.get("/admin/users").get_data(as_text=True)
    assert "revoked" in listed or "已吊销" in listed


def test_a_reset_from_the_command_line_revokes_the_users_tokens(app, session, make_user):
    tokens = _tokens_of(app, session, make_user, "hana")
    result = app.test_cli_runner().invoke(
        args=["users", "set-password", "hana", "--password-stdin"], input=NEW + "\n"
    )
    assert result.exit_code == 0, result.output
    assert "revoked" in result.output
    assert [_works(app, token) for token in tokens] == [401, 401]
    fresh = app.test_client()
    assert fresh.post("/login", data={"username": "hana", "password": NEW}).status_code == 302


def test_a_refused_reset_from_the_command_line_keeps_the_tokens(app, session, make_user):
    tokens = _tokens_of(app, session, make_user, "hana")
    result = app.test_cli_runner().invoke(
        args=["users", "set-password", "hana", "--password-stdin"], input="password1234\n"
    )
    assert result.exit_code == 1 and "password" in result.output
    assert [_works(app, token) for token in tokens] == [200, 200]


def test_deactivation_revokes_the_tokens_and_reactivation_keeps_them_revoked(app, session, make_user, login):
    tokens = _tokens_of(app, session, make_user, "gina")
    admin = login("admin")
    user_id = _user(session, "gina").id
    admin.post(f"/admin/users/{user_id}", data={"role": "viewer", "active": "false"})
    assert [_works(app, token) for token in tokens] == [401, 401]
    admin.post(f"/admin/users/{user_id}", data={"role": "viewer", "active": "true"})
    assert _user(session, "gina").active
    assert [_works(app, token) for token in tokens] == [401, 401]
    states = {
        users.token_state(row) for row in session.exec(select(ApiToken).where(ApiToken.user_id == user_id))
    }
    assert states == {"revoked"}
    assert _works(app, users.issue_token(session, username="gina")) == 200  # a new token works again


def test_a_role_change_keeps_the_tokens(app, session, make_user, login):
    tokens = _tokens_of(app, session, make_user, "kurt")
    admin = login("admin")
    user_id = _user(session, "kurt").id
    admin.post(f"/admin/users/{user_id}", data={"role": "analyst", "active": "true"})
    assert [_works(app, token) for token in tokens] == [200, 200]
