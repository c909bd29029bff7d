"""IPv6 forms carrying an IPv4 address are judged by that address; special ranges named for what they are."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from flask_babel import force_locale

from app.core.config import Settings
from app.core.errors import InvalidInput
from app.core.i18n import localized
from app.notify import webhooks as notify_webhooks
from scrapers.addresses import AddressPolicy, block_reason
from scrapers.http import AddressGuard, BlockedAddress, HostRateLimiter, HttpClient
from tests.fakes.web import SiteServer
from tests.scrapers.conftest import FOOTERS, loopback_policy

REAL_GETADDRINFO = socket.getaddrinfo
TEREDO_SERVER = "65.54.227.120"


def teredo(server: str, client: str) -> str:
    """A Teredo address naming `server` and `client` (the client obfuscated, as RFC 4380 writes it)."""
    value = (0x2001_0000 << 96) | (int(ipaddress.IPv4Address(server)) << 64) | (0x8000_63BF << 32)
    value |= int(ipaddress.IPv4Address(client)) ^ 0xFFFF_FFFF
    return str(ipaddress.IPv6Address(value))


def test_the_teredo_helper_writes_what_ipaddress_reads():
    server, client = ipaddress.IPv6Address(teredo(TEREDO_SERVER, "10.0.0.5")).teredo
    assert (str(server), str(client)) == (TEREDO_SERVER, "10.0.0.5")


# (IPv6 address, the IPv4 address it carries, the reason that IPv4 address is refused for)
CARRYING_REFUSED = [
    ("2002:a00:5::", "10.0.0.5", "private"),  # 6to4
    ("2002:7f00:1::1", "127.0.0.1", "loopback"),
    ("2002:a9fe:a9fe::", "169.254.169.254", "link-local"),
    ("64:ff9b::10.0.0.5", "10.0.0.5", "private"),  # NAT64, well-known prefix
    ("64:ff9b::127.0.0.1", "127.0.0.1", "loopback"),
    ("64:ff9b::169.254.169.254", "169.254.169.254", "link-local"),
    ("64:ff9b:1::192.168.1.9", "192.168.1.9", "private"),  # NAT64, local-use prefix
    (teredo(TEREDO_SERVER, "10.0.0.5"), "10.0.0.5", "private"),  # Teredo client
    (teredo("127.0.0.1", "8.8.8.8"), "127.0.0.1", "loopback"),  # Teredo server
    ("::127.0.0.2", "127.0.0.2", "loopback"),  # IPv4-compatible (deprecated)
    ("::ffff:10.0.0.5", "10.0.0.5", "private"),  # IPv4-mapped
]


@pytest.mark.parametrize(("address", "carried", "reason"), CARRYING_REFUSED)
def test_a_carried_ipv4_address_is_refused_as_the_plain_one_and_named(address, carried, reason):
    label, code = block_reason(ipaddress.ip_address(address))
    assert code == reason == block_reason(ipaddress.ip_address(carried))[1]
    assert str(label).startswith(f"内嵌 IPv4 地址 {carried}：")
    message = str(AddressPolicy().refusal("hooks.example.cn", address, 443))
    assert f"解析到 {ipaddress.ip_address(address)}（内嵌 IPv4 地址 {carried}：" in message


@pytest.mark.parametrize(
    "address", ["2002:808:808::", "64:ff9b::8.8.8.8", teredo(TEREDO_SERVER, "8.8.8.8"), "::ffff:8.8.8.8"]
)
def test_a_form_carrying_a_public_address_is_judged_as_that_address(address):
    assert block_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize("address", ["64:ff9b:1::8.8.8.8", "::8.8.8.8"])
def test_local_use_nat64_and_ipv4_compatible_forms_stay_reserved_ipv6_addresses(address):
    assert block_reason(ipaddress.ip_address(address))[1] == "reserved"


@pytest.mark.parametrize(
    "address",
    ["64:ff9b::10.0.0.5", "2002:a00:5::", "::ffff:10.0.0.5", teredo(TEREDO_SERVER, "10.0.0.5")],
)
def test_an_ipv4_cidr_admits_the_forms_carrying_an_address_it_contains(address):
    AddressPolicy(allow_cidrs=("10.0.0.0/8",)).check_address("mirror.example", address, 443)


def test_an_ipv6_cidr_does_not_admit_a_carried_address_and_both_are_needed_where_both_are_judged():
    everything_v6 = AddressPolicy(allow_cidrs=("::/0",))
    assert "回环地址" in str(everything_v6.refusal("x.example", "2002:7f00:1::", 80))
    assert "内网地址" in str(everything_v6.refusal("x.example", "64:ff9b::10.0.0.5", 80))
    intranet = AddressPolicy(allow_cidrs=("10.0.0.0/8",))
    assert "保留地址" in str(intranet.refusal("x.example", "64:ff9b:1::10.0.0.5", 80))
    both = AddressPolicy(allow_cidrs=("10.0.0.0/8", "64:ff9b:1::/48"))
    assert both.refusal("x.example", "64:ff9b:1::10.0.0.5", 80) is None


def test_an_allow_listed_host_name_admits_a_carried_private_address_but_never_loopback():
    guard = AddressGuard(allow_hosts=("mirror.example",))
    guard.check_address("mirror.example", "64:ff9b::10.0.0.5", 443)
    with pytest.raises(BlockedAddress, match="回环地址") as refused:
        guard.check_address("mirror.example", "2002:7f00:1::", 443)
    assert "CIDR 允许列表" in str(refused.value.message)


@pytest.fixture
def ipv6_dns(monkeypatch):
    """Map chosen host names to IPv6 addresses (everything else resolves normally)."""
    table: dict[str, str] = {}

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host in table:
            return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (table[host], port, 0, 0))]
        return REAL_GETADDRINFO(host, port, family, type, proto, flags)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table


def test_the_scraper_refuses_a_name_resolving_to_6to4_of_loopback_without_connecting(ipv6_dns):
    ipv6_dns["provider-site.com.cn"] = "2002:7f00:1::"
    with SiteServer(FOOTERS) as site:
        port = site.server.server_address[1]
        client = HttpClient(loopback_policy(allow_cidrs=()), rate_limiter=HostRateLimiter())
        with client, pytest.raises(BlockedAddress) as refused:
            client.fetch(f"http://provider-site.com.cn:{port}/01_utf8_basic.html")
        assert "内嵌 IPv4 地址 127.0.0.1：回环地址" in str(refused.value.message)
        assert site.hits["/01_utf8_basic.html"] == 0


@pytest.mark.parametrize(
    ("url", "carried"),
    [
        ("http://[2002:a00:5::]/hook", "10.0.0.5"),
        ("https://[64:ff9b::a9fe:a9fe]/latest/meta-data", "169.254.169.254"),
        (f"http://[{teredo(TEREDO_SERVER, '192.168.0.7')}]:8080/hook", "192.168.0.7"),
        ("https://hooks.example.cn/hook", "127.0.0.1"),  # resolves to 64:ff9b::7f00:1 (below)
    ],
)
def test_webhook_urls_whose_host_carries_a_refused_address_are_refused(ipv6_dns, url, carried):
    ipv6_dns["hooks.example.cn"] = "64:ff9b::7f00:1"
    with pytest.raises(InvalidInput) as refused:
        notify_webhooks.check_webhook_url(url, Settings())
    (error,) = refused.value.errors
    assert error.field == "url" and f"内嵌 IPv4 地址 {carried}：" in str(error.message)
    allowed = Settings(GPUVET_FETCH_ALLOW_CIDRS=f"{carried}/32")
    assert notify_webhooks.check_webhook_url(url, allowed) == url


# (address, English code, Chinese label): special ranges are not called private
NAMED_RANGES = [
    ("192.0.2.10", "documentation", "文档示例地址"),
    ("198.51.100.7", "documentation", "文档示例地址"),
    ("203.0.113.9", "documentation", "文档示例地址"),
    ("2001:db8::1", "documentation", "文档示例地址"),
    ("3fff::1", "documentation", "文档示例地址"),
    ("198.18.0.1", "benchmarking", "基准测试专用地址"),
    ("2001:2::1", "benchmarking", "基准测试专用地址"),
    ("0.1.2.3", "this network", "“本网络”地址"),
    ("255.255.255.255", "broadcast", "广播地址"),
    ("240.0.0.1", "reserved", "保留地址"),
    ("192.0.0.1", "not globally routable", "非公网地址"),
    ("10.0.0.5", "private", "内网地址"),
    ("fd12::1", "private", "内网地址"),
]


@pytest.mark.parametrize(("address", "code", "label"), NAMED_RANGES)
def test_special_ranges_are_named_for_what_they_are(address, code, label):
    found, found_code = block_reason(ipaddress.ip_address(address))
    assert (str(found), found_code) == (label, code)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_a_documentation_address_is_named_so_in_english(app):
    with app.test_request_context("/"), force_locale("en"):
        message = localized(AddressPolicy().refusal("docs.example", "192.0.2.10", 443))
        carried = localized(AddressPolicy().refusal("docs.example", "2002:c000:20a::", 443))
    assert "(documentation address)" in message and "private" not in message
    assert "(embedded IPv4 address 192.0.2.10: documentation address)" in carried


def test_an_allow_listed_host_name_admits_documentation_but_not_this_network_addresses():
    guard = AddressGuard(allow_hosts=("mirror.example",))
    guard.check_address("mirror.example", "192.0.2.10", 443)
    with pytest.raises(BlockedAddress, match="“本网络”地址"):
        guard.check_address("mirror.example", "0.1.2.3", 443)
