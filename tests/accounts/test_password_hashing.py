"""Production stores scrypt password hashes (the tests lower the method for speed, see tests/conftest.py)."""

import pytest

from app.accounts import passwords
from tests.conftest import PRODUCTION_HASH_METHOD


def test_production_hashes_passwords_with_scrypt(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(passwords, "HASH_METHOD", PRODUCTION_HASH_METHOD)
    stored = passwords.hash_password("correct horse battery")
    assert stored.startswith("scrypt:32768:8:1$")
    assert passwords.verify(stored, "correct horse battery")
    assert not passwords.verify(stored, "correct horse battery!")
