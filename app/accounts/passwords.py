"""Password policy applied wherever a password is set, and hashing that takes the same time for everyone."""

from __future__ import annotations

import functools
import secrets

from flask_babel import gettext as _
from werkzeug.security import check_password_hash, generate_password_hash

from app.core.errors import InvalidInput

MIN_LENGTH = 10
MAX_LENGTH = 128
# zxcvbn scores 0-4; below 3 means fewer than 10^8 guesses: a common password, a word or a simple pattern.
MIN_SCORE = 3
# zxcvbn refuses longer input; a passphrase longer than this is judged by its start.
SCORED_PREFIX = 72
# Werkzeug's default. Test-only setting: tests/conftest.py lowers it, as every test user costs a hash.
HASH_METHOD = "scrypt"


def _refuse(message: str) -> InvalidInput:
    return InvalidInput(message, field="password")


@functools.cache
def _common_passwords() -> frozenset[str]:
    from zxcvbn.frequency_lists import FREQUENCY_LISTS  # imported when a password is set, not at start-up

    return frozenset(FREQUENCY_LISTS["passwords"])


def _is_common(password: str) -> bool:
    return password.casefold() in _common_passwords()


def _score(password: str, username: str) -> int:
    from zxcvbn import zxcvbn

    return int(zxcvbn(password[:SCORED_PREFIX], user_inputs=[username, "gpuvet"])["score"])


def check_policy(password: str, *, username: str) -> None:
    """Raise InvalidInput naming the rule a new password breaks: length, the user name, a common password."""
    password = password or ""
    name = (username or "").strip().casefold()
    if len(password) < MIN_LENGTH:
        raise _refuse(_("密码至少 %(least)s 个字符", least=MIN_LENGTH))
    if len(password) > MAX_LENGTH:
        raise _refuse(_("密码最多 %(most)s 个字符", most=MAX_LENGTH))
    if name and (password.casefold() == name or (len(name) >= 3 and name in password.casefold())):
        raise _refuse(_("密码不能是或包含用户名"))
    if _is_common(password):
        raise _refuse(_("密码是常见密码，请换一个"))
    if _score(password, name) < MIN_SCORE:
        raise _refuse(_("密码太容易猜到（常见词、键盘序列或简单规律），请用更长的词组"))


def hash_password(password: str) -> str:
    """Salted hash of a password for storage."""
    return generate_password_hash(password, method=HASH_METHOD)


@functools.cache
def _dummy_hash() -> str:
    return generate_password_hash(secrets.token_urlsafe(16), method=HASH_METHOD)


def verify(password_hash: str | None, password: str) -> bool:
    """Check a password; with no stored hash (unknown user) check a dummy one so both take as long."""
    if password_hash is None:
        check_password_hash(_dummy_hash(), password or "")
        return False
    return check_password_hash(password_hash, password or "")
