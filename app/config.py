"""Settings: the only place that reads environment variables."""

from __future__ import annotations

import secrets
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    """Runtime configuration, read from the environment (prefix-free names)."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore")

    instance_path: Path = Field(default=PROJECT_ROOT / "instance", alias="GPUVET_INSTANCE_PATH")
    database_url: str | None = Field(default=None, alias="DATABASE_URL")
    secret_key: str | None = Field(default=None, alias="SECRET_KEY")
    redis_url: str | None = Field(default=None, alias="REDIS_URL")
    session_cookie_secure: bool = Field(default=False, alias="SESSION_COOKIE_SECURE")
    default_locale: str = Field(default="zh", alias="GPUVET_DEFAULT_LOCALE")
    page_size: int = Field(default=20, alias="GPUVET_PAGE_SIZE")

    def resolved_database_url(self) -> str:
        """Return DATABASE_URL, or the SQLite file under the instance folder."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.instance_path / 'gpuvet.sqlite3'}"

    def resolved_secret_key(self) -> str:
        """Return SECRET_KEY, or one generated once and kept under the instance folder."""
        if self.secret_key:
            return self.secret_key
        key_file = self.instance_path / "secret_key"
        if not key_file.exists():
            self.instance_path.mkdir(parents=True, exist_ok=True)
            key_file.write_text(secrets.token_urlsafe(48))
            key_file.chmod(0o600)
        return key_file.read_text().strip()
