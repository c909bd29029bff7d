"""Settings: environment variables, generated secret key, database URL default."""

from __future__ import annotations

import stat

from app.core.config import Settings


def test_secret_key_is_generated_once_and_kept(tmp_path, monkeypatch):
    monkeypatch.delenv("SECRET_KEY", raising=False)
    settings = Settings(GPUVET_INSTANCE_PATH=tmp_path)
    first = settings.resolved_secret_key()
    assert len(first) >= 40
    assert Settings(GPUVET_INSTANCE_PATH=tmp_path).resolved_secret_key() == first
    assert stat.S_IMODE((tmp_path / "secret_key").stat().st_mode) == 0o600
    assert Settings(GPUVET_INSTANCE_PATH=tmp_path / "other").resolved_secret_key() != first


def test_environment_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "from-env")
    monkeypatch.setenv("DATABASE_URL", "postgresql+psycopg://u:p@db/x")
    monkeypatch.setenv("GPUVET_INSTANCE_PATH", str(tmp_path))
    settings = Settings()
    assert settings.resolved_secret_key() == "from-env"
    assert settings.resolved_database_url() == "postgresql+psycopg://u:p@db/x"
    assert not (tmp_path / "secret_key").exists()


def test_default_database_is_sqlite_under_instance(tmp_path, monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert Settings(GPUVET_INSTANCE_PATH=tmp_path).resolved_database_url() == (
        f"sqlite:///{tmp_path / 'gpuvet.sqlite3'}"
    )
