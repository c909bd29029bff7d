"""The one HTTP client: SSRF guard (after DNS and on every redirect), size cap, timeouts, retries, limits."""

from __future__ import annotations

import socket
import time
from collections import Counter

import pytest

from scrapers.http import (
    AddressGuard,
    BadUrl,
    BlockedAddress,
    FetchTimeout,
    HostRateLimiter,
    HttpClient,
    ResponseTooLarge,
    TooManyRedirects,
    Unreachable,
    block_reason,
)
from tests.fakes.web import SiteServer
from tests.scrapers.conftest import FOOTERS, loopback_policy

REAL_GETADDRINFO = socket.getaddrinfo


@pytest.fixture
def fake_dns(monkeypatch):
    """Map chosen host names to addresses (everything else resolves normally); counts lookups."""
    table: dict[str, list[str]] = {}
    asked: Counter[str] = Counter()

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host in table:
            asked[host] += 1
            addresses = table[host]
            address = addresses[min(asked[host], len(addresses)) - 1] if len(addresses) > 1 else addresses[0]
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return REAL_GETADDRINFO(host, port, family, type, proto, flags)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table, asked


@pytest.fixture
def server():
    with SiteServer(FOOTERS) as site:
        yield site


@pytest.fixture
def second_loopback():
    """A server on 127.0.0.2, so one loopback address can be allowed while 127.0.0.1 is not."""
    with SiteServer(FOOTERS, host="127.0.0.2") as site:
        yield site


def _client(**overrides) -> HttpClient:
    return HttpClient(loopback_policy(**overrides), rate_limiter=HostRateLimiter())


# ------------------------------------------------------------------------------------------------ SSRF
def test_public_looking_name_resolving_to_loopback_is_refused(fake_dns, server):
    table, asked = fake_dns
    table["provider-site.com.cn"] = ["127.0.0.1"]
    port = server.server.server_address[1]
    with _client(allow_cidrs=()) as client, pytest.raises(BlockedAddress) as refused:
        client.fetch(f"http://provider-site.com.cn:{port}/01_utf8_basic.html")
    assert "127.0.0.1" in str(refused.value.message) and "回环地址" in str(refused.value.message)
    assert refused.value.code == "blocked_address"
    assert asked["provider-site.com.cn"] == 1
    assert server.hits["/01_utf8_basic.html"] == 0  # never connected


def test_same_name_is_fetched_when_its_address_is_allow_listed(fake_dns, server):
    table, _ = fake_dns
    table["provider-site.com.cn"] = ["127.0.0.1"]
    port = server.server.server_address[1]
    with _client(allow_cidrs=("127.0.0.1/32",)) as client:
        result = client.fetch(f"http://provider-site.com.cn:{port}/01_utf8_basic.html")
    assert result.status == 200 and result.peer == "127.0.0.1"


def test_redirect_to_loopback_is_refused_when_not_allow_listed(second_loopback, server):
    target = server.url("/01_utf8_basic.html")  # on 127.0.0.1
    with _client(allow_cidrs=("127.0.0.2/32",)) as client:
        assert client.fetch(second_loopback.url("/01_utf8_basic.html")).status == 200
        with pytest.raises(BlockedAddress) as refused:
            client.fetch(second_loopback.url(f"/redirect?to={target}"))
    assert "127.0.0.1" in str(refused.value.message)
    assert second_loopback.hits["/redirect"] == 1
    assert server.hits["/01_utf8_basic.html"] == 0


def test_redirect_to_a_name_resolving_to_a_private_address_is_refused(fake_dns, second_loopback):
    table, asked = fake_dns
    table["intranet.example.com"] = ["10.1.2.3"]
    with _client(allow_cidrs=("127.0.0.2/32",)) as client, pytest.raises(BlockedAddress) as refused:
        client.fetch(second_loopback.url("/redirect?to=http://intranet.example.com/admin"))
    assert "内网地址" in str(refused.value.message) and asked["intranet.example.com"] == 1


def test_one_blocked_address_among_several_refuses_the_host(monkeypatch):
    def getaddrinfo(host, port, *args, **kwargs):
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with pytest.raises(BlockedAddress, match="链路本地地址"):
        AddressGuard().resolve("mixed.example.com", 80)


def test_connection_goes_to_the_checked_address_not_a_second_answer(fake_dns, second_loopback):
    # A rebinding resolver: allowed 127.0.0.2 first, then 127.0.0.1. One resolution per connection,
    # and the socket goes to the address that was checked.
    table, asked = fake_dns
    table["rebind.example.com"] = ["127.0.0.2", "127.0.0.1", "127.0.0.1"]
    port = second_loopback.server.server_address[1]
    with _client(allow_cidrs=("127.0.0.2/32",)) as client:
        result = client.fetch(f"http://rebind.example.com:{port}/01_utf8_basic.html")
    assert result.peer == "127.0.0.2" and asked["rebind.example.com"] == 1


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("10.0.0.8", "private"),
        ("192.168.1.1", "private"),
        ("172.16.0.1", "private"),
        ("169.254.169.254", "link-local"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("100.64.0.1", "not globally routable"),
        ("::1", "loopback"),
        ("fe80::1", "link-local"),
        ("fc00::1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
    ],
)
def test_non_public_addresses_are_named(address, reason):
    import ipaddress

    assert block_reason(ipaddress.ip_address(address))[1] == reason


def test_public_address_passes_and_host_allow_list_admits_private_addresses_by_name():
    import ipaddress

    assert block_reason(ipaddress.ip_address("93.184.216.34")) is None
    guard = AddressGuard(allow_hosts=("*.internal.example", "mirror.example"))
    guard.check_address("a.internal.example", "10.0.0.1", 443)
    guard.check_address("mirror.example", "192.168.1.9", 80)
    guard.check_address("anything.example", "93.184.216.34", 8080)  # public: any port
    with pytest.raises(BlockedAddress):
        guard.check_address("internal.example.evil", "10.0.0.1", 443)


@pytest.mark.parametrize(
    ("address", "reason"),
    [("127.0.0.1", "回环地址"), ("169.254.169.254", "链路本地地址"), ("0.0.0.0", "未指定地址")],
)
def test_allow_listed_host_name_still_has_its_addresses_checked(address, reason):
    guard = AddressGuard(allow_hosts=("mirror.example",))
    with pytest.raises(BlockedAddress, match=reason) as refused:
        guard.check_address("mirror.example", address, 443)
    assert "CIDR 允许列表" in str(refused.value.message)
    AddressGuard(allow_cidrs=(f"{address}/32",), allow_hosts=("mirror.example",)).check_address(
        "mirror.example", address, 443
    )


def test_allow_listed_host_name_is_admitted_on_web_ports_or_the_port_it_names():
    guard = AddressGuard(allow_hosts=("mirror.example", "*.corp.example:8443"))
    with pytest.raises(BlockedAddress, match="只允许端口 80, 443，不允许 6379") as refused:
        guard.check_address("mirror.example", "10.0.0.1", 6379)
    assert "mirror.example:6379" in str(refused.value.message)
    guard.check_address("a.corp.example", "10.0.0.1", 8443)
    with pytest.raises(BlockedAddress, match="只允许端口 8443，"):
        guard.check_address("a.corp.example", "10.0.0.1", 443)


def test_allow_listed_host_resolving_to_loopback_is_never_connected(fake_dns, server):
    table, asked = fake_dns
    table["trusted.example.com"] = ["127.0.0.1"]
    port = server.server.server_address[1]
    client = _client(allow_cidrs=(), allow_hosts=("trusted.example.com",))
    with client, pytest.raises(BlockedAddress, match="回环地址"):
        client.fetch(f"http://trusted.example.com:{port}/01_utf8_basic.html")
    assert asked["trusted.example.com"] == 1
    assert server.hits["/01_utf8_basic.html"] == 0  # never connected


@pytest.mark.parametrize("entry", ["mirror.example:0", "mirror.example:http", "10.0.0.0/8", ":443"])
def test_malformed_allow_host_entries_are_refused_by_the_settings(entry):
    from pydantic import ValidationError

    from app.core.config import Settings

    with pytest.raises(ValidationError, match=r"GPUVET_FETCH_ALLOW_HOSTS|fetch_allow_hosts"):
        Settings(GPUVET_FETCH_ALLOW_HOSTS=f"ok.example,{entry}")


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/", "file:///etc/passwd", "http://", "https://user:pw@example.com/", "example.com"],
)
def test_bad_urls_are_refused_before_any_connection(url):
    with _client() as client, pytest.raises(BadUrl):
        client.fetch(url)


# ------------------------------------------------------------------------------------------------ limits
def test_oversize_body_is_cut_off_with_a_clear_error(server):
    with _client(max_bytes=64 * 1024) as client:
        started = time.monotonic()
        with pytest.raises(ResponseTooLarge) as too_large:
            client.fetch(server.url("/huge?kb=4096"))
    assert time.monotonic() - started < 5
    assert "65536" in str(too_large.value.message)
    partial = too_large.value.result
    assert partial is not None and partial.truncated and len(partial.body) == 64 * 1024


def test_declared_oversize_is_refused_without_reading(server):
    with _client(max_bytes=64 * 1024) as client, pytest.raises(ResponseTooLarge) as too_large:
        client.fetch(server.url("/huge-declared"))
    assert too_large.value.result.body == b""


def test_oversize_can_be_kept_truncated_when_asked(server):
    with _client(max_bytes=4096) as client:
        result = client.fetch(server.url("/huge?kb=64"), allow_truncated=True)
    assert result.truncated and len(result.body) == 4096


def test_slow_drip_is_cut_off_at_the_total_deadline(server):
    with _client(total_timeout=1.0, read_timeout=3.0) as client:
        started = time.monotonic()
        with pytest.raises(FetchTimeout) as slow:
            client.fetch(server.url("/drip?n=100&every=0.1"))
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 3.0
    assert "1 s" in str(slow.value.message)


def test_server_that_does_not_answer_hits_the_read_timeout(server):
    with _client(read_timeout=0.5, total_timeout=5.0, retries=0) as client:
        started = time.monotonic()
        with pytest.raises(FetchTimeout):
            client.fetch(server.url("/slow?s=3"))
    assert time.monotonic() - started < 2.5


def test_retries_with_backoff_on_503_then_success(server):
    with _client(retries=2) as client:
        result = client.fetch(server.url("/flaky?fail=2&code=503"))
    assert result.status == 200 and server.hits["/flaky"] == 3


def test_retries_give_up_and_return_the_last_status(server):
    with _client(retries=1) as client:
        result = client.fetch(server.url("/flaky?fail=5&code=429"))
    assert result.status == 429 and server.hits["/flaky"] == 2


def test_redirect_loop_stops(server):
    with _client(max_redirects=3) as client, pytest.raises(TooManyRedirects):
        client.fetch(server.url("/loop"))
    assert server.hits["/loop"] == 4


def test_redirects_are_recorded_and_user_agent_is_real(server):
    with _client() as client:
        result = client.fetch(server.url("/redirect?to=/echo"))
    assert result.final_url == server.url("/echo") and result.redirects == (server.url("/redirect?to=/echo"),)
    headers = {key.lower(): value for key, value in __import__("json").loads(result.body).items()}
    assert headers["user-agent"].startswith("Mozilla/5.0") and "gpuvet" in headers["user-agent"]
    assert result.sha256 and len(result.sha256) == 64 and result.content_type == "application/json"


def test_requests_to_one_host_are_spaced_by_the_rate_limit(server):
    with _client(min_interval=0.3) as client:
        started = time.monotonic()
        for _ in range(3):
            client.fetch(server.url("/01_utf8_basic.html"))
    assert time.monotonic() - started >= 0.6


# ------------------------------------------------------------------------------------------------ unreachable
@pytest.fixture
def closed_port():
    """A loopback port nothing listens on: bound, then closed, so a connect is refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture
def silent_port():
    """A loopback port that accepts connections (backlog) but never answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    yield sock.getsockname()[1]
    sock.close()


def test_refused_connection_is_unreachable_not_a_timeout(closed_port):
    with _client(retries=1) as client, pytest.raises(Unreachable) as refused:
        client.fetch(f"http://127.0.0.1:{closed_port}/")
    assert not isinstance(refused.value, FetchTimeout)
    assert refused.value.reason == "refused" and refused.value.code == "unreachable_refused"
    assert "连接被拒绝" in str(refused.value.message) and "refused" in str(refused.value.message)
    assert "超时" not in str(refused.value.message) and "timed out" not in str(refused.value.message)
    assert "by hand" in str(refused.value.message)


def test_unresolvable_name_is_unreachable_dns(monkeypatch):
    def getaddrinfo(host, *_args, **_kwargs):
        if str(host).endswith(".invalid"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return REAL_GETADDRINFO(host, *_args, **_kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with _client() as client, pytest.raises(Unreachable) as dns:
        client.fetch("http://gpuvet-test.invalid/")
    assert dns.value.reason == "dns" and dns.value.code == "unreachable_dns"
    assert "域名无法解析" in str(dns.value.message) and "does not resolve" in str(dns.value.message)


def test_silent_listener_is_still_a_timeout(silent_port):
    with (
        _client(read_timeout=0.5, total_timeout=5.0, retries=0) as client,
        pytest.raises(FetchTimeout) as slow,
    ):
        client.fetch(f"http://127.0.0.1:{silent_port}/")
    assert not isinstance(slow.value, Unreachable) and slow.value.code == "timeout"
