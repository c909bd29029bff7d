"""Settings: the only place that reads environment variables."""

from __future__ import annotations

import ipaddress
import re
import secrets
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

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
    # PDF reports: the CJK font embedded (as a subset) in every report.
    report_font: Path = Field(
        default=Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"), alias="GPUVET_REPORT_FONT"
    )
    # Background jobs (app/jobs.py): run inline (tests), worker threads, heartbeat seconds.
    jobs_immediate: bool = Field(default=False, alias="GPUVET_JOBS_IMMEDIATE")
    jobs_workers: int = Field(default=2, ge=1, le=64, alias="GPUVET_JOBS_WORKERS")
    jobs_heartbeat_s: float = Field(default=10.0, gt=0, le=3600, alias="GPUVET_JOBS_HEARTBEAT_S")
    # Trial-server credentials are encrypted with this Fernet key (urlsafe base64, 32 bytes); unset:
    # one generated once into instance/trial_secret.key.
    trial_secret_key: str | None = Field(default=None, alias="GPUVET_TRIAL_SECRET_KEY")

    # Outbound HTTP (scrapers/http.py). Allow-lists are comma-separated; they admit otherwise refused
    # private/loopback addresses (CIDRs) or trusted host names ("*.example.cn" matches subdomains).
    fetch_allow_cidrs: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(), alias="GPUVET_FETCH_ALLOW_CIDRS"
    )
    fetch_allow_hosts: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(), alias="GPUVET_FETCH_ALLOW_HOSTS"
    )
    fetch_connect_timeout_s: float = Field(default=5.0, gt=0, le=120, alias="GPUVET_FETCH_CONNECT_TIMEOUT_S")
    fetch_read_timeout_s: float = Field(default=15.0, gt=0, le=300, alias="GPUVET_FETCH_READ_TIMEOUT_S")
    fetch_total_timeout_s: float = Field(default=30.0, gt=0, le=600, alias="GPUVET_FETCH_TOTAL_TIMEOUT_S")
    fetch_max_bytes: int = Field(
        default=5 * 1024 * 1024, ge=1024, le=100 * 1024 * 1024, alias="GPUVET_FETCH_MAX_BYTES"
    )
    fetch_retries: int = Field(default=2, ge=0, le=10, alias="GPUVET_FETCH_RETRIES")
    fetch_min_interval_s: float = Field(default=1.0, ge=0, le=60, alias="GPUVET_FETCH_MIN_INTERVAL_S")
    fetch_user_agent: str | None = Field(default=None, alias="GPUVET_FETCH_USER_AGENT")
    # Official lookups (captcha shown to the analyst). The licence API shape is our assumption.
    lookup_icp_base_url: str = Field(
        default="https://hlwicpfwc.miit.gov.cn/icpproject_query/api/", alias="GPUVET_LOOKUP_ICP_BASE_URL"
    )
    lookup_licence_base_url: str = Field(
        default="https://dxzhgl.miit.gov.cn/dxxzsp/api/", alias="GPUVET_LOOKUP_LICENCE_BASE_URL"
    )
    # Wrong captcha answers per lookup before it stops (the ICP system locks a uuid after six).
    lookup_max_failures: int = Field(default=3, ge=1, le=5, alias="GPUVET_LOOKUP_MAX_FAILURES")

    @field_validator("fetch_allow_cidrs", "fetch_allow_hosts", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part for part in re.split(r"[,\s]+", value) if part)
        return value

    @field_validator("fetch_allow_cidrs")
    @classmethod
    def _cidrs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in value:
            try:
                ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                raise ValueError(f"{cidr!r} 不是 CIDR 网段，如 10.0.0.0/8 (not a CIDR network)") from None
        return value

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
