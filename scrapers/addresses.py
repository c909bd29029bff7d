"""Outbound address policy shared by the scraper (scrapers/http.py) and trial-server SSH (services/trials).

A host name is resolved once, every address it resolves to is checked, and the caller connects to a checked
address. Non-public addresses (loopback, link-local, private, ...) are refused unless an allow-listed CIDR
contains them. An allow-listed host name (scraper only) admits private and other non-global unicast
addresses, never loopback, link-local, unspecified, multicast or reserved ones (those need a CIDR), and
only on the web ports 80 and 443 unless its entry names a port ("mirror.example:8443").
Messages are in one language (flask_babel gettext: the request's language, Chinese outside a request).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_BLOCK_REASONS: tuple[tuple[str, Any, str], ...] = (
    ("is_unspecified", _l("未指定地址"), "unspecified"),
    ("is_loopback", _l("回环地址"), "loopback"),
    ("is_link_local", _l("链路本地地址"), "link-local"),
    ("is_multicast", _l("组播地址"), "multicast"),
    ("is_private", _l("内网地址"), "private"),
    ("is_reserved", _l("保留地址"), "reserved"),
)
# Reasons an allow-listed host name may override; the others need an allow-listed CIDR.
HOST_ADMITS = frozenset({"private", "not globally routable"})
WEB_PORTS = frozenset({80, 443})


class AddressRefused(Exception):
    """The host resolves to an address the policy refuses (message in the current language)."""

    def __init__(self, message: str, *, host: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.host = host


class ResolveFailed(Exception):
    """The host name does not resolve (message in the current language)."""

    def __init__(self, message: str, *, host: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.host = host


def block_reason(address: IPAddress) -> tuple[str, str] | None:
    """(label in the current language, English code) naming why an address is not public; None if public."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    for attribute, zh, en in _BLOCK_REASONS:
        if getattr(address, attribute):
            return str(zh), en
    if not address.is_global:
        return _("非公网地址"), "not globally routable"
    return None


def _host_entry(entry: str) -> tuple[str, int | None]:
    """(name or '*.suffix', port or None) from an allow-list entry 'name[:port]'; ValueError if bad."""
    entry = entry.strip().lower()
    name, sep, port = entry.rpartition(":")
    if not sep:
        name, port = entry, ""
    elif not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(_("%(entry)s：端口须为 1-65535", entry=repr(entry)))
    name = name.rstrip(".")
    if not name or ":" in name or "/" in name:
        raise ValueError(_("%(entry)s：须为主机名或 *.后缀，可加 :端口", entry=repr(entry)))
    return name, int(port) if port else None


def parse_host_entries(entries: Iterable[str]) -> tuple[tuple[str, int | None], ...]:
    """Allow-listed host entries as (name, port or None); ValueError names a malformed one."""
    return tuple(_host_entry(entry) for entry in entries if entry.strip())


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

    def refusal(self, host: str, address: str, port: int) -> str | None:
        """Why connecting to `address` (which `host` resolved to) on `port` is refused, or None."""
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        reason = block_reason(ip)
        if reason is None or any(ip in network for network in self.allow_networks):
            return None
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
