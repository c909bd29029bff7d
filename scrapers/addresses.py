"""Outbound address policy of the scraper (scrapers/http.py), webhooks and trial servers (services/trials).

A host name is resolved once, every address it resolves to is checked, and the caller connects to a checked
address. Non-public addresses (loopback, link-local, private, documentation, ...) are refused unless an
allow-listed CIDR contains them. An allow-listed host name (scraper only) admits private and other non-global
unicast addresses, never loopback, link-local, unspecified, multicast, reserved or "this network" ones (those
need a CIDR), and only on the web ports 80 and 443 unless its entry names a port ("mirror.example:8443").

An IPv6 address that carries an IPv4 address is judged by that IPv4 address, where its packets end up:
IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96 (RFC 6052), 6to4 2002::/16, and Teredo 2001::/32 (both the
server and the de-obfuscated client address must pass). The carried address is refused exactly as the plain
IPv4 address would be, the message naming it, and admitted by the same allow-list entries: an IPv4 CIDR
containing it ("10.0.0.0/8" admits 64:ff9b::10.0.0.5 reached through a site's NAT64); an IPv6 CIDR never
admits these forms. Two forms are judged both by the IPv4 address they carry and as IPv6 addresses (reserved
ones, so they also need an IPv6 CIDR): the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215, read with the /96
layout, the IPv4 address in the last 32 bits) and the deprecated IPv4-compatible ::a.b.c.d. ISATAP interface
identifiers are not read: their IPv4 address is reached by the router of the address's own prefix, which is
judged. Ranges are named for what they are (documentation, benchmarking, ...); "private" means RFC 1918 and
unique-local (fc00::/7) addresses only.
Messages are benchmarks.messages.Message values: Chinese as str, shown in the reader's language by the app.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from typing import Any

from app.core.allow_lists import parse_host_entries
from benchmarks.messages import Message
from benchmarks.messages import message as _

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def _in_networks(*cidrs: str) -> Callable[[IPAddress], bool]:
    """A test: whether an address lies in one of `cidrs`."""
    networks = tuple(ipaddress.ip_network(cidr) for cidr in cidrs)
    return lambda address: any(address in network for network in networks)


def _has(attribute: str) -> Callable[[IPAddress], bool]:
    """A test: whether an address has the ipaddress property `attribute`."""
    return lambda address: bool(getattr(address, attribute))


# (test, label, English code), first match wins; an address none matches is refused when not global.
_BLOCK_REASONS: tuple[tuple[Callable[[IPAddress], bool], Any, str], ...] = (
    (_has("is_unspecified"), _("未指定地址"), "unspecified"),
    (_has("is_loopback"), _("回环地址"), "loopback"),
    (_has("is_link_local"), _("链路本地地址"), "link-local"),
    (_has("is_multicast"), _("组播地址"), "multicast"),
    (
        _in_networks("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32", "3fff::/20"),
        _("文档示例地址"),
        "documentation",
    ),
    (_in_networks("198.18.0.0/15", "2001:2::/48"), _("基准测试专用地址"), "benchmarking"),
    (_in_networks("0.0.0.0/8"), _("“本网络”地址"), "this network"),
    (_in_networks("255.255.255.255/32"), _("广播地址"), "broadcast"),
    (_has("is_reserved"), _("保留地址"), "reserved"),
    (_in_networks("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"), _("内网地址"), "private"),
)
# Reasons an allow-listed host name may override; the others need an allow-listed CIDR.
HOST_ADMITS = frozenset({"private", "not globally routable", "documentation", "benchmarking"})
WEB_PORTS = frozenset({80, 443})

NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def carried_ipv4(address: IPAddress) -> tuple[ipaddress.IPv4Address, ...]:
    """The IPv4 addresses an IPv6 address carries (mapped, NAT64, 6to4, Teredo, IPv4-compatible), or ()."""
    if not isinstance(address, ipaddress.IPv6Address):
        return ()
    if address.ipv4_mapped is not None:
        return (address.ipv4_mapped,)
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo
    in_compatible = address in IPV4_COMPATIBLE and int(address) > 1  # not :: nor ::1
    if address in NAT64 or address in NAT64_LOCAL or in_compatible:
        return (ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF),)
    return ()


def judged_as(address: IPAddress) -> tuple[IPAddress, ...]:
    """The addresses the policy judges `address` by: the IPv4 addresses it carries, else itself."""
    carried = carried_ipv4(address)
    if not carried:
        return (address,)
    if address in NAT64_LOCAL or address in IPV4_COMPATIBLE:
        return (*carried, address)
    return carried


def _own_reason(address: IPAddress) -> tuple[Message, str] | None:
    """(label, English code) of why this very address is not public, its carried addresses aside."""
    for test, label, code in _BLOCK_REASONS:
        if test(address):
            return label, code
    if not address.is_global:
        return _("非公网地址"), "not globally routable"
    return None


def _label(address: IPAddress, part: IPAddress, label: Message) -> Message:
    """The label, naming the carried IPv4 address when that (not `address` itself) is the one refused."""
    if part == address:
        return label
    return _("内嵌 IPv4 地址 %(ip)s：%(kind)s", ip=part, kind=label)


def block_reason(address: IPAddress) -> tuple[Message, str] | None:
    """(label for the reader, English code) naming why an address is not public; None if public."""
    for part in judged_as(address):
        reason = _own_reason(part)
        if reason is not None:
            return _label(address, part, reason[0]), reason[1]
    return None


class AddressRefused(Exception):
    """The host resolves to an address the policy refuses (`message`: a Message for the reader)."""

    def __init__(self, message: Message, *, host: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.host = host


class ResolveFailed(Exception):
    """The host name does not resolve (`message`: a Message for the reader)."""

    def __init__(self, message: Message, *, host: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.host = host


class AddressPolicy:
    """Which addresses (and, for allow-listed names, ports) outbound connections may reach."""

    def __init__(self, allow_cidrs: Iterable[str] = (), allow_hosts: Iterable[str] = ()) -> None:
        self.allow_networks = tuple(ipaddress.ip_network(cidr, strict=False) for cidr in allow_cidrs)
        self.host_entries = parse_host_entries(allow_hosts)

    def host_ports(self, host: str) -> frozenset[int] | None:
        """Ports an allow-listed host name is admitted on, or None when the name is not allow-listed."""
        host = host.lower().rstrip(".")
        ports: set[int] = set()
        listed = False
        for name, port in self.host_entries:
            if name == host or (name.startswith("*.") and host.endswith(name[1:])):
                listed = True
                ports.update({port} if port else WEB_PORTS)
        return frozenset(ports) if listed else None

    def host_allowed(self, host: str) -> bool:
        """True when the host name itself is on the allow-list (exact or '*.suffix')."""
        return self.host_ports(host) is not None

    def refusal(self, host: str, address: str, port: int) -> Message | None:
        """Why connecting to `address` (which `host` resolved to) on `port` is refused, or None."""
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        for part in judged_as(ip):
            reason = _own_reason(part)
            if reason is not None and not any(part in network for network in self.allow_networks):
                return self._refusal_message(host, ip, (_label(ip, part, reason[0]), reason[1]), port)
        return None

    def _refusal_message(
        self, host: str, ip: IPAddress, reason: tuple[Message, str], port: int
    ) -> Message | None:
        """The message refusing `ip` for `reason`, or None when an allow-listed host name admits it."""
        label, en = reason
        ports = self.host_ports(host)
        if ports is not None and en in HOST_ADMITS:
            if port in ports:
                return None
            listed = ", ".join(str(p) for p in sorted(ports))
            return _(
                "%(host)s 在允许列表中，但只允许端口 %(listed)s，不允许 %(port)s；"
                "如需此端口，请写成 %(host)s:%(port)s",
                host=host,
                listed=listed,
                port=port,
            )
        if ports is not None:
            return _(
                "%(host)s 解析到 %(ip)s（%(kind)s）；"
                "主机名允许列表只放行内网地址，此类地址须在 CIDR 允许列表中",
                host=host,
                ip=ip,
                kind=label,
            )
        return _(
            "%(host)s 解析到 %(ip)s（%(kind)s），出于安全原因拒绝访问；如确需访问，请在设置中加入允许列表",
            host=host,
            ip=ip,
            kind=label,
        )

    def check_address(self, host: str, address: str, port: int) -> None:
        """Raise AddressRefused unless `address` on `port` is admitted for `host`."""
        message = self.refusal(host, address, port)
        if message is not None:
            raise AddressRefused(message, host=host)

    def resolve(
        self, host: str, port: int, family: int = socket.AF_UNSPEC
    ) -> list[tuple[int, tuple[Any, ...]]]:
        """Resolve host once; return its (family, sockaddr) pairs, every one checked (one refused: raise)."""
        host = host.strip("[]")
        try:
            infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise ResolveFailed(
                _("无法解析域名 %(host)s（%(problem)s）", host=host, problem=exc), host=host
            ) from exc
        if not infos:
            raise ResolveFailed(_("域名 %(host)s 没有地址", host=host), host=host)
        checked = []
        for found_family, _type, _proto, _name, sockaddr in infos:
            self.check_address(host, sockaddr[0], port)
            checked.append((found_family, sockaddr))
        return checked
