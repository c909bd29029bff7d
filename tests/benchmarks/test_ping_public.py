"""Real ping outputs published as test fixtures by the jc project (tests/fixtures/<system>/ping*.out).

Each expected figure was read off the file's summary lines (quoted in the comments).
"""

from __future__ import annotations

import pytest

from benchmarks.probes import parse
from tests.benchmarks.conftest import DATA
from tests.benchmarks.test_parsers import one, values

PUBLIC = DATA / "ping_public"


def ping(name: str) -> list:
    """The ping parser's samples of a recorded public output."""
    return parse("ping", (PUBLIC / name).read_text())


@pytest.mark.parametrize(
    ("name", "loss", "rtt", "header"),
    [
        # busybox: "4 packets transmitted, 4 packets received, 0% packet loss", min/avg/max only
        (
            "alpine-linux-3.13_ping-hostname.out",
            0,
            (1.281, 1.345, 1.408, None),
            ("google.com", "142.250.125.102"),
        ),
        # iputils 5% loss: "20 packets transmitted, 19 received, 5% packet loss"
        (
            "fedora32_ping-hostname-O.out",
            5,
            (24.317, 61.577, 274.537, 69.940),
            ("turner-tls.map.fastly.net", "151.101.129.67"),
        ),
        # iputils ping6: "PING www.cnn.com(2a04:4e42:2d::323 (2a04:4e42:2d::323)) 56 data bytes"
        (
            "centos-7.7_ping6-hostname-O-p.out",
            0,
            (30.757, 37.455, 42.652, 3.338),
            ("www.cnn.com", "2a04:4e42:2d::323"),
        ),
        # iputils ping6 by address with a source: "PING 2001:0db8::1(2001:0db8::1) from 2001:0db8::2 : ..."
        (
            "ubuntu-22.04_ping6-ip-source-ip.out",
            0,
            (11.021, 12.204, 13.388, 1.183),
            ("2001:0db8::1", "2001:0db8::1"),
        ),
        # FreeBSD ping6: "PING6(56=40+8+8 bytes) ::1 --> ::1", "round-trip min/avg/max/std-dev = ..."
        ("freebsd12_ping6-ip.out", 0, (0.034, 0.044, 0.053, 0.008), ("::1", "::1")),
        # macOS ping6 to a multicast group: "+58 duplicates, 0.0% packet loss", std-dev
        (
            "osx-10.14.6_ping6-ip-dup.out",
            0,
            (0.302, 180.260, 749.182, 250.393),
            ("ff02::1%en0", "ff02::1%en0"),
        ),
    ],
)
def test_public_ping_summaries(name, loss, rtt, header):
    samples = ping(name)
    assert one(samples, "packet_loss") == loss
    minimum, average, maximum, deviation = rtt
    assert one(samples, "rtt_min") == pytest.approx(minimum)
    assert one(samples, "rtt_avg") == pytest.approx(average)
    assert one(samples, "rtt_max") == pytest.approx(maximum)
    assert values(samples, "rtt_mdev") == ([] if deviation is None else [pytest.approx(deviation)])
    assert (samples[0].metadata["destination"], samples[0].metadata["address"]) == header


def test_duplicates_are_counted_apart_from_replies():
    # "2 packets transmitted, 2 received, +19 duplicates, 0% packet loss, time 1013ms" (broadcast address)
    samples = ping("centos-7.7_ping-ip-dup.out")
    assert one(samples, "packet_loss") == 0
    assert samples[0].metadata["packets_received"] == 2
    assert samples[0].metadata["duplicates"] == 19
    assert one(samples, "rtt_max") == pytest.approx(1276.448)


def test_unreachable_with_icmp_errors():
    # "3 packets transmitted, 0 received, +3 errors, 100% packet loss, time 2049ms"
    samples = ping("ubuntu-22.04_ping-dest-unreachable.out")
    assert one(samples, "packet_loss") == 100
    assert samples[0].metadata["errors"] == 3
    assert not values(samples, "rtt_avg")


def test_macos_unreachable_with_icmp_dumps_between_timeouts():
    # "8 packets transmitted, 0 packets received, 100.0% packet loss", no round-trip line
    samples = ping("osx-10.14.6_ping-ip-unknown-errors.out")
    assert one(samples, "packet_loss") == 100
    assert samples[0].metadata["destination"] == "192.168.1.220"
    assert samples[0].metadata["packets_transmitted"] == 8
