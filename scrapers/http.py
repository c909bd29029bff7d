"""The one module that does HTTP: timeouts, retries, per-host rate limit, size cap, charset, SSRF guard.

Every scraper and official-lookup client fetches through HttpClient. The SSRF guard runs where the
socket is opened: the host name is resolved once, every address is checked against the block rules
and the allow-list, and the connection goes to the checked address (so a DNS answer that changes
between check and connect cannot slip through). Redirects are followed here, one hop at a time, so
each hop goes through the same guard.
"""

from __future__ import annotations

import contextvars
import errno
import hashlib
import logging
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3 import exceptions as urllib3_exceptions
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError
from urllib3.util import connection as urllib3_connection
from urllib3.util.retry import Retry

from benchmarks.messages import Message
from benchmarks.messages import message as _
from scrapers import charset
from scrapers.addresses import AddressPolicy, AddressRefused, ResolveFailed
from scrapers.addresses import block_reason as block_reason  # re-exported for callers and tests

logger = logging.getLogger(__name__)

DEFAULT_USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36 "
    "gpuvet/0.1 (provider due diligence)"
)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_CHUNK = 16 * 1024


# ------------------------------------------------------------------------------------------------ errors
class FetchError(Exception):
    """A fetch that did not produce a usable response; `code` names the reason for machines."""

    code = "fetch_failed"

    def __init__(self, message: str, *, url: str = "", result: FetchResult | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.url = url
        self.result = result


class BadUrl(FetchError):
    """The URL is not an absolute http(s) URL with a host."""

    code = "bad_url"


class BlockedAddress(FetchError):
    """The host resolves to an address the SSRF guard refuses."""

    code = "blocked_address"


class FetchTimeout(FetchError):
    """Connecting, waiting or reading took longer than allowed."""

    code = "timeout"


class ResponseTooLarge(FetchError):
    """The body is larger than the size cap; `result` holds the capped bytes."""

    code = "too_large"


class TooManyRedirects(FetchError):
    """The redirect chain is longer than allowed."""

    code = "too_many_redirects"


class ConnectionFailed(FetchError):
    """The connection could not be made or broke off."""

    code = "connection"


class Unreachable(ConnectionFailed):
    """This machine cannot reach the host: its name does not resolve or the connection is refused."""

    code = "unreachable"

    def __init__(self, message: str, *, reason: str, url: str = "", said: Message | None = None) -> None:
        super().__init__(message, url=url)
        self.reason = reason  # "dns", "refused" or "network"
        self.code = f"unreachable_{reason}"
        self.said = said  # the message as its id and values, worded in each reader's language by the app


# Why a host could not be reached, as told to the analyst (zh, en).
UNREACHABLE_HINTS = {
    "dns": ("域名无法解析", "the host name does not resolve"),
    "refused": ("连接被拒绝", "the connection was refused"),
    "network": ("网络不可达", "the network is unreachable"),
}


UNREACHABLE_WHY = {"dns": _("域名无法解析"), "refused": _("连接被拒绝"), "network": _("网络不可达")}


def unreachable(url: str, reason: str) -> Unreachable:
    """An Unreachable error for url naming the cause and what to do: bilingual as text (logs, CLI), and as a
    message id with values (`said`) for a page to word in its reader's language."""
    zh, en = UNREACHABLE_HINTS[reason]
    return Unreachable(
        f"本机无法连接 {url}（{zh}）：请检查代理/网络，或手工查询后记录结果 "
        f"(this machine cannot reach {url}: {en}; check the proxy/network, or record the lookup by hand)",
        reason=reason,
        url=url,
        said=_(
            "本机无法连接 %(url)s（%(why)s）：请检查代理/网络，或手工查询后记录结果",
            url=url,
            why=UNREACHABLE_WHY[reason],
        ),
    )


# ------------------------------------------------------------------------------------------------ policy
@dataclass(frozen=True)
class HttpPolicy:
    """Limits for every fetch; built from the app settings (or by tests)."""

    connect_timeout: float = 5.0
    read_timeout: float = 15.0
    total_timeout: float = 30.0
    max_bytes: int = 5 * 1024 * 1024
    max_redirects: int = 5
    retries: int = 2
    backoff_factor: float = 0.5
    backoff_max: float = 10.0
    min_interval: float = 1.0  # seconds between two requests to the same host (per process)
    user_agent: str = DEFAULT_USER_AGENT
    allow_cidrs: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    verify_tls: bool = True


@dataclass(frozen=True)
class FetchResult:
    """One HTTP exchange as fetched: what was asked, what came back, and when."""

    url: str
    final_url: str
    method: str
    status: int
    headers: dict[str, str]
    content_type: str
    body: bytes
    truncated: bool
    sha256: str
    fetched_at: datetime
    elapsed: float
    redirects: tuple[str, ...] = ()
    peer: str = ""

    @cached_property
    def decoded(self) -> tuple[str, str]:
        """(text, encoding) of the body, decoded like a browser would."""
        return charset.decode(self.body, self.headers.get("content-type"))

    @property
    def text(self) -> str:
        """The body as text."""
        return self.decoded[0]

    @property
    def encoding(self) -> str:
        """The encoding the body was decoded with."""
        return self.decoded[1]

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300


# ------------------------------------------------------------------------------------------------ SSRF guard
class AddressGuard(AddressPolicy):
    """The shared address policy (scrapers/addresses.py), raising FetchErrors for the HTTP client."""

    def check_address(self, host: str, address: str, port: int) -> None:
        """Raise BlockedAddress unless `address` on `port` is admitted for `host`."""
        try:
            super().check_address(host, address, port)
        except AddressRefused as exc:
            raise BlockedAddress(exc.message, url=host) from None

    def resolve(self, host: str, port: int, family: int | None = None) -> list[tuple[int, tuple[Any, ...]]]:
        """Resolve host once and return (family, sockaddr) pairs, all checked; raise if any is blocked."""
        chosen = urllib3_connection.allowed_gai_family() if family is None else family
        try:
            return super().resolve(host, port, chosen)
        except ResolveFailed as exc:
            raise unreachable(exc.host or host, "dns") from exc


# A fetch in progress: the sockets it uses, so a watchdog can cut off a response that drips too slowly.
_ACTIVE: contextvars.ContextVar[_Watch | None] = contextvars.ContextVar("gpuvet_http_watch", default=None)


class _Watch:
    """Sockets of one fetch and whether its deadline has passed."""

    def __init__(self) -> None:
        self.sockets: list[socket.socket] = []
        self.fired = False
        self.lock = threading.Lock()

    def add(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self.lock:
            if self.fired:
                _shutdown(sock)
            self.sockets.append(sock)

    def fire(self) -> None:
        with self.lock:
            self.fired = True
            for sock in self.sockets:
                _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class _GuardedMixin:
    """Connection behaviour: open the socket to a guard-checked address and register it."""

    guard: AddressGuard
    peers: dict[int, str]

    def _new_conn(self) -> socket.socket:
        host = self._dns_host  # type: ignore[attr-defined]
        addresses = self.guard.resolve(host, self.port)  # type: ignore[attr-defined]
        error: Exception | None = None
        for family, sockaddr in addresses:
            try:
                sock = urllib3_connection.create_connection(
                    (sockaddr[0], sockaddr[1]),
                    self.timeout,  # type: ignore[attr-defined]
                    source_address=self.source_address,  # type: ignore[attr-defined]
                    socket_options=self.socket_options,  # type: ignore[attr-defined]
                )
            except TimeoutError as exc:
                error = ConnectTimeoutError(self, f"Connection to {host} timed out")
                error.__cause__ = exc
                continue
            except OSError as exc:
                error = NewConnectionError(self, f"Failed to establish a new connection: {exc}")
                error.__cause__ = exc
                continue
            logger.debug("connected to %s (%s) family %s", host, sockaddr[0], family)
            self.peer = sockaddr[0]
            return sock
        assert error is not None
        raise error

    def request(self, *args: Any, **kwargs: Any) -> Any:
        result = super().request(*args, **kwargs)  # type: ignore[misc]
        watch = _ACTIVE.get()
        if watch is not None:
            watch.add(self.sock)  # type: ignore[attr-defined]
        return result


class _CappedRetry(Retry):
    """Retry that never sleeps longer than backoff_max, whatever Retry-After says."""

    def get_retry_after(self, response: Any) -> float | None:
        value = super().get_retry_after(response)
        return None if value is None else min(value, self.backoff_max)


class _GuardedAdapter(HTTPAdapter):
    """requests adapter whose connection pools open sockets only to guard-checked addresses."""

    def __init__(self, guard: AddressGuard, **kwargs: Any) -> None:
        self.guard = guard
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        http_conn = type("GuardedHTTPConnection", (_GuardedMixin, HTTPConnection), {"guard": self.guard})
        https_conn = type("GuardedHTTPSConnection", (_GuardedMixin, HTTPSConnection), {"guard": self.guard})
        self.poolmanager.pool_classes_by_scheme = {
            "http": type("GuardedHTTPPool", (HTTPConnectionPool,), {"ConnectionCls": http_conn}),
            "https": type("GuardedHTTPSPool", (HTTPSConnectionPool,), {"ConnectionCls": https_conn}),
        }


# ------------------------------------------------------------------------------------------------ rate limit
class HostRateLimiter:
    """Spaces requests to the same host at least `min_interval` seconds apart (thread-safe)."""

    def __init__(self) -> None:
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def wait(self, host: str, min_interval: float) -> float:
        """Sleep until the host may be asked again; return the seconds slept."""
        if min_interval <= 0:
            return 0.0
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next.get(host, now))
            self._next[host] = slot + min_interval
        delay = slot - now
        if delay > 0:
            time.sleep(delay)
        return delay


RATE_LIMITER = HostRateLimiter()


# ------------------------------------------------------------------------------------------------ client
def check_url(url: str) -> str:
    """Return the URL if it is absolute http(s) with a host and no credentials; raise BadUrl otherwise."""
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError as exc:
        raise BadUrl(f"网址无效：{url} (invalid URL: {exc})", url=url) from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadUrl(
            f"网址须以 http:// 或 https:// 开头并包含域名：{url} (must be an absolute http(s) URL)", url=url
        )
    if parts.username or parts.password:
        raise BadUrl(f"网址不能包含用户名或密码：{url} (credentials in URLs are refused)", url=url)
    return url.strip()


class HttpClient:
    """Fetches URLs within an HttpPolicy; keeps cookies between calls like a browser session."""

    def __init__(self, policy: HttpPolicy | None = None, *, rate_limiter: HostRateLimiter | None = None):
        self.policy = policy or HttpPolicy()
        self.guard = AddressGuard(self.policy.allow_cidrs, self.policy.allow_hosts)
        self.rate_limiter = rate_limiter or RATE_LIMITER
        self.session = requests.Session()
        # No proxies or .netrc from the environment: the guard must see the real peer.
        self.session.trust_env = False
        self.session.headers.update(
            {
                "User-Agent": self.policy.user_agent,
                "Accept-Language": "zh-CN,zh;q=0.9,en;q=0.6",
                "Accept-Encoding": "gzip, deflate",
            }
        )
        retry = _CappedRetry(
            total=self.policy.retries,
            connect=self.policy.retries,
            read=0,
            status=self.policy.retries,
            redirect=False,
            backoff_factor=self.policy.backoff_factor,
            backoff_max=self.policy.backoff_max,
            status_forcelist=RETRY_STATUSES,
            raise_on_status=False,
            respect_retry_after_header=True,
        )
        adapter = _GuardedAdapter(self.guard, max_retries=retry, pool_connections=4, pool_maxsize=4)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)

    def close(self) -> None:
        """Close pooled connections."""
        self.session.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def fetch(
        self,
        url: str,
        *,
        method: str = "GET",
        data: Mapping[str, Any] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        allow_truncated: bool = False,
        max_bytes: int | None = None,
    ) -> FetchResult:
        """Fetch url (following redirects through the guard); raise a FetchError subclass on failure."""
        url = check_url(url)
        started = time.monotonic()
        fetched_at = datetime.now(UTC)
        watch = _Watch()
        timer = threading.Timer(self.policy.total_timeout, watch.fire)
        timer.daemon = True
        token = _ACTIVE.set(watch)
        timer.start()
        try:
            return self._follow(
                url,
                method=method.upper(),
                data=data,
                json=json,
                headers=headers,
                started=started,
                fetched_at=fetched_at,
                watch=watch,
                allow_truncated=allow_truncated,
                max_bytes=max_bytes or self.policy.max_bytes,
            )
        except requests.RequestException as exc:
            raise self._translate(exc, url, watch) from exc
        finally:
            timer.cancel()
            _ACTIVE.reset(token)

    def _translate(self, exc: requests.RequestException, url: str, watch: _Watch) -> FetchError:
        # Before timeouts: urllib3's NewConnectionError subclasses ConnectTimeoutError.
        reason = None if watch.fired else _unreachable_reason(exc)
        if reason is not None:
            return unreachable(url, reason)
        if watch.fired or isinstance(exc, requests.Timeout) or _timed_out(exc):
            seconds = self.policy.total_timeout if watch.fired else self.policy.read_timeout
            return FetchTimeout(
                f"请求 {url} 超时（超过 {seconds:g} 秒），已中止 (request timed out after {seconds:g} s)",
                url=url,
            )
        return ConnectionFailed(f"连接 {url} 失败 (connection failed: {exc})", url=url)

    def _follow(self, url: str, *, method: str, started: float, watch: _Watch, **kwargs: Any) -> FetchResult:
        redirects: list[str] = []
        current, body_data, body_json = url, kwargs.pop("data"), kwargs.pop("json")
        headers = kwargs.pop("headers")
        for _hop in range(self.policy.max_redirects + 1):
            response = self._send(current, method, body_data, body_json, headers)
            with _closing(response):
                location = response.headers.get("Location")
                if response.status_code in REDIRECT_STATUSES and location:
                    redirects.append(current)
                    current = check_url(urljoin(current, location))
                    logger.info("redirect %s -> %s", redirects[-1], current)
                    if response.status_code in (301, 302, 303) and method != "HEAD":
                        method, body_data, body_json = "GET", None, None
                    continue
                return self._read(
                    response,
                    url=url,
                    final_url=current,
                    method=method,
                    redirects=tuple(redirects),
                    started=started,
                    watch=watch,
                    **kwargs,
                )
        limit = self.policy.max_redirects
        raise TooManyRedirects(
            f"重定向超过 {limit} 次，已停止 (more than {limit} redirects)",
            url=url,
        )

    def _send(
        self, url: str, method: str, data: Any, json: Any, headers: Mapping[str, str] | None
    ) -> requests.Response:
        host = (urlsplit(url).hostname or "").lower()
        self.rate_limiter.wait(host, self.policy.min_interval)
        request = requests.Request(method, url, data=data, json=json, headers=dict(headers or {}))
        prepared = self.session.prepare_request(request)
        return self.session.send(
            prepared,
            stream=True,
            allow_redirects=False,
            verify=self.policy.verify_tls,
            timeout=(self.policy.connect_timeout, self.policy.read_timeout),
        )

    def _read(
        self,
        response: requests.Response,
        *,
        url: str,
        final_url: str,
        method: str,
        redirects: tuple[str, ...],
        started: float,
        fetched_at: datetime,
        watch: _Watch,
        allow_truncated: bool,
        max_bytes: int,
    ) -> FetchResult:
        peer = _peer(response)
        declared = response.headers.get("Content-Length", "")
        oversize = declared.isdigit() and int(declared) > max_bytes and not allow_truncated
        body = b"" if oversize else None
        truncated = oversize
        if body is None:
            body, truncated = _read_capped(response.iter_content(_CHUNK), max_bytes)
        result = FetchResult(
            url=url,
            final_url=final_url,
            method=method,
            status=response.status_code,
            headers={key.lower(): value for key, value in response.headers.items()},
            content_type=charset.mime_type(response.headers.get("Content-Type")),
            body=body,
            truncated=truncated,
            sha256=hashlib.sha256(body).hexdigest(),
            fetched_at=fetched_at,
            elapsed=round(time.monotonic() - started, 4),
            redirects=redirects,
            peer=peer,
        )
        if truncated and not allow_truncated:
            raise ResponseTooLarge(
                f"响应超过 {max_bytes} 字节上限，已截断 (response larger than the {max_bytes}-byte cap)",
                url=url,
                result=result,
            )
        if watch.fired:
            raise FetchTimeout(
                f"请求 {url} 超时（超过 {self.policy.total_timeout:g} 秒），已中止 "
                f"(request timed out after {self.policy.total_timeout:g} s)",
                url=url,
                result=result,
            )
        logger.info("fetched %s %s -> %s (%d bytes)", method, url, result.status, len(body))
        return result


_REFUSED_ERRNOS = frozenset({errno.ECONNREFUSED})
_NETWORK_ERRNOS = frozenset({errno.ENETUNREACH, errno.EHOSTUNREACH})


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and every exception it wraps (cause, context, urllib3 reason, args)."""
    seen: set[int] = set()
    pending: list[Any] = [exc]
    while pending:
        current = pending.pop(0)
        if not isinstance(current, BaseException) or id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        pending += [current.__cause__, current.__context__, getattr(current, "reason", None)]
        pending += list(current.args)


def _unreachable_reason(exc: BaseException) -> str | None:
    """Why the chain shows the host could not be reached ("dns", "refused", "network"), else None."""
    for current in _chain(exc):
        if isinstance(current, (urllib3_exceptions.NameResolutionError, socket.gaierror, ResolveFailed)):
            return "dns"
        if isinstance(current, ConnectionRefusedError) or getattr(current, "errno", None) in _REFUSED_ERRNOS:
            return "refused"
        if getattr(current, "errno", None) in _NETWORK_ERRNOS:
            return "network"
    return None


def _timed_out(exc: BaseException) -> bool:
    """True when a timeout is somewhere in the exception's chain (urllib3 wraps read timeouts)."""
    return any(
        isinstance(current, (TimeoutError, urllib3_exceptions.TimeoutError)) for current in _chain(exc)
    )


def _read_capped(chunks: Iterator[bytes], max_bytes: int) -> tuple[bytes, bool]:
    """Read chunks until max_bytes; return (body, truncated)."""
    buffer = bytearray()
    for chunk in chunks:
        buffer.extend(chunk)
        if len(buffer) > max_bytes:
            return bytes(buffer[:max_bytes]), True
    return bytes(buffer), False


def _peer(response: requests.Response) -> str:
    """The address the response came from, when the connection still knows it."""
    connection = getattr(response.raw, "_connection", None) or getattr(response.raw, "connection", None)
    return getattr(connection, "peer", "") or ""


@contextmanager
def _closing(response: requests.Response) -> Iterator[requests.Response]:
    try:
        yield response
    finally:
        response.close()
