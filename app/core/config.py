"""Settings: the only place that reads environment variables."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import secrets
import stat
import tempfile
from collections.abc import Callable
from datetime import time
from pathlib import Path
from typing import Annotated, Any

from flask_babel import gettext as _
from pydantic import Field, SecretStr, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from app.core.allow_lists import parse_host_entries

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def tighten(path: Path, mode: int) -> None:
    """Take group and other permissions off `path` (best effort: a folder we do not own stays as is)."""
    with contextlib.suppress(OSError):
        if stat.S_IMODE(path.stat().st_mode) & 0o077:
            path.chmod(mode)


def private_dir(path: Path) -> Path:
    """Create `path` (and its parents) if missing; `path` itself is made 0700 (it holds data and secrets)."""
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR_MODE)
    tighten(path, PRIVATE_DIR_MODE)
    return path


def read_or_create_secret(path: Path, generate: Callable[[], bytes]) -> bytes:
    """The bytes of secret file `path`, created 0600 from generate() when missing.

    The file is written under a temporary name (created 0600) and linked into place, so no reader ever
    sees it half-written or readable by others, and of two processes creating it at once one wins.
    """
    if not path.exists():
        private_dir(path.parent)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(generate())
            with contextlib.suppress(FileExistsError):
                os.link(temporary, path)
        finally:
            os.unlink(temporary)
    tighten(path, PRIVATE_FILE_MODE)
    return path.read_bytes()


def clock_time(value: str) -> time:
    """A local time of day from 'HH:MM'; ValueError (in the reader's language) otherwise."""
    match = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*", value or "")
    if not match or int(match.group(1)) > 23 or int(match.group(2)) > 59:
        raise ValueError(_("%(value)s 不是时刻，须为 时:分，如 03:00", value=repr(value)))
    return time(int(match.group(1)), int(match.group(2)))


class Settings(BaseSettings):
    """Runtime configuration, read from the environment (prefix-free names)."""

    model_config = SettingsConfigDict(env_prefix="", extra="ignore")

    instance_path: Path = Field(default=PROJECT_ROOT / "instance", alias="GPUVET_INSTANCE_PATH")
    database_url: str | None = Field(default=None, alias="DATABASE_URL")
    secret_key: str | None = Field(default=None, alias="SECRET_KEY")
    redis_url: str | None = Field(default=None, alias="REDIS_URL")
    session_cookie_secure: bool = Field(default=False, alias="SESSION_COOKIE_SECURE")
    default_locale: str = Field(default="zh", alias="GPUVET_DEFAULT_LOCALE")
    timezone: str = Field(default="Asia/Shanghai", alias="GPUVET_TIMEZONE")
    schedules_enabled: bool = Field(default=True, alias="GPUVET_SCHEDULES")  # daily re-check, weekly footers
    page_size: int = Field(default=20, alias="GPUVET_PAGE_SIZE")
    # The dashboard counts a provider as "checked long ago" when its latest check run is older than this.
    dashboard_stale_days: int = Field(default=30, ge=1, le=3650, alias="GPUVET_DASHBOARD_STALE_DAYS")
    # A verification (lookup, footer record, measurement) older than this no longer counts as current.
    verification_max_age_days: int = Field(
        default=90, ge=1, le=3650, alias="GPUVET_VERIFICATION_MAX_AGE_DAYS"
    )
    # PDF reports: the CJK font embedded (as a subset) in every report.
    report_font: Path = Field(
        default=Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"), alias="GPUVET_REPORT_FONT"
    )
    # Signed PDFs (app/reports/signing.py): the organisation's certificate and key as a PKCS#12 file and its
    # passphrase, checked at start-up; unset: one self-signed certificate made once into the instance folder.
    # GPUVET_SIGN_REPORTS signs every exported vetting and case report with it.
    sign_reports: bool = Field(default=False, alias="GPUVET_SIGN_REPORTS")
    signing_pkcs12: Path | None = Field(default=None, alias="GPUVET_SIGNING_PKCS12")
    signing_pkcs12_passphrase: SecretStr | None = Field(
        default=None, alias="GPUVET_SIGNING_PKCS12_PASSPHRASE", validate_default=True
    )
    # Background jobs (app/core/jobs.py): run inline (tests), worker threads, heartbeat seconds.
    jobs_immediate: bool = Field(default=False, alias="GPUVET_JOBS_IMMEDIATE")
    jobs_workers: int = Field(default=2, ge=1, le=64, alias="GPUVET_JOBS_WORKERS")
    jobs_heartbeat_s: float = Field(default=10.0, gt=0, le=3600, alias="GPUVET_JOBS_HEARTBEAT_S")
    # Import files larger than this are checked and written by a background job, with progress.
    import_inline_max_bytes: int = Field(
        default=256 * 1024, ge=0, le=1024 * 1024 * 1024, alias="GPUVET_IMPORT_INLINE_MAX_BYTES"
    )
    # Trial-server credentials are encrypted with this Fernet key (urlsafe base64, 32 bytes); unset:
    # one generated once into instance/trial_secret.key.
    trial_secret_key: str | None = Field(default=None, alias="GPUVET_TRIAL_SECRET_KEY")
    # Trial-server SSH (host key fetch, connection test, runs) and peer addresses: comma-separated CIDRs
    # admitting otherwise refused loopback, link-local and private addresses (as for the scraper).
    trial_allow_cidrs: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(), alias="GPUVET_TRIAL_ALLOW_CIDRS"
    )

    # Outbound HTTP (scrapers/http.py). Allow-lists are comma-separated; they admit otherwise refused
    # private/loopback addresses (CIDRs) or trusted host names ("*.example.cn" matches subdomains). A host
    # name admits private addresses only, on ports 80/443 unless given as "host:port" (app/core/allow_lists.py
    # reads the entries, scrapers/addresses.py applies them).
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
    # Outgoing e-mail (app/notify/mailer.py): off while no host is set.
    smtp_host: str | None = Field(default=None, alias="GPUVET_SMTP_HOST")
    smtp_port: int = Field(default=587, ge=1, le=65535, alias="GPUVET_SMTP_PORT")
    smtp_user: str | None = Field(default=None, alias="GPUVET_SMTP_USER")
    smtp_password: SecretStr | None = Field(default=None, alias="GPUVET_SMTP_PASSWORD")
    smtp_from: str = Field(default="gpuvet@localhost", alias="GPUVET_SMTP_FROM")
    smtp_starttls: bool = Field(default=True, alias="GPUVET_SMTP_STARTTLS")
    smtp_timeout_s: float = Field(default=10.0, gt=0, le=120, alias="GPUVET_SMTP_TIMEOUT_S")
    # Notifications (app/notify/watches.py): a webhook or e-mail delivery that fails is tried again
    # after base, 2x base, 4x base ... seconds, up to `notify_max_attempts` attempts in all.
    notify_max_attempts: int = Field(default=6, ge=1, le=20, alias="GPUVET_NOTIFY_MAX_ATTEMPTS")
    notify_retry_base_s: float = Field(default=30.0, gt=0, le=3600, alias="GPUVET_NOTIFY_RETRY_BASE_S")
    notify_webhook_timeout_s: float = Field(
        default=10.0, gt=0, le=60, alias="GPUVET_NOTIFY_WEBHOOK_TIMEOUT_S"
    )
    # Inbox items and delivery logs older than this many days are removed by the daily notify.prune job.
    notify_retention_days: int = Field(default=90, ge=1, le=3650, alias="GPUVET_NOTIFY_RETENTION_DAYS")
    # Local times (HH:MM, in `timezone`) of the daily re-check and of the weekly footer scrape (Mondays).
    schedule_daily_at: str = Field(default="03:00", alias="GPUVET_SCHEDULE_DAILY_AT")
    schedule_weekly_at: str = Field(default="04:00", alias="GPUVET_SCHEDULE_WEEKLY_AT")
    # Provider disclosure (disclosure/invitations.py): link lifetime, upload size cap, token guesses allowed
    # per client address within 15 minutes.
    invitation_days: int = Field(default=14, ge=1, le=365, alias="GPUVET_INVITATION_DAYS")
    disclosure_upload_max_mb: int = Field(default=10, ge=1, le=15, alias="GPUVET_DISCLOSURE_UPLOAD_MAX_MB")
    disclosure_token_guesses: int = Field(default=20, ge=1, le=1000, alias="GPUVET_DISCLOSURE_TOKEN_GUESSES")
    # What one invitation may keep: files, and megabytes of distinct files (a re-sent file counts once).
    disclosure_upload_max_files: int = Field(
        default=40, ge=1, le=500, alias="GPUVET_DISCLOSURE_UPLOAD_MAX_FILES"
    )
    disclosure_upload_quota_mb: int = Field(
        default=100, ge=1, le=10_000, alias="GPUVET_DISCLOSURE_UPLOAD_QUOTA_MB"
    )
    # Reverse proxies in front of the app that append to X-Forwarded-For (Werkzeug's ProxyFix): the client
    # address (login throttling, disclosure token guesses) is read that many hops back. 0: no proxy, the
    # header is ignored; set it behind nginx, or every client shares the proxy's address.
    proxy_hops: int = Field(default=0, ge=0, le=5, alias="GPUVET_PROXY_HOPS")
    # This site's address as others reach it (https://gpuvet.example.cn), for links in e-mails and webhooks.
    public_url: str | None = Field(default=None, alias="GPUVET_PUBLIC_URL")

    @field_validator("fetch_allow_cidrs", "fetch_allow_hosts", "trial_allow_cidrs", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return tuple(part for part in re.split(r"[,\s]+", value) if part)
        return value

    @field_validator("fetch_allow_cidrs", "trial_allow_cidrs")
    @classmethod
    def _cidrs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for cidr in value:
            try:
                ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                raise ValueError(_("%(value)s 不是 CIDR 网段，如 10.0.0.0/8", value=repr(cidr))) from None
        return value

    @field_validator("fetch_allow_hosts")
    @classmethod
    def _hosts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        parse_host_entries(value)
        return value

    @field_validator("schedule_daily_at", "schedule_weekly_at")
    @classmethod
    def _clock_time(cls, value: str) -> str:
        return clock_time(value).strftime("%H:%M")

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(_("%(value)s 不是时区名，如 Asia/Shanghai", value=repr(value))) from None
        return value

    @field_validator("signing_pkcs12_passphrase")
    @classmethod
    def _signing_key_opens(cls, value: SecretStr | None, info: ValidationInfo) -> SecretStr | None:
        """A configured PKCS#12 file must open with this passphrase (errors name the setting, not it)."""
        path = info.data.get("signing_pkcs12")
        if path:
            from app.core.signing_keys import configured_key

            configured_key(path, value)
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
        return read_or_create_secret(key_file, lambda: secrets.token_urlsafe(48).encode()).decode().strip()
