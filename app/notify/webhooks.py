"""Webhooks: checked URLs, secrets encrypted at rest, and signed JSON POSTs through the guarded HTTP client.

Each POST carries `X-Gpuvet-Signature: sha256=<hex>`, the HMAC-SHA256 of the raw body under the webhook's
secret, and `X-Gpuvet-Timestamp` (Unix seconds), which is also the body's "sent_at", so the signature covers
it and a receiver can refuse old replays.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from cryptography.fernet import InvalidToken
from flask_babel import gettext as _
from sqlmodel import Session, col, select

from app.core import runtime_settings
from app.core.errors import InvalidInput, NotFound
from app.core.i18n import localized
from app.credentials.evidence import policy_from_settings
from app.models.notify import Webhook
from app.notify import wording
from app.trials.servers import cipher_from_settings
from scrapers.addresses import AddressPolicy, AddressRefused, ResolveFailed
from scrapers.http import BadUrl, FetchError, HttpClient, check_url

logger = logging.getLogger(__name__)
SIGNATURE_HEADER = "X-Gpuvet-Signature"
TIMESTAMP_HEADER = "X-Gpuvet-Timestamp"
EVENT_HEADER = "X-Gpuvet-Event"
DELIVERY_HEADER = "X-Gpuvet-Delivery"
SECRET_MIN_LENGTH = 16
SECRET_MAX_LENGTH = 200
RESPONSE_CAP_BYTES = 64 * 1024


@dataclass(frozen=True)
class PostOutcome:
    """What one POST gave: the HTTP status (None when no answer came) or the error, and how long it took."""

    ok: bool
    status_code: int | None
    error: str | None
    duration_ms: int


def sign(secret: str, body: bytes) -> str:
    """The signature header value for `body`: 'sha256=<hex HMAC-SHA256>'."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signature_matches(secret: str, body: bytes, header: str | None) -> bool:
    """Whether `header` is the signature of `body` (constant-time comparison), for receivers and tests."""
    return bool(header) and hmac.compare_digest(sign(secret, body), header or "")


def check_webhook_url(url: str, settings: Any) -> str:
    """The URL if it is http(s) and its host resolves only to admitted addresses; InvalidInput otherwise.

    Private and loopback addresses are refused as for scraped websites, also when carried inside an IPv6
    address (6to4, NAT64, Teredo: scrapers/addresses.py), unless the fetch allow lists (settings page, or
    GPUVET_FETCH_ALLOW_CIDRS / GPUVET_FETCH_ALLOW_HOSTS) admit them. A name that does not resolve now is
    accepted (it may be set up later): every send resolves and checks the address again, as redirects are.
    """
    url = (url or "").strip()
    if not url:
        raise InvalidInput(_("必填项"), field="url")
    if len(url) > 500:
        raise InvalidInput(_("最多 %(max_length)s 个字符", max_length=500), field="url")
    try:
        check_url(url)
    except BadUrl:
        raise InvalidInput(
            _("须为 http:// 或 https:// 开头的完整网址，且不含用户名和密码"), field="url"
        ) from None
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    settings = runtime_settings.effective(settings)
    policy = AddressPolicy(settings.fetch_allow_cidrs, settings.fetch_allow_hosts)
    try:
        policy.resolve(parts.hostname or "", port)
    except AddressRefused as exc:
        raise InvalidInput(localized(exc.message), field="url") from None
    except ResolveFailed:
        pass  # checked when sending
    return url


def new_secret() -> str:
    """A random signing secret (43 URL-safe characters)."""
    return secrets.token_urlsafe(32)


def _checked_secret(secret: str | None) -> str:
    secret = (secret or "").strip()
    if not secret:
        return new_secret()
    if not SECRET_MIN_LENGTH <= len(secret) <= SECRET_MAX_LENGTH:
        raise InvalidInput(
            _(
                "密钥须为 %(low)s 到 %(high)s 个字符；留空则自动生成",
                low=SECRET_MIN_LENGTH,
                high=SECRET_MAX_LENGTH,
            ),
            field="secret",
        )
    return secret


def encrypt_secret(secret: str, settings: Any) -> str:
    """The secret encrypted with the instance key (as trial-server SSH secrets are)."""
    return cipher_from_settings(settings).encrypt(secret.encode()).decode()


def decrypt_secret(webhook: Webhook, settings: Any) -> str:
    """The webhook's secret in clear; InvalidInput when the instance key changed since it was saved."""
    try:
        return cipher_from_settings(settings).decrypt(webhook.secret_encrypted.encode()).decode()
    except InvalidToken:
        raise InvalidInput(
            _("无法解密已保存的回调密钥：加密密钥已更换，请重新生成密钥"), field="secret"
        ) from None


def create_webhook(
    session: Session,
    settings: Any,
    *,
    url: str,
    user_id: int | None,
    description: str = "",
    secret: str | None = None,
    created_by: str = "",
) -> tuple[Webhook, str]:
    """Save a webhook (user_id None: global) and return it with its secret in clear (shown once)."""
    url = check_webhook_url(url, settings)
    clear = _checked_secret(secret)
    description = (description or "").strip()
    if len(description) > 120:
        raise InvalidInput(_("最多 %(max_length)s 个字符", max_length=120), field="description")
    webhook = Webhook(
        user_id=user_id,
        url=url,
        description=description,
        secret_encrypted=encrypt_secret(clear, settings),
        created_by_name=created_by[:60],
    )
    session.add(webhook)
    session.commit()
    session.refresh(webhook)
    return webhook, clear


def get_webhook(session: Session, webhook_id: int, *, owner_id: int | None, admin: bool) -> Webhook:
    """A webhook its caller may manage: their own, or (admins) a global one; NotFound otherwise."""
    webhook = session.get(Webhook, webhook_id)
    if webhook is None or not (webhook.user_id == owner_id or (admin and webhook.user_id is None)):
        raise NotFound(_("回调地址 %(id)s 不存在", id=webhook_id), field="webhook_id")
    return webhook


def set_enabled(session: Session, webhook: Webhook, enabled: bool) -> Webhook:
    """Turn a webhook on or off."""
    webhook.enabled = enabled
    session.add(webhook)
    session.commit()
    return webhook


def rotate_secret(session: Session, settings: Any, webhook: Webhook) -> str:
    """Give the webhook a new random secret; returns it in clear (shown once)."""
    clear = new_secret()
    webhook.secret_encrypted = encrypt_secret(clear, settings)
    session.add(webhook)
    session.commit()
    return clear


def delete_webhook(session: Session, webhook: Webhook) -> None:
    """Delete a webhook and its delivery log."""
    session.delete(webhook)
    session.commit()


def webhooks_for(session: Session, *, user_id: int | None, include_global: bool) -> list[Webhook]:
    """A user's webhooks (and the global ones when asked), oldest first."""
    condition = Webhook.user_id == user_id
    if include_global:
        condition = condition | col(Webhook.user_id).is_(None)
    return list(session.exec(select(Webhook).where(condition).order_by(col(Webhook.id))).all())


def _client(settings: Any) -> HttpClient:
    """The scraper's guarded client, limited for webhooks: no redirects, no own retries, short timeouts."""
    timeout = settings.notify_webhook_timeout_s
    policy = dataclasses.replace(
        policy_from_settings(runtime_settings.effective(settings)),
        connect_timeout=timeout,
        read_timeout=timeout,
        total_timeout=timeout * 2,
        max_bytes=RESPONSE_CAP_BYTES,
        max_redirects=0,
        retries=0,
        min_interval=0.0,
        user_agent="gpuvet-webhook/1",
    )
    return HttpClient(policy)


def post_signed(
    url: str, secret: str, document: dict[str, Any], settings: Any, *, headers: dict
) -> PostOutcome:
    """POST `document` (with "sent_at" set now) as JSON, signed; never raises for network or HTTP errors."""
    timestamp = int(time.time())
    body = json.dumps({**document, "sent_at": timestamp}, ensure_ascii=False, separators=(",", ":")).encode()
    all_headers = {
        **headers,
        "Content-Type": "application/json; charset=utf-8",
        SIGNATURE_HEADER: sign(secret, body),
        TIMESTAMP_HEADER: str(timestamp),
    }
    started = time.monotonic()
    try:
        with _client(settings) as client:
            result = client.fetch(url, method="POST", data=body, headers=all_headers, allow_truncated=True)
    except FetchError as exc:
        failure = wording.fetch_failure(exc, url, settings.notify_webhook_timeout_s)
        status = getattr(exc.result, "status", None)
        return PostOutcome(False, status, wording.stored(failure), _elapsed_ms(started))
    except Exception as exc:  # a delivery records every failure, whatever it is
        logger.warning("webhook POST to %s failed", url, exc_info=True)
        return PostOutcome(False, None, wording.stored(wording.unexpected(exc)), _elapsed_ms(started))
    error = None if result.ok else wording.stored(wording.http_status(result.status))
    return PostOutcome(result.ok, result.status, error, _elapsed_ms(started))


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
