"""Login throttling per account and address (kept in the database), notices of failed logins, answers when
the database cannot be written, and sessions that end on the server."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlmodel import Session, select

from app import create_app
from app.accounts import login_throttle, passwords
from app.core.config import Settings
from app.models import LoginFailure, User
from app.models.user import AccountNotice
from tests.conftest import PASSWORD

NEW = "violet tractor 47 umbrella"


def _fail(client, username: str, password: str = "wrong password here"):
    return client.post("/login", data={"username": username, "password": password})


def test_an_account_is_throttled_from_an_address_after_five_failures_with_a_wait_shown(app, make_user):
    make_user("alice", "analyst")
    client = app.test_client()
    for _ in range(login_throttle.PAIR_LIMIT):
        assert _fail(client, "alice").status_code == 401
    response = _fail(client, "alice", PASSWORD)  # even the right password waits now
    assert response.status_code == 429
    retry_after = int(response.headers["Retry-After"])
    assert 0 < retry_after <= login_throttle.WINDOW.total_seconds()
    html = response.get_data(as_text=True)
    assert "登录失败次数过多，请 15 分钟后再试" in html
    assert "/providers" not in response.headers.get("Location", "")


def test_the_throttle_message_is_translated(app, make_user):
    make_user("alice", "analyst")
    client = app.test_client()
    client.get("/lang/en")
    for _ in range(login_throttle.PAIR_LIMIT + 1):
        response = _fail(client, "alice")
    assert response.status_code == 429
    assert "Too many failed logins; try again in 15 minutes" in response.get_data(as_text=True)


def test_the_account_throttle_ends_when_old_failures_age_out(app, make_user, session):
    make_user("alice", "analyst")
    client = app.test_client()
    for _ in range(login_throttle.PAIR_LIMIT):
        _fail(client, "alice")
    for row in session.exec(select(LoginFailure)).all():
        row.failed_at = row.failed_at - login_throttle.WINDOW
    session.commit()
    assert _fail(client, "alice", PASSWORD).status_code == 302


def test_a_good_login_clears_the_account_count(app, make_user):
    make_user("alice", "analyst")
    client = app.test_client()
    for _ in range(login_throttle.PAIR_LIMIT - 1):
        _fail(client, "alice")
    assert _fail(client, "alice", PASSWORD).status_code == 302
    other = app.test_client()
    for _ in range(login_throttle.PAIR_LIMIT - 1):
        assert _fail(other, "alice").status_code == 401
    assert _fail(other, "alice", PASSWORD).status_code == 302


def test_an_address_is_throttled_across_account_names(app, make_user, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(login_throttle, "ADDRESS_LIMIT", 4)
    make_user("bob", "viewer")
    guesser = app.test_client()
    guesser.environ_base["REMOTE_ADDR"] = "203.0.113.9"
    for index in range(4):
        assert _fail(guesser, f"name{index}").status_code == 401
    assert _fail(guesser, "bob", PASSWORD).status_code == 429
    elsewhere = app.test_client()
    elsewhere.environ_base["REMOTE_ADDR"] = "198.51.100.7"
    assert _fail(elsewhere, "bob", PASSWORD).status_code == 302  # bob, from his own address, gets in


def _fail_in_another_process(database_url: str, instance: str, count: int) -> None:
    from app import create_app
    from app.core.config import Settings

    settings = Settings(GPUVET_INSTANCE_PATH=Path(instance), DATABASE_URL=database_url)
    flask_app = create_app(settings, TESTING=True)
    flask_app.config["WTF_CSRF_ENABLED"] = False
    client = flask_app.test_client()
    for _ in range(count):
        assert _fail(client, "carol").status_code == 401


def test_the_count_holds_across_worker_processes(app, make_user, database_url: str, tmp_path: Path):
    make_user("carol", "analyst")
    spawn = multiprocessing.get_context("spawn")
    worker = spawn.Process(
        target=_fail_in_another_process,
        args=(database_url, str(tmp_path / "other"), login_throttle.PAIR_LIMIT),
    )
    worker.start()
    worker.join(120)
    assert worker.exitcode == 0
    assert _fail(app.test_client(), "carol", PASSWORD).status_code == 429


def test_a_parallel_burst_gets_no_more_password_checks_than_the_limit(
    app, make_user, monkeypatch: pytest.MonkeyPatch
):
    make_user("dora", "viewer")
    checks: list[int] = []
    real = passwords.check_password_hash
    monkeypatch.setattr(passwords, "check_password_hash", lambda h, p: checks.append(1) or real(h, p))
    statuses: list[int] = []

    def guess() -> None:
        statuses.append(_fail(app.test_client(), "dora").status_code)

    threads = [threading.Thread(target=guess) for _ in range(3 * login_throttle.PAIR_LIMIT)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(statuses) == len(threads) and set(statuses) <= {401, 429} and 429 in statuses
    assert len(checks) <= login_throttle.PAIR_LIMIT


def test_a_throttled_attempt_does_not_extend_the_lockout(app, make_user, session):
    make_user("dora", "viewer")
    client = app.test_client()
    for _ in range(login_throttle.PAIR_LIMIT + 3):
        _fail(client, "dora")
    assert len(session.exec(select(LoginFailure)).all()) == login_throttle.PAIR_LIMIT


def _from(app, address: str):
    """A test client whose requests come from `address`."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client


ATTACKER, OWNER, ELSEWHERE = "203.0.113.9", "198.51.100.7", "192.0.2.44"


def test_failures_from_another_address_never_lock_the_owner_out(app, make_user):
    make_user("olga", "analyst")
    attacker = _from(app, ATTACKER)
    statuses = [_fail(attacker, "olga").status_code for _ in range(login_throttle.PAIR_LIMIT + 3)]
    assert statuses == [401] * login_throttle.PAIR_LIMIT + [429] * 3
    assert _fail(_from(app, OWNER), "olga", PASSWORD).status_code == 302
    assert _fail(attacker, "olga", PASSWORD).status_code == 429  # the owner's login reset nothing there


def test_the_owners_typos_count_apart_from_the_attackers(app, make_user):
    make_user("olga", "analyst")
    for _ in range(login_throttle.PAIR_LIMIT):
        _fail(_from(app, ATTACKER), "olga")
    owner = _from(app, OWNER)
    for _ in range(login_throttle.PAIR_LIMIT - 1):
        assert _fail(owner, "olga").status_code == 401
    assert _fail(owner, "olga", PASSWORD).status_code == 302


def test_the_account_ceiling_stops_guessing_addresses_but_not_a_fresh_one(
    app, make_user, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(login_throttle, "ACCOUNT_CEILING", 6)
    make_user("olga", "analyst")
    guessers = [_from(app, f"203.0.113.{n}") for n in range(1, 4)]
    for guesser in guessers:  # 2 failures from each of 3 addresses: under the pair limit, at the ceiling
        assert [_fail(guesser, "olga").status_code for _ in range(2)] == [401, 401]
    response = _fail(guessers[0], "olga", PASSWORD)
    assert response.status_code == 429
    assert 0 < int(response.headers["Retry-After"]) <= login_throttle.CEILING_WINDOW.total_seconds()
    newcomer = _from(app, "203.0.113.50")  # one try, then it has failed here too
    assert [_fail(newcomer, "olga").status_code for _ in range(2)] == [401, 429]
    assert _fail(_from(app, OWNER), "olga", PASSWORD).status_code == 302


def test_under_the_ceiling_an_address_the_owner_logged_in_from_keeps_its_allowance(
    app, make_user, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(login_throttle, "ACCOUNT_CEILING", 6)
    make_user("olga", "analyst")
    owner, other = _from(app, OWNER), _from(app, ELSEWHERE)
    assert _fail(owner, "olga", PASSWORD).status_code == 302  # OWNER is known from now on
    for guesser in [_from(app, f"203.0.113.{n}") for n in range(1, 4)]:
        _fail(guesser, "olga")
        _fail(guesser, "olga")
    assert [_fail(owner, "olga").status_code for _ in range(2)] == [401, 401]  # typos at home
    assert _fail(owner, "olga", PASSWORD).status_code == 302
    assert [_fail(other, "olga").status_code for _ in range(2)] == [401, 429]  # not known: one try


def test_a_login_address_is_known_for_a_while(app, make_user, session, monkeypatch: pytest.MonkeyPatch):
    from app.models.user import LoginAddress

    make_user("olga", "analyst")
    _fail(_from(app, OWNER), "olga", PASSWORD)
    _fail(_from(app, OWNER), "olga", PASSWORD)
    (known,) = session.exec(select(LoginAddress)).all()
    assert (known.username, known.address) == ("olga", OWNER)
    known.last_success_at = known.last_success_at - login_throttle.KNOWN_FOR
    session.commit()
    _fail(_from(app, ELSEWHERE), "olga", PASSWORD)  # a later login forgets addresses unused that long
    session.expire_all()
    assert {row.address for row in session.exec(select(LoginAddress)).all()} == {ELSEWHERE}


def test_the_ceiling_counts_an_hour_of_failures(app, make_user, session, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(login_throttle, "ACCOUNT_CEILING", 6)
    make_user("olga", "analyst")
    guessers = [_from(app, f"203.0.113.{n}") for n in range(1, 4)]
    for guesser in guessers:
        _fail(guesser, "olga")
        _fail(guesser, "olga")
    for row in session.exec(select(LoginFailure)).all():  # 20 minutes ago: past WINDOW, within the hour
        row.failed_at = row.failed_at - login_throttle.WINDOW - login_throttle.WINDOW / 3
    session.commit()
    assert _fail(guessers[0], "olga", PASSWORD).status_code == 429
    for row in session.exec(select(LoginFailure)).all():
        row.failed_at = row.failed_at - login_throttle.CEILING_WINDOW
    session.commit()
    assert _fail(guessers[0], "olga", PASSWORD).status_code == 302


# ---------------------------------------------------------------- the owner hears of failed logins


def _notices(session: Session, name: str) -> list[AccountNotice]:
    session.expire_all()
    user = session.exec(select(User).where(User.username == name)).one()
    return list(session.exec(select(AccountNotice).where(AccountNotice.user_id == user.id)).all())


def test_a_burst_of_failures_puts_one_notice_in_the_owners_inbox(app, make_user, session):
    make_user("olga", "analyst")
    for _ in range(login_throttle.PAIR_LIMIT - 1):
        _fail(_from(app, ATTACKER), "olga")
    assert _notices(session, "olga") == []  # a few typos tell nobody
    _fail(_from(app, ELSEWHERE), "olga")
    for _ in range(6):
        _fail(_from(app, ATTACKER), "olga")
    (notice,) = _notices(session, "olga")
    assert notice.details == {
        "failures": login_throttle.PAIR_LIMIT,
        "addresses": 2,
        "latest_address": ELSEWHERE,
        "minutes": 15,
    }
    owner = _from(app, OWNER)
    assert _fail(owner, "olga", PASSWORD).status_code == 302
    inbox = owner.get("/inbox").get_data(as_text=True)
    assert 'id="account-notices"' in inbox
    assert (
        f"15 分钟内有 {login_throttle.PAIR_LIMIT} 次登录失败，来自 2 个地址，最近一次来自 {ELSEWHERE}"
        in inbox
    )
    assert owner.post("/account/notices/read").status_code == 302
    assert 'id="account-notices"' not in owner.get("/inbox").get_data(as_text=True)
    assert _notices(session, "olga")[0].read_at is not None


def test_the_notice_reads_in_english(app, make_user):
    make_user("olga", "analyst")
    for _ in range(login_throttle.PAIR_LIMIT):
        _fail(_from(app, ATTACKER), "olga")
    owner = _from(app, OWNER)
    owner.get("/lang/en")
    _fail(owner, "olga", PASSWORD)
    inbox = owner.get("/inbox").get_data(as_text=True)
    assert f"Your account had {login_throttle.PAIR_LIMIT} failed logins within 15 minutes" in inbox


def test_unknown_names_make_no_notice(app, session):
    for _ in range(login_throttle.PAIR_LIMIT):
        assert _fail(_from(app, ATTACKER), "nobody").status_code == 401
    assert session.exec(select(AccountNotice)).all() == []


# ---------------------------------------------------------------- a database that cannot be written


def _disk_full_on_throttle_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Committing a login failure raises what SQLite raises on a full disk."""
    real = Session.commit

    def commit(self: Session) -> None:
        if any(isinstance(row, LoginFailure) for row in self.new):
            raise sa.exc.OperationalError(
                "INSERT INTO login_failure", {}, sqlite3.OperationalError("database or disk is full")
            )
        real(self)

    monkeypatch.setattr(Session, "commit", commit)


def test_a_full_disk_answers_the_login_with_503_and_says_why(app, make_user, monkeypatch: pytest.MonkeyPatch):
    make_user("olga", "analyst")
    _disk_full_on_throttle_writes(monkeypatch)
    response = _fail(app.test_client(), "olga", PASSWORD)
    assert response.status_code == 503 and int(response.headers["Retry-After"]) > 0
    page = response.get_data(as_text=True)
    assert "暂时无法登录：服务器写不进数据库（可能磁盘已满）" in page
    assert 'name="password"' in page  # the login form, to try again
    english = app.test_client()
    english.get("/lang/en")
    assert "the disk may be full" in _fail(english, "olga", PASSWORD).get_data(as_text=True)


def test_a_full_disk_answers_the_password_change_with_503(app, make_user, monkeypatch: pytest.MonkeyPatch):
    make_user("ivan", "viewer")
    client = app.test_client()
    assert _fail(client, "ivan", PASSWORD).status_code == 302
    _disk_full_on_throttle_writes(monkeypatch)
    form = {"current_password": PASSWORD, "new_password": NEW, "confirm_password": NEW}
    response = client.post("/account", data=form)
    assert response.status_code == 503
    assert "可能磁盘已满" in response.get_data(as_text=True)


def test_a_full_disk_answers_the_api_with_503_in_the_error_shape(
    app, session, token_for, monkeypatch: pytest.MonkeyPatch
):
    from app.accounts import users

    headers = token_for("viewer")

    def full(*_args, **_kwargs):
        raise sa.exc.OperationalError(
            "UPDATE api_token", {}, sqlite3.OperationalError("database or disk is full")
        )

    monkeypatch.setattr(users, "revoke_token", full)
    response = app.test_client().delete("/api/v1/tokens/1", headers=headers)
    assert response.status_code == 503 and int(response.headers["Retry-After"]) > 0
    (error,) = response.get_json()["errors"]
    assert error["field"] == "" and "可能磁盘已满" in error["message"]


# ---------------------------------------------------------------- behind a reverse proxy


def _app_behind_proxies(database_url: str, tmp_path: Path, hops: int):
    settings = Settings(
        GPUVET_INSTANCE_PATH=tmp_path / f"proxy-{hops}", DATABASE_URL=database_url, GPUVET_PROXY_HOPS=hops
    )
    return create_app(settings, TESTING=True, WTF_CSRF_ENABLED=False)


def _fail_via_proxy(client, forwarded_for: str, password: str = "wrong password here"):
    return client.post(
        "/login", data={"username": "olga", "password": password}, headers={"X-Forwarded-For": forwarded_for}
    )


def test_with_one_proxy_hop_clients_are_told_apart_by_x_forwarded_for(app, make_user, database_url, tmp_path):
    make_user("olga", "analyst")
    proxied = _app_behind_proxies(database_url, tmp_path, 1).test_client()
    for _ in range(login_throttle.PAIR_LIMIT):
        assert _fail_via_proxy(proxied, f"10.9.9.9, {ATTACKER}").status_code == 401
    assert _fail_via_proxy(proxied, ATTACKER, PASSWORD).status_code == 429
    assert (
        _fail_via_proxy(proxied, f"{ATTACKER}, {OWNER}", PASSWORD).status_code == 302
    )  # the last hop counts


def test_without_proxy_hops_x_forwarded_for_is_ignored(app, make_user, database_url, tmp_path):
    make_user("olga", "analyst")
    direct = _app_behind_proxies(database_url, tmp_path, 0).test_client()
    for _ in range(login_throttle.PAIR_LIMIT):
        _fail_via_proxy(direct, ATTACKER)
    assert _fail_via_proxy(direct, OWNER, PASSWORD).status_code == 429  # a client cannot pick its address


@pytest.mark.parametrize("hops", ["-1", "6", "two"])
def test_a_bad_proxy_hops_setting_is_refused_naming_it(hops: str, monkeypatch: pytest.MonkeyPatch):
    from pydantic import ValidationError

    monkeypatch.setenv("GPUVET_PROXY_HOPS", hops)
    with pytest.raises(ValidationError, match="GPUVET_PROXY_HOPS"):
        Settings()


# ---------------------------------------------------------------- sessions end on the server


def _logged_in(app, name: str):
    client = app.test_client()
    assert client.post("/login", data={"username": name, "password": PASSWORD}).status_code == 302
    return client


def _still_in(client) -> bool:
    response = client.get("/providers")
    return response.status_code == 200


def test_logout_ends_a_copied_session_cookie(app, make_user):
    make_user("erin", "viewer")
    client = _logged_in(app, "erin")
    stolen = app.test_client()
    stolen.set_cookie("session", client.get_cookie("session").value)
    assert _still_in(stolen)
    client.post("/logout")
    assert not _still_in(stolen)
    assert not _still_in(client)


def test_logout_ends_the_users_other_sessions(app, make_user):
    make_user("erin", "viewer")
    laptop, phone = _logged_in(app, "erin"), _logged_in(app, "erin")
    laptop.post("/logout")
    assert phone.get("/providers").status_code == 302  # back to the login page
    assert _still_in(_logged_in(app, "erin"))


def test_an_admin_password_reset_ends_the_users_sessions(app, login, make_user, session):
    make_user("frank", "analyst")
    frank = _logged_in(app, "frank")
    admin = login("admin")
    user = session.exec(select(User).where(User.username == "frank")).one()
    assert admin.post(f"/admin/users/{user.id}", data={"password": NEW}).status_code == 302
    assert not _still_in(frank)
    assert _still_in(admin)


def test_deactivation_ends_the_users_sessions_and_reactivation_does_not_revive_them(
    app, login, make_user, session
):
    make_user("gina", "analyst")
    gina = _logged_in(app, "gina")
    admin = login("admin")
    user = session.exec(select(User).where(User.username == "gina")).one()
    admin.post(f"/admin/users/{user.id}", data={"role": "analyst", "active": "false"})
    assert not _still_in(gina)
    admin.post(f"/admin/users/{user.id}", data={"role": "analyst", "active": "true"})
    assert not _still_in(gina)


def test_session_version_changes_are_not_audited(app, make_user, session):
    from app.models import AuditEntry

    make_user("hana", "viewer")
    _logged_in(app, "hana").post("/logout")
    changes = [entry.changes for entry in session.exec(select(AuditEntry)).all()]
    assert all("session_version" not in change for change in changes)


# ---------------------------------------------------------------- changing one's own password


def test_changing_ones_own_password_keeps_this_session_and_ends_the_others(app, make_user):
    make_user("ivan", "viewer")
    here, there = _logged_in(app, "ivan"), _logged_in(app, "ivan")
    assert "修改密码" in here.get("/account").get_data(as_text=True)
    response = here.post(
        "/account", data={"current_password": PASSWORD, "new_password": NEW, "confirm_password": NEW}
    )
    assert response.status_code == 302
    assert _still_in(here)
    assert not _still_in(there)
    assert _fail(app.test_client(), "ivan", NEW).status_code == 302


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"current_password": "wrong one", "new_password": NEW, "confirm_password": NEW}, "当前密码不对"),
        ({"current_password": PASSWORD, "new_password": NEW, "confirm_password": NEW + "x"}, "不一致"),
        (
            {"current_password": PASSWORD, "new_password": "iloveyou12", "confirm_password": "iloveyou12"},
            "常见密码",
        ),
        (
            {"current_password": PASSWORD, "new_password": "ivan-ivan-1", "confirm_password": "ivan-ivan-1"},
            "用户名",
        ),
    ],
)
def test_a_refused_password_change_says_why_and_changes_nothing(app, make_user, form, message):
    make_user("ivan", "viewer")
    client = _logged_in(app, "ivan")
    response = client.post("/account", data=form)
    assert response.status_code == 422
    assert message in response.get_data(as_text=True)
    assert _still_in(client)
    assert _fail(app.test_client(), "ivan", PASSWORD).status_code == 302


def test_the_account_page_needs_a_login(app):
    response = app.test_client().get("/account")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_guessing_the_current_password_on_the_account_page_is_throttled(app, make_user):
    make_user("ivan", "viewer")
    client = _logged_in(app, "ivan")
    wrong = {"current_password": "not it at all", "new_password": NEW, "confirm_password": NEW}
    for _ in range(login_throttle.PAIR_LIMIT):
        assert client.post("/account", data=wrong).status_code == 422
    right = {"current_password": PASSWORD, "new_password": NEW, "confirm_password": NEW}
    response = client.post("/account", data=right)
    assert response.status_code == 429 and int(response.headers["Retry-After"]) > 0
    assert "登录失败次数过多" in response.get_data(as_text=True)
    assert _fail(app.test_client(), "ivan", NEW).status_code == 429  # the account is throttled, not changed
