"""Password policy wherever a password is set; equal work for unknown users and wrong passwords."""

from __future__ import annotations

import time

import pytest

from app.accounts import passwords, users
from app.core.errors import InvalidInput

GOOD = "violet tractor 47 umbrella"


@pytest.mark.parametrize(
    ("password", "username", "rule"),
    [
        ("short1!", "alice", "至少 10 个字符"),
        ("x" * (passwords.MAX_LENGTH + 1), "alice", "最多"),
        ("alicealice", "alicealice", "用户名"),
        ("ALICE-is-the-best-2024", "alice", "用户名"),
        ("password123", "bob", "常见密码"),
        ("1234567890", "bob", "常见密码"),
        ("qwertyuiop", "bob", "常见密码"),
        ("abcdabcdabcd", "bob", "太容易猜到"),
        ("P@ssw0rd2024", "bob", "太容易猜到"),
        ("monkey123456", "bob", "太容易猜到"),
    ],
)
def test_policy_names_the_broken_rule(password: str, username: str, rule: str):
    with pytest.raises(InvalidInput) as caught:
        passwords.check_policy(password, username=username)
    (error,) = caught.value.errors
    assert error.field == "password"
    assert rule in error.message and error.message.startswith("密码")  # Chinese outside a request
    assert "(password" not in error.message  # one language: no English in brackets


@pytest.mark.parametrize("password", [GOOD, "correct horse battery", "Zq8#kd!2xLm"])
def test_policy_accepts_strong_passwords(password: str):
    passwords.check_policy(password, username="alice")


def test_a_long_passphrase_is_scored_by_its_start():
    passwords.check_policy(GOOD * 4, username="alice")  # 100 characters: beyond what zxcvbn accepts


def test_create_user_applies_the_policy(session):
    with pytest.raises(InvalidInput, match="常见密码"):
        users.create_user(session, username="carol", password="iloveyou12", role="viewer")
    with pytest.raises(InvalidInput, match="用户名"):
        users.create_user(session, username="carol", password="carol-carol-carol", role="viewer")
    assert users.list_users(session) == []


def test_set_password_applies_the_policy(session):
    user = users.create_user(session, username="dave", password=GOOD, role="viewer")
    with pytest.raises(InvalidInput, match="常见密码"):
        users.set_password(session, user_id=user.id, password="password1234")
    session.rollback()
    assert users.authenticate(session, username="dave", password=GOOD) is not None


def test_unknown_users_cost_a_password_hash_check(session, monkeypatch: pytest.MonkeyPatch):
    users.create_user(session, username="erin", password=GOOD, role="viewer")
    checked: list[str] = []
    real = passwords.check_password_hash

    def spy(stored: str, given: str) -> bool:
        checked.append(given)
        return real(stored, given)

    monkeypatch.setattr(passwords, "check_password_hash", spy)
    assert users.authenticate(session, username="nobody", password="guess one") is None
    assert users.authenticate(session, username="erin", password="guess two") is None
    assert checked == ["guess one", "guess two"]


def test_deactivated_users_cost_a_password_hash_check_too(session, monkeypatch: pytest.MonkeyPatch):
    user = users.create_user(session, username="frank", password=GOOD, role="viewer")
    user.active = False
    session.commit()
    checked: list[str] = []
    real = passwords.check_password_hash
    monkeypatch.setattr(passwords, "check_password_hash", lambda h, p: checked.append(p) or real(h, p))
    assert users.authenticate(session, username="frank", password=GOOD) is None
    assert checked == [GOOD]


def _fastest(session, username: str, rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        assert users.authenticate(session, username=username, password="not it at all") is None
        times.append(time.perf_counter() - start)
    return min(times)


def test_unknown_user_and_wrong_password_take_about_as_long(session):
    users.create_user(session, username="grace", password=GOOD, role="viewer")
    _fastest(session, "nobody", rounds=1)  # the dummy hash is made on first use
    unknown, wrong = _fastest(session, "nobody"), _fastest(session, "grace")
    # A hash check takes tens of milliseconds; skipping it (the old code) took well under one.
    assert unknown > 0.5 * wrong, (unknown, wrong)
